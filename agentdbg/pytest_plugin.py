"""pytest plugin: ``pytest --agentdbg-replay DIR`` turns every transcript into a test.

Each ``*.jsonl`` agentdbg transcript found under the paths pytest collects is
replayed: one test per conversation, named by its agent (``x.jsonl::replay[Order agent]``;
a Claude Code session file holding a subagent gives one test per agent). A test fails on
divergence, a different stop reason or final messages, or an error-level checker finding.
``--agentdbg-live-tools`` also re-runs each recorded call with the tools of
``--agentdbg-tools PATH`` (required: a ``./tools.yaml`` is never loaded by itself) and fails
when a result differs. Inert unless ``--agentdbg-replay`` is given.

The ``agentdbg_trajectory`` fixture loads a run for the trajectory assertions
(``agentdbg.testing``): a path, or what ``agentdbg runs`` shows (a #, a name, ``last``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:   # loaded only when a fixture is used: the plugin costs pytest nothing
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from agentdbg.report.trajectory import Trajectory


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentdbg")
    group.addoption("--agentdbg-replay", action="store_true",
                    help="collect agentdbg transcripts (*.jsonl) as replay tests")
    group.addoption("--agentdbg-live-tools", action="store_true",
                    help="also re-run recorded tool calls with the current tools")
    group.addoption("--agentdbg-tools", default=None, help="tools.yaml for --agentdbg-live-tools")
    group.addoption("--agentdbg-profile", default="openai", help="checker profile")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("agentdbg_live_tools", default=False) and \
            not config.getoption("agentdbg_tools", default=None):
        # never ./tools.yaml by itself: a checkout's file may run anyone's code
        raise pytest.UsageError("--agentdbg-live-tools needs --agentdbg-tools PATH: the tools "
                                "to re-run the calls with (./tools.yaml is never loaded by itself)")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> TranscriptFile | None:
    if not parent.config.getoption("agentdbg_replay", default=False):
        return None
    if file_path.suffix == ".jsonl":
        from agentdbg.drivers.importing import a_sessions_subagent, a_spawned_rollout
        from agentdbg.transcript import is_run

        # a transcript, or a Claude Code / Codex session file (its subagents' files beside it
        # are conversations of the session: tests of the session file)
        if is_run(file_path) and not a_sessions_subagent(file_path) and \
                not a_spawned_rollout(file_path):
            return TranscriptFile.from_parent(parent, path=file_path)
    return None


class TranscriptFile(pytest.File):
    def collect(self) -> Iterator[TranscriptItem]:
        """One item per conversation, ``replay[AGENT]`` (just ``replay`` when no agent is
        named, or when the file cannot be read: the item then fails with the reason)."""
        from agentdbg.errors import AgentdbgError

        try:
            found = conversations(self.path, self.config)
        except AgentdbgError:
            found = [(None, self.path)]
        seen: dict[str, int] = {}
        for agent, source in found:
            label = "replay" if agent is None else f"replay[{agent}]"
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:
                label = f"{label[:-1]} #{seen[label]}]" if agent is not None else f"replay #{seen[label]}"
            yield TranscriptItem.from_parent(self, name=label, source=source)


MAX_LABEL = 60


def conversations(path: Path, config: pytest.Config) -> list[tuple[str | None, Path]]:
    """(the agent, the transcript to replay) of each conversation ``path`` holds: a transcript
    is one; another tool's record is imported (once, into a folder removed at the end of the
    session) and gives each of its conversations, the main one first."""
    from agentdbg.transcript import is_transcript, read_transcript
    from agentdbg.transcript.imported import import_file
    from agentdbg.transcript.tree import named

    if is_transcript(path):
        header, events = read_transcript(path)
        return [(_label(named(header, (e for _, e in events)).agent), path)]
    import tempfile

    written = import_file(path, Path(tempfile.mkdtemp(dir=_imports(config))))
    return [(_label(w.thread.agent), w.path) for w in written] or [(None, path)]


def _label(agent: str | None) -> str | None:
    """An agent's name as a test id's part: one line, escaped, short, no ``::``."""
    from agentdbg.textsafe import one_line

    text = one_line(agent or "").replace("::", ":").strip()
    return (text[:MAX_LABEL - 1] + "…" if len(text) > MAX_LABEL else text) or None


def _imports(config: pytest.Config) -> Path:
    """This session's folder for imported session files (removed when it ends)."""
    import tempfile

    folder = getattr(config, "_agentdbg_imports", None)
    if folder is None:
        held = tempfile.TemporaryDirectory(prefix="agentdbg-pytest-")
        config.add_cleanup(held.cleanup)
        folder = Path(held.name)
        config._agentdbg_imports = folder  # type: ignore[attr-defined]
    return folder


class TranscriptItem(pytest.Item):
    def __init__(self, *, source: Path, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.source = source   # what is replayed: the file, or a conversation imported from it

    def runtest(self) -> None:
        from agentdbg.testing import assert_replays

        opt = self.config.getoption
        assert_replays(self.source, live_tools=opt("agentdbg_live_tools"),
                       tools=opt("agentdbg_tools"), profile=opt("agentdbg_profile"))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        from agentdbg.errors import AgentdbgError
        from agentdbg.testing import ReplayMismatch
        from agentdbg.textsafe import one_line

        if isinstance(excinfo.value, ReplayMismatch):
            return str(excinfo.value)          # escaped where it is made
        if isinstance(excinfo.value, AgentdbgError):   # an unreadable recording: its one line
            return f"{one_line(self.path)}: {one_line(excinfo.value.message)}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"agentdbg replay {self.path.name} {self.name}"


@pytest.fixture
def agentdbg_trajectory() -> Callable[..., Trajectory]:
    """Load a run for trajectory assertions: ``agentdbg_trajectory("order.jsonl")`` or
    ``agentdbg_trajectory("last")``; the result has ``tool_used``, ``tool_sequence``,
    ``tool_args``, ``max_turns`` … (see ``agentdbg.testing``)."""
    def load(source: str | Path, *, profile: str = "openai") -> Trajectory:
        from agentdbg.testing import Trajectory

        return Trajectory.load(source, profile=profile)
    return load
