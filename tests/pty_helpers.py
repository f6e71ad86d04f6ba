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
