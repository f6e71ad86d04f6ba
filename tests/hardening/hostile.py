
# Text that tries to take over a terminal: Rich markup, ANSI/OSC sequences (colours, cursor
# moves, screen clear, window title, OSC 8 link, OSC 52 clipboard write), CR, BS, bidi, ZW,
# and characters that hide text from the reader but not from a model (tag characters that
# spell ASCII, soft hyphen, invisible operators, annotations, fillers, line separators).
HIDDEN = ("\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045 \u00ad \u2064 "
          "\ufff9ann\ufffb \u180e \u3164 \u2028 \u2029")
HOSTILE = ("[bold red]PWNED[/bold red] [link=https://evil.example]click[/link] "
           "\x1b[31mred\x1b[0m \x1b[2J\x1b[H \x1b]0;title\x07 \x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\ "
           "\x1b]52;c;ZWNobyBoaQ==\x07 a\rb c\bd \u202eevil\u202c zero\u200bwidth " + HIDDEN)
RAW = ("\x1b[31mred", "\x1b[2J", "\x1b]0;", "\x1b]8;;https://evil", "\x1b]52", "\r", "\b",
       "\u202e", "\u200b", "\x07", "\U000e0049", "\u00ad", "\u2064", "\ufff9", "\u180e", "\u3164",
       "\u2028", "\u2029")


def assert_inert(text: str) -> None:
    """None of the hostile sequences got through; the markup is shown literally."""
    for raw in RAW:
        if raw in text:
            line = next(ln for ln in text.splitlines(keepends=True) if raw in ln)
            raise AssertionError(f"raw {raw!r} reached the terminal in: {line!r}")
