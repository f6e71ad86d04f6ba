
# Text that tries to take over a terminal: Rich markup, ANSI/OSC sequences (colours, cursor
# moves, screen clear, window title, OSC 8 link, OSC 52 clipboard write), CR, BS, bidi, ZW.
HOSTILE = ("[bold red]PWNED[/bold red] [link=https://evil.example]click[/link] "
           "\x1b[31mred\x1b[0m \x1b[2J\x1b[H \x1b]0;title\x07 \x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\ "
           "\x1b]52;c;ZWNobyBoaQ==\x07 a\rb c\bd \u202eevil\u202c zero\u200bwidth")
RAW = ("\x1b[31mred", "\x1b[2J", "\x1b]0;", "\x1b]8;;https://evil", "\x1b]52", "\r", "\b",
       "\u202e", "\u200b", "\x07")


def assert_inert(text: str) -> None:
    """None of the hostile sequences got through; the markup is shown literally."""
    for raw in RAW:
        assert raw not in text, f"raw {raw!r} reached the terminal"
