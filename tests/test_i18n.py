"""The message catalog: complete for every text the code marks, read as gettext reads it, one
file per language; and the line breaking that Chinese needs."""

import itertools
import re
import sys

import pytest
from rich.console import Console
from support import ROOT

from agentdbg import i18n
from agentdbg.render.wrap import Paragraph, break_offsets, wrap_plain

sys.path.insert(0, str(ROOT / "scripts"))


def test_every_text_the_code_marks_is_in_every_catalog():
    import catalog

    problems: list[str] = []
    pot = catalog.template(problems)
    assert len(pot) > 300
    assert not problems        # no marked call holds an f-string (Babel skips it: never translated)
    for path in sorted(catalog.LOCALE.glob("*.po")):
        lacking = catalog.missing(pot, catalog.read(path))
        assert not lacking, f"{path.name} does not translate: {lacking[:5]}"


def test_the_catalog_check_fails_on_a_marked_f_string(tmp_path):
    import catalog
    from babel.messages.catalog import Catalog

    code = tmp_path / "pkg"
    code.mkdir()
    (code / "m.py").write_text('def f(n):\n    print(_("{n} files").format(n=n))\n'
                               '    print(_(f"{n} folders"))\n', encoding="utf-8")
    problems: list[str] = []
    found = Catalog()
    catalog.marked(code, found, problems)
    assert [m.id for m in found if m.id] == ["{n} files"]
    assert len(problems) == 1 and "m.py:3: warning: Skipping f-string" in problems[0]


def test_a_field_of_the_wrong_kind_names_the_value_in_the_chosen_language():
    from agentdbg.transcript.events import _said

    said = _said("Expected `int`, got `object` - at `$.seq`", {"seq": {"a": 1}})
    assert str(said) == "field 'seq' must be an integer, got an object"
    i18n.use("zh")
    try:
        assert "对象" in i18n.tr(said) and "object" not in i18n.tr(said)
    finally:
        i18n.use("en")


def test_our_reader_reads_a_catalog_as_babel_does():
    from babel.messages.pofile import read_po

    path = i18n.LOCALE_DIR / "zh.po"
    with path.open("rb") as fh:
        babel = {(m.context, m.id[0] if m.pluralizable else m.id):   # a plural: its singular
                 m.string[0] if m.pluralizable else m.string for m in read_po(fh) if m.id and not m.fuzzy}
    ours = {k: v[0] for k, v in i18n.read_po(path.read_text(encoding="utf-8")).items() if k[1]}
    assert ours == babel


def test_a_translation_keeps_every_placeholder_of_its_text():
    for (_ctx, msgid), strs in i18n.read_po((i18n.LOCALE_DIR / "zh.po").read_text("utf-8")).items():
        for s in strs:
            if s:
                assert sorted(re.findall(r"\{(\w*)\}", msgid)) == sorted(re.findall(r"\{(\w*)\}", s)), msgid


def test_protocol_words_stay_english_in_chinese():
    i18n.use("zh")
    said = i18n._("The model asked for {k} call(s) ({names}). The app has appended that assistant "
                  "message first; now it validates and runs the calls and answers each with a role "
                  "\"tool\" message carrying its own tool_call_id.")
    assert "assistant" in said and "tool_call_id" in said and 'role "tool"' in said
    # the tools narration says once how the calls run: no "one by one" before "at the same time"
    assert "逐个" not in said


def test_a_third_language_is_one_file(tmp_path, monkeypatch):
    (tmp_path / "zh.po").write_text((i18n.LOCALE_DIR / "zh.po").read_text("utf-8"), encoding="utf-8")
    (tmp_path / "fr.po").write_text(
        'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n'
        'msgid "model: "\nmsgstr "modèle : "\n\n'
        'msgid "{n} result(s)"\nmsgid_plural "{n} results"\nmsgstr[0] "{n} résultat"\nmsgstr[1] "{n} résultats"\n\n'
        '#, fuzzy\nmsgid "tools: "\nmsgstr "outils (pas encore relu) : "\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.catalog.cache_clear()
    try:
        assert i18n.languages() == ["en", "fr", "zh"]
        i18n.use("fr")
        assert i18n._("model: ") == "modèle : "
        assert i18n._("tools: ") == "tools: "              # fuzzy: not used, as gettext does
        assert i18n._("not in the catalog") == "not in the catalog"   # English when untranslated
        assert i18n.ngettext("{n} result(s)", "{n} results", 1) == "{n} résultat"
        assert i18n.ngettext("{n} result(s)", "{n} results", 2) == "{n} résultats"
        with pytest.raises(ValueError, match="no language 'de'; one of en, fr, zh"):
            i18n.use("de")
    finally:
        i18n.catalog.cache_clear()


def test_a_broken_catalog_line_is_named():
    with pytest.raises(ValueError, match="line 2: not PO syntax"):
        i18n.read_po('msgid "a"\nmsgtsr "b"\n')


# -- line breaking ------------------------------------------------------------------------

NARRATION = "应用把完整历史（3 条消息，包括每个工具结果）再发给模型，让它读取结果并决定：继续调用工具，还是给出回答。"


def lines_at(text, width):
    return [line.rstrip() for line in wrap_plain(text, width).splitlines()]


@pytest.mark.parametrize("width", range(10, 60))
def test_chinese_breaks_between_characters_never_a_number_from_its_measure_word(width):
    lines = lines_at(NARRATION, width)
    for line, after in itertools.pairwise(lines):
        assert not (re.search(r"\d$", line) and after[:1] == "条"), (line, after)
        assert after[:1] not in "，。）：、", (line, after)   # no closing punctuation starts a line
        assert line[-1:] != "（", (line, after)              # no opening one ends a line
    assert "".join(lines).replace(" ", "") == NARRATION.replace(" ", "")
    assert all(Console().measure(line).maximum <= width for line in lines)


def test_rich_alone_parts_the_number_from_its_measure_word():
    """Why the wrapper exists: Rich breaks only at spaces, here right after "3"."""
    from rich.text import Text

    console = Console(width=16, file=open("/dev/null", "w"))
    lines = [str(line) for line in Text(NARRATION).wrap(console, 16)]
    assert any(line.rstrip().endswith("3") for line in lines)


def test_words_and_ids_are_not_cut_in_english_and_mixed_text():
    text = "模型请求了 1 个调用（query_order）。应用已先追加这条 assistant 消息"
    for width in range(14, 40):
        lines = lines_at(text, width)
        assert any("query_order" in line for line in lines), (width, lines)
        assert any("assistant" in line for line in lines), (width, lines)
    assert break_offsets("The app sends the whole history back", 12) == [8, 18, 24]


def test_a_paragraph_prints_wrapped_by_these_rules():
    import io

    buf = io.StringIO()
    Console(file=buf, width=24, no_color=True).print(Paragraph(NARRATION))
    lines = buf.getvalue().splitlines()
    assert not any(line.rstrip().endswith("3") for line in lines[:-1]), lines


def test_a_schema_left_unchecked_is_read_back_in_chinese():
    """A skip line (English, as `check --json` keeps it) said in Chinese on a console: the tool's
    name verbatim, each reason a schema check gives in its own template; English unchanged."""
    from agentdbg import schemas

    deep = "tool 'x': arguments left unchecked: nested too deeply to check against the schema"
    ref = "tool 'x': arguments left unchecked: $ref '#/nowhere' is not resolved"
    try:
        i18n.use("zh")
        assert schemas.skip_text(deep) == "工具 'x'：arguments 未检查：嵌套太深，无法按 schema 检查"
        assert schemas.skip_text(ref) == "工具 'x'：arguments 未检查：$ref '#/nowhere' 无法解析"
    finally:
        i18n.use("en")
    assert schemas.skip_text(deep) == deep and schemas.skip_text(ref) == ref
