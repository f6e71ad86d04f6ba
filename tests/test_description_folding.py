"""A description folded over several lines in tools.yaml: YAML joins the lines with a space,
which between two Chinese characters is a typo nobody wrote. Exactly those go."""

import pytest


@pytest.mark.parametrize("yaml_description,expected", [
    (">\n      查询订单的状态、\n      是否发货或物流单号。\n", "查询订单的状态、是否发货或物流单号。"),
    (">-\n      订单的状态、\n      是否发货。Use when\n      asked.\n", "订单的状态、是否发货。Use when asked."),
    ("查询订单的状态、\n      是否发货", "查询订单的状态、是否发货"),                     # plain, folded
    ("'查询订单的状态，\n      是否发货'", "查询订单的状态，是否发货"),                   # quoted, folded
    (">\n      当用户询问订单时\n      use it: 中文\n      and English.\n",
     "当用户询问订单时 use it: 中文 and English."),                      # a Latin side keeps its space
    ("你好 世界。", "你好 世界。"),                                         # a space the author wrote
    (">\n      第一段。\n\n      第二段。\n", "第一段。\n第二段。"),             # a blank line is a newline
    ("|\n      第一行\n      第二行\n", "第一行\n第二行"),                    # literal: kept as written
    ('"查询\\u8ba2单的状态、\n      是否发货"', "查询订单的状态、 是否发货"),     # escapes: left alone
])
def test_folded_chinese_gets_no_stray_space(tmp_path, yaml_description, expected):
    from agentdbg.toolspec import load_tools

    path = tmp_path / "tools.yaml"  # the description's lines are indented 6, under "    description"
    path.write_text("version: 1\ntools:\n  - name: t\n    description: " + yaml_description.rstrip("\n")
                    + "\n    handler: {fixture: {ok: true}}\n", encoding="utf-8")
    assert load_tools(path).tools[0].description == expected


def test_the_bundled_sample_reads_without_the_stray_space(sample_tools):
    assert "的状态、是否发货" in sample_tools.get("query_order").description
    assert "、 " not in " ".join(t.description for t in sample_tools.tools)


def test_a_parameters_folded_description_gets_no_stray_space(tmp_path):
    from agentdbg.toolspec import load_tools

    path = tmp_path / "tools.yaml"
    path.write_text("""version: 1
tools:
  - name: search_books
    description: 按书名或作者搜索馆藏。
    parameters:
      type: object
      properties:
        query:
          type: string
          description: 书名
            或作者
        filters:
          type: object
          properties:
            lang: {type: string, description: "语言，
              例如 zh"}
    handler: {fixture: {ok: true}}
""", encoding="utf-8")
    props = load_tools(path).tools[0].parameters["properties"]
    assert props["query"]["description"] == "书名或作者"
    assert props["filters"]["properties"]["lang"]["description"] == "语言，例如 zh"
