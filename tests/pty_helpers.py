"""Reading a real terminal in tests: match text as a person sees it, drive a prompt."""

import re

ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"  # styling/cursor codes a terminal would not show


def on_screen(text: str) -> re.Pattern:
    """``text`` as it reads on screen: escape codes may sit between characters and a
    space may be a wrapped line (newline plus indentation)."""
    parts = [r"(?:\s|\x1b\[[0-9;?]*[A-Za-z])+" if ch == " " else re.escape(ch) for ch in text]
    return re.compile(ESC.join(parts))


def commander(child, prompt: str):
    """``cmd(line, *expect)``: wait for ``prompt``, type ``line``, see each expected text."""
    def cmd(line: str, *expect: str) -> None:
        child.expect(on_screen(prompt))
        child.sendline(line)
        for text in expect:
            child.expect(on_screen(text))
    return cmd


def zh_step_lesson(tmp_path, question: str):
    """``agentdbg run --step --explain --lang zh QUESTION`` in a real 100x30 pty (no colour, no
    cursor-position queries): the child and the ``StringIO`` that logs what it printed."""
    import io
    import os
    import sys

    import pexpect

    env = {**os.environ, "TERM": "xterm", "AGENTDBG_HOME": str(tmp_path / "home"),
           "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    child = pexpect.spawn(sys.executable, ["-m", "agentdbg", "run", "--step", "--explain", "--lang",
                                           "zh", question], env=env, encoding="utf-8",
                          dimensions=(30, 100), timeout=60, cwd=str(tmp_path))
    log = io.StringIO()
    child.logfile_read = log
    return child, log
