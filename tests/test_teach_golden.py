"""Golden screens of step mode as a class sees them: 80 and 100 columns, English and Chinese,
the ordinary view and the presenter view (``--present``). A fake clock makes them exact.

Regenerate with UPDATE_GOLDEN=1 after an intended change, and read the diff."""

import io

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from test_render import golden
from test_teach_repl import ORDER_Q, FakeClock, options, session_for

from agentdbg.repl.debugger import Debugger

#: a class's first minutes: ask, run the call, break the pairing, see the checker and the API say no
COMMANDS = ("n", "n", "drop 1", "n", "send", "rewind 0", "n")


def screens(tools, lang: str, width: int, present: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True, highlight=False, force_terminal=False)
    console.plain_styles = present   # what --present does to a console (the rich one here)
    session = session_for(tools, ORDER_Q, clock=FakeClock())
    with create_pipe_input() as pipe:
        pipe.send_text("".join(line + "\r" for line in COMMANDS))
        pipe.close()
        Debugger(session, console, input=pipe, output=DummyOutput(), history=False,
                 options=options(lang=lang, explain=True, present=present)).loop()
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


@pytest.mark.parametrize("present", [False, True], ids=["view", "present"])
@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_golden_step_screens(sample_tools, lang, width, present):
    text = screens(sample_tools, lang, width, present)
    golden(f"step_{lang}_{width}{'_present' if present else ''}", text)
    from rich.cells import cell_len

    assert all(cell_len(line) <= width for line in text.splitlines()), \
        [line for line in text.splitlines() if cell_len(line) > width]
