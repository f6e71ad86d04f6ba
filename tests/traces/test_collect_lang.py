"""`agentdbg collect --lang zh` as a real process fed by real OTLP/HTTP POSTs: what it says of
each export it cannot read and its closing summary (with the note of what the spans do not
record) are Chinese; the decoder's and Python's own words, paths and URLs stay verbatim; the
same run in English says what it always said."""

from __future__ import annotations

import gzip

import httpx
from test_i18n_scan import english

from .collecting import Collect
from .otlp_exports import export


def _post(endpoint: str, body: bytes, kind: str, encoding: str | None = None) -> None:
    headers = {"content-type": kind} | ({"content-encoding": encoding} if encoding else {})
    answer = httpx.post(endpoint + "/v1/traces", content=body, headers=headers, trust_env=False)
    assert answer.status_code == 200, answer.text


def _collect(tmp_path, lang: str) -> tuple[list[str], list[str]]:
    """(the live view's lines, the console's lines) of one collect fed four bad exports and
    one good one."""
    tmp_path.mkdir()
    collect = Collect(tmp_path, "--lang", lang)
    try:
        _post(collect.endpoint, b'{"x": 1}', "application/json")
        _post(collect.endpoint, b"nope", "application/json")
        _post(collect.endpoint, b"zzzz", "application/json", "gzip")
        _post(collect.endpoint, b"zzzz", "application/json", "br")
        _post(collect.endpoint, export(1, spans_n=2, calls=2), "application/x-protobuf")
    finally:
        said = collect.stop()
    shown = collect.out.read_text(encoding="utf-8").splitlines()
    return [line for line in shown if line.startswith(("export", "导出"))], said.splitlines()


def test_collects_unreadable_exports_and_summary_in_chinese(tmp_path):
    notes, said = _collect(tmp_path / "zh", "zh")
    assert notes == [
        "导出 1：不是 OTLP trace 导出（没有 'resourceSpans' 数组）",
        "导出 2：不是 OTLP trace 导出：JSON 无效：Expecting value",
        "导出 3：不是 OTLP trace 导出：不是 gzip 数据（Error -3 while decompressing data: "
        "incorrect header check）",
        "导出 4：不是 OTLP trace 导出：不支持内容编码 'br'（支持的是 gzip）"], notes
    summary = [line for line in said if not line.startswith("agentdbg collect: 在 ")]
    assert summary[:2] == [
        "agentdbg collect: 5 次导出，2 个 span，2 次模型调用，分属 1 个对话；发现的问题：无",
        "agentdbg collect: 4 次导出无法读取（每一次收到时都已在上面说明）"], said
    assert summary[-1] == ("  提示：这些 span 没有记录提供给模型的工具定义或请求的参数（temperature、max_tokens "
                           "等）；需要它们的检查已跳过（没有工具定义，就不会报告 unknown-tool）"), said
    # Python's own words (json's, zlib's) are what another program said, 'temperature' a
    # parameter's name: the rest is Chinese
    left = [line for line in notes[:1] + summary if set(english(line)) - {"temperature"}]
    assert not left, left


def test_collects_unreadable_exports_and_summary_in_english_unchanged(tmp_path):
    notes, said = _collect(tmp_path / "en", "en")
    assert notes == [
        "export 1: not an OTLP trace export (no 'resourceSpans' array)",
        "export 2: not an OTLP trace export: invalid JSON: Expecting value",
        "export 3: not an OTLP trace export: not gzip data (Error -3 while decompressing data: "
        "incorrect header check)",
        "export 4: not an OTLP trace export: content encoding 'br' is not supported (gzip is)"], notes
    assert said[1:3] == [
        "agentdbg collect: 5 export(s), 2 span(s), 2 model call(s) in 1 conversation(s); findings: none",
        "agentdbg collect: 4 export(s) could not be read (each is said above, as it came)"], said
    assert said[-1] == ("  note: the spans do not record the tool definitions the model was offered or "
                        "the requests' parameters (temperature, max tokens …); the checks that need them "
                        "are skipped (no unknown-tool finding without tool definitions)"), said


def test_an_export_too_large_once_decompressed_is_said_in_chinese(tmp_path):
    collect = Collect(tmp_path, "--lang", "zh")
    try:
        _post(collect.endpoint, gzip.compress(b"{" + b" " * (80 << 20)), "application/json", "gzip")
    finally:
        collect.stop()
    assert "导出 1：不是 OTLP trace 导出：解压后超过 64 MB" in collect.out.read_text(encoding="utf-8")
