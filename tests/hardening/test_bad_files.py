"""Bad files: one clear line (file, position, what was expected), exit 2, never a traceback."""

import json

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app

runner = CliRunner()
TOOL = ("version: 1\ntools:\n  - name: t\n    description: Use when testing.\n"
        "    parameters: {type: object, properties: {}}\n    handler: {fixture: 1}\n")


def one_line_error(r, *needles):
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("agentdbg: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)


@pytest.mark.parametrize("old,new,needle", [
    ("version: 1", "version: '1'", "unsupported version '1'"),
    ("version: 1\n", "version: 1\ndefaults: 7\n", "'defaults' must be a mapping"),
    ("version: 1\n", "version: 1\ndefaults: {parallel: 0}\n", "defaults.parallel must be a positive"),
    ("tools:\n  - name", "tools: {}\nx:\n  - name", "unknown top-level key 'x'"),
    ("  - name: t", "  - name: 42", "field 'name' must be a non-empty string"),
    ("description: Use when testing.", "description: [a]", "field 'description' must be a non-empty"),
    ("parameters: {type: object, properties: {}}", "parameters: object", "field 'parameters' must be a JSON Schema object"),
    ("parameters: {type: object, properties: {}}", "parameters: {type: object, properties: {a: {type: 3}}}", "not a valid JSON Schema"),
    ("handler: {fixture: 1}", "handler: [fixture]", "field 'handler' must be one of"),
    ("handler: {fixture: 1}", "handler: {python: 3}", "handler.python must look like"),
    ("handler: {fixture: 1}", "handler: {command: [1, 2]}", "handler.command must be a non-empty list of strings"),
    ("handler: {fixture: 1}", "handler: {fixture: 1}\n    side_effects: yes-please", "field 'side_effects' must be true or false"),
    ("handler: {fixture: 1}", "handler: {fixture: 1}\n    max_result_chars: 10", "field 'max_result_chars' must be an integer >= 100"),
    ("handler: {fixture: 1}", "handler: {fixture: 1}\n    strict: maybe", "field 'strict' must be true or false"),
])
def test_tools_file_wrong_types(tmp_path, old, new, needle):
    text = TOOL.replace(old, new)
    assert text != TOOL
    (tmp_path / "tools.yaml").write_text(text, encoding="utf-8")
    one_line_error(runner.invoke(app, ["run", "q"]), "tools.yaml:", needle)


def test_tools_file_not_a_mapping_and_empty(tmp_path):
    for text, needle in [("- 1\n- 2\n", "expected a mapping"), ("", "expected a mapping"),
                         ("version: 1\ntools: []\n", "'tools' must be a non-empty list")]:
        (tmp_path / "tools.yaml").write_text(text, encoding="utf-8")
        one_line_error(runner.invoke(app, ["tools"]), needle)


@pytest.mark.slow
def test_deeply_nested_yaml_and_json(tmp_path):
    (tmp_path / "tools.yaml").write_text("version: 1\ntools: " + "[" * 50000 + "]" * 50000 + "\n")
    one_line_error(runner.invoke(app, ["tools"]), "tools.yaml")
    p = tmp_path / "deep.json"
    p.write_text("[" * 200000 + "]" * 200000)
    one_line_error(runner.invoke(app, ["check", str(p)]), "nested too deeply")
    p = tmp_path / "deep.jsonl"
    p.write_text('[{"role": "user", "content": "x"}]\n' + "[" * 200000 + "]" * 200000 + "\n")
    one_line_error(runner.invoke(app, ["check", str(p)]), "deep.jsonl:2", "nested too deeply")


def test_huge_tools_file(tmp_path):
    (tmp_path / "tools.yaml").write_text(TOOL + "#" * 6_000_000)
    one_line_error(runner.invoke(app, ["tools"]), "a tools file is at most 5000000 bytes")


def test_invalid_utf8_everywhere(tmp_path):
    (tmp_path / "tools.yaml").write_bytes(TOOL.encode() + b"# \xff\xfe\n")
    one_line_error(runner.invoke(app, ["tools"]), "not UTF-8")
    (tmp_path / "s.yaml").write_bytes(b"turns: [{content: \xff}]\n")
    (tmp_path / "tools.yaml").write_text(TOOL)
    one_line_error(runner.invoke(app, ["run", "q", "--script", "s.yaml"]), "not UTF-8")
    (tmp_path / "t.jsonl").write_bytes(
        b'{"type": "header", "format": "agentdbg-transcript", "version": 1}\n{"type": "x\xff"}\n')
    one_line_error(runner.invoke(app, ["replay", "t.jsonl"]), "t.jsonl:2", "not UTF-8")


def test_unknown_versions(tmp_path):
    (tmp_path / "t.jsonl").write_text(json.dumps(
        {"type": "header", "format": "agentdbg-transcript", "version": 3}) + "\n")
    one_line_error(runner.invoke(app, ["replay", "t.jsonl"]), "unsupported transcript version 3")
    one_line_error(runner.invoke(app, ["check", "t.jsonl"]), "unsupported transcript version 3")


def test_script_wrong_types(tmp_path):
    (tmp_path / "tools.yaml").write_text(TOOL)
    for text, needle in [("turns: 3", "expected a non-empty list of turns"),
                         ("turns: [{tool_calls: 3}]", "'tool_calls' must be a list"),
                         ("turns: [{tool_calls: [{arguments: {}}]}]", "each call needs a 'name'"),
                         ("[[[", "invalid YAML")]:
        (tmp_path / "s.yaml").write_text(text)
        one_line_error(runner.invoke(app, ["run", "q", "--script", "s.yaml"]), needle)


def test_directories_and_missing_files(tmp_path):
    one_line_error(runner.invoke(app, ["tools", str(tmp_path)]), "is a directory")
    one_line_error(runner.invoke(app, ["check", str(tmp_path)]), "is a directory")
    one_line_error(runner.invoke(app, ["replay", str(tmp_path / "nope.jsonl")]), "no such file")
    one_line_error(runner.invoke(app, ["run", "q", "--script", str(tmp_path / "x.yaml")]),
                   "no such script file")


# -- files that never end (issue 21): the caps hold whatever the file is -----------------------

def bounded_agentdbg(*args, cwd, shell: str | None = None):
    """agentdbg in a process whose memory is limited to 3 GB (reading /dev/zero to its end
    would pass that), with a timeout."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    argv = ["bash", "-c", shell] if shell else [sys.executable, "-m", "agentdbg", *args]
    return subprocess.run(argv, cwd=str(cwd), capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)


@pytest.mark.parametrize("args,needle", [
    (["run", "q", "--tools", "/dev/zero"], "/dev/zero: more than 5000000 bytes; a tools file is at most"),
    (["run", "q", "--script", "/dev/zero"], "/dev/zero: more than 5000000 bytes; a script file is at most"),
    (["tools", "/dev/zero"], "a tools file is at most 5000000 bytes"),
    (["check", "/dev/zero"], "/dev/zero: more than 268435456 bytes; check reads at most that much"),
    (["report", "/dev/zero"], "/dev/zero:1: longer than 268435456 bytes"),
])
def test_dev_zero_is_read_up_to_the_cap(tmp_path, args, needle):
    r = bounded_agentdbg(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-500:]
    (line,) = r.stderr.splitlines()
    assert line.startswith("agentdbg: error: ") and needle in line, line


def test_a_pipe_that_never_ends_is_read_up_to_the_cap(tmp_path):
    import sys

    r = bounded_agentdbg(cwd=tmp_path, shell=f"{sys.executable} -m agentdbg run q --tools <(yes)")
    assert r.returncode == 2, r.stderr[-500:]
    assert "more than 5000000 bytes; a tools file is at most" in r.stderr
    r = bounded_agentdbg(cwd=tmp_path, shell=f"{sys.executable} -m agentdbg tools <(printf '%s' '{TOOL}')")
    assert r.returncode == 0, r.stderr                  # a pipe that ends is read like a file


def test_a_fifo_nobody_writes_is_given_up(tmp_path):
    import os
    import time

    from agentdbg.paths import open_input

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"nothing to read for 0\.3 s"):
        open_input(fifo, idle=0.3)            # open() would wait for a writer for ever
    assert time.monotonic() - started < 5
