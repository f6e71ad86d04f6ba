"""The step-mode driver: pauses before every phase, reads commands, never crashes.

Like pdb over bdb: the ``Session`` decides what happens; this class decides what
to show and which command to run. Errors print one ``*** ...`` line and the
prompt comes back. Ctrl-C during a model request or a tool run cancels that
phase (nothing is appended); Ctrl-C or Ctrl-D at the prompt asks to quit.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from rich.text import Text

from agentdbg.checker import check
from agentdbg.engine.session import (
    ApprovalNeeded,
    ModelReplied,
    RequestBlocked,
    Session,
    StopReason,
)
from agentdbg.errors import ExitStatus, Terminated
from agentdbg.messages import call_arguments, call_name
from agentdbg.transcript.document import run_document, write_json
from agentdbg.render import run as view_run
from agentdbg.render.safe import safe
from agentdbg.render.view import render_finding, render_messages
from agentdbg.repl.breakpoints import Breakpoints
from agentdbg.repl.commands import CommandError, lookup
from agentdbg.repl.explain import explain

PROMPT = "(agentdbg) "


class Debugger:
    def __init__(self, session: Session, console, *, input=None, output=None,
                 explain: bool = False, lang: str = "en", profile: str = "openai",
                 full: bool = False, save: Path | None = None, model_desc: str = "",
                 history: bool = True, transcript=None, replay=None, live_provider=None,
                 live_tools=None):
        self.session = session
        self.console = console
        self.explain, self.lang, self.profile, self.full = explain, lang, profile, full
        self.save_path = save
        self.model_desc = model_desc
        self.transcript = transcript          # the live TranscriptWriter, if any
        self.replay = replay                  # a ReplayModel when stepping a recording
        self.applied = 0                      # recorded actions re-applied so far
        self.live_provider = live_provider    # for 'live' after the recording goes stale
        self.live_tools = live_tools
        self.breakpoints = Breakpoints()
        self.quitting = False
        self.shown = 0
        self._io = {"input": input, "output": output}
        self.prompt = self._prompt_session(history)

    def _prompt_session(self, history: bool):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        from agentdbg.paths import data_dir
        from agentdbg.repl.completion import DebuggerCompleter

        hist = InMemoryHistory()
        if history:
            try:
                path = data_dir() / "history"
                path.parent.mkdir(parents=True, exist_ok=True)
                hist = FileHistory(str(path))
            except OSError:
                pass
        return PromptSession(history=hist, completer=DebuggerCompleter(self),
                             complete_while_typing=False, **self._io)

    # -- the loop ----------------------------------------------------------------------
    def loop(self) -> ExitStatus:
        self.console.print(view_run.render_header(self.model_desc, self.session.toolset.names(),
                                                  self.model_desc.startswith("offline")))
        self.say("step mode: Enter or 'next' performs the pending phase; 'help' lists commands.")
        self.show_new()
        self.banner()
        try:
            while not self.quitting:
                self._check_transcript()
                try:
                    line = self.prompt.prompt(PROMPT)
                except Terminated:
                    break
                except (KeyboardInterrupt, EOFError):
                    if self.confirm_quit():
                        break
                    continue
                self.dispatch(line)
        except Terminated:
            pass
        finally:
            if not self.session.done:
                self.session.cancel("quit from step mode before the run ended")
            if self.save_path is not None:
                self.save(self.save_path)
        return self.session.stop_reason.exit_status

    def _check_transcript(self) -> None:
        writer = self.transcript
        if writer is not None and writer.error is not None and not getattr(self, "_warned", False):
            self._warned = True
            self.error(f"the transcript {writer.path} cannot be written ({writer.error}); the run "
                       "is kept in memory: 'save PATH' writes it somewhere else")

    def dispatch(self, line: str) -> None:
        word, _, arg = line.strip().partition(" ")
        try:
            lookup(word or "next").fn(self, arg)
        except CommandError as exc:
            self.error(str(exc))
        except Exception as exc:  # noqa: BLE001 - a command must never kill the debugger
            self.error(f"{type(exc).__name__}: {exc}")

    def confirm_quit(self) -> bool:
        try:
            answer = self.prompt.prompt("Really quit? [y/N] ")
        except (KeyboardInterrupt, EOFError):
            return True
        return answer.strip().lower() in ("y", "yes")

    # -- moving --------------------------------------------------------------------------
    def advance(self):
        s = self.session
        if self.replay is not None and not self._replay_ready():
            return None
        if s.done:
            raise CommandError(f"the run has stopped ({s.stop_reason.value}); 'rewind N' or "
                               "'retry' to go on, 'save PATH', or 'quit'")
        what = "model request" if s.phase == "model" else "tool execution"
        try:
            event = s.step()
        except Terminated:
            raise
        except KeyboardInterrupt:
            self.say(f"interrupted: the {what} was cancelled; nothing was appended")
            return None
        self.report(event)
        self.show_new()
        self.banner()
        return event

    def _replay_ready(self) -> bool:
        """Re-apply recorded actions; refuse to play stale recorded responses unknowingly."""
        from agentdbg.engine.replaying import sync
        from agentdbg.providers.replay import describe_difference

        if self.session.provider is not self.replay:
            return True  # continuing live
        self.applied += sync(self.session, self.replay)
        s = self.session
        if s.done and self.replay.peek() is None:
            self.say("the recording ends here")
            return False
        user_changed = len(s.actions) > self.applied
        if s.phase == "model" and user_changed and not self.replay.knowingly:
            diff = self.replay.stale(s.request())
            if diff:
                self.say("the recording is stale from here: your change makes the recorded "
                         f"responses answer a different history ({describe_difference(diff)}). "
                         "'live' continues with a live model; 'play' keeps playing the "
                         "recording knowingly.")
                return False
        return True

    def go_live(self) -> None:
        from agentdbg.engine.executor import ToolExecutor

        if self.replay is None or self.session.provider is not self.replay:
            raise CommandError("already live: this session is not playing a recording")
        if self.live_provider is None:
            from agentdbg.providers.offline import OfflineModel

            self.live_provider = OfflineModel()
        self.session.provider = self.live_provider
        self.session.recorded = None
        if self.live_tools is not None:
            self.session.toolset = self.live_tools
            self.session.executor = ToolExecutor(self.live_tools)
            tools = f"the tools of {self.live_tools.path}"
        else:
            tools = "no tool files (calls will answer: no recorded result; pass --tools)"
        self.session.config.approve = "ask"
        self.say(f"live from here with the {getattr(self.live_provider, 'name', 'live')} model "
                 f"and {tools}")

    def run_to_break(self) -> None:
        while not self.session.done:
            event = self.advance()
            if event is None or isinstance(event, (ApprovalNeeded, RequestBlocked)):
                return
            findings = self.findings()
            if any(f.severity == "error" for f in findings):
                self.say("continue stopped: the checker has an error-level finding")
                return
            bp = self.breakpoints.hit(self.session, event, findings)
            if bp is not None:
                self.say(f"breakpoint {bp.id} hit: {bp.describe()}")
                return

    # -- showing -----------------------------------------------------------------------
    def findings(self):
        s = self.session
        return check(s.request().body(), self.profile, in_progress=s.phase == "tools")

    def report(self, event) -> None:
        if isinstance(event, ModelReplied):
            self.console.print(view_run.render_turn_title(event.turn))
            if event.record.note:
                self.console.print(view_run.render_note(event.record.note))
        elif isinstance(event, ApprovalNeeded):
            names = ", ".join(f"{call_name(c)} ({c.get('id')})" for c in event.calls)
            self.say(f"approval needed before running {names}: 'approve' or 'deny'")
        elif isinstance(event, RequestBlocked):
            for f in event.findings:
                self.console.print(render_finding(f))
            self.say("not sent: the request breaks the protocol. Fix it (edit/drop/rewind) or "
                     "'send' to send it anyway and see what the API answers.")

    def show_new(self) -> None:
        msgs = self.session.messages
        start = min(self.shown, len(msgs))
        if start:
            self.console.print(Text(f"  (messages 0–{start - 1} unchanged; 'messages' shows all)",
                                    style="dim"))
        if start < len(msgs):
            self._render(start, self.full)
        self.shown = len(msgs)

    def show_all(self, full: bool = False) -> None:
        self._render(0, full)
        self.shown = len(self.session.messages)

    def _render(self, start: int, full: bool) -> None:
        self.console.print(render_messages(
            self.session.messages, findings=self.findings(), full=full, start=start,
            meta=view_run.message_meta(self.session), in_progress=self.session.phase == "tools"))

    def banner(self) -> None:
        s = self.session
        if s.done:
            self.console.print(Text.assemble(
                ("■ stopped: ", "bold"), (s.stop_reason.value, "bold green" if
                                          s.stop_reason is StopReason.COMPLETED else "bold red"),
                f" — {safe(s.stop_detail)}. 'rewind N' or 'retry' to go on, 'save PATH', 'quit'."))
        elif s.phase == "model":
            self.console.print(Text(f"▶ next: ask the model (turn {len(s.turns) + 1}) with "
                                    f"{len(s.messages)} message(s)", style="bold"))
        else:
            calls = "; ".join(f"{safe(c.get('id'))} {safe(call_name(c))}"
                              f"({safe(call_arguments(c))})" for c in s.pending)
            self.console.print(Text(f"▶ next: execute {len(s.pending)} call(s): {calls}",
                                    style="bold"))
        if self.explain:
            self.console.print(Text(explain(s, self.lang), style="italic cyan"))

    def say(self, text: str) -> None:
        self.console.print(Text(safe(text)))

    def error(self, text: str) -> None:
        self.console.print(Text(f"*** {safe(text)}", style="red"))

    def print_json(self, obj, title: str = "") -> None:
        if title:
            self.say(title + ":")
        self.console.print(Text(safe(json.dumps(obj, ensure_ascii=False, indent=2))))

    def show_tools(self) -> None:
        from agentdbg.drivers.tools import tools_table

        self.console.print(tools_table(self.session.toolset))

    def show_usage(self) -> None:
        for t in self.session.turns:
            u = t.usage
            self.say(f"turn {t.turn}: {u.get('prompt_tokens', 0)} prompt + "
                     f"{u.get('completion_tokens', 0)} completion tokens"
                     f"{' (estimated)' if u.get('estimated') else ''}; model {t.latency_ms:.1f} ms; "
                     f"tools {t.tool_ms:.1f} ms")
        total = self.session.usage
        self.say(f"total: {total['total_tokens']} tokens over {len(self.session.turns)} request(s)")

    # -- editing and saving -------------------------------------------------------------
    def edit_json(self, value, what: str):
        """Edit ``value`` as JSON in $VISUAL/$EDITOR, or inline; ValueError when unusable."""
        if not (os.environ.get("VISUAL") or os.environ.get("EDITOR")):
            self.say("inline editor: Esc then Enter accepts, Ctrl-C cancels")
        return edit_json(value, self._io, what)

    def save(self, path) -> None:
        """Copy the transcript so far; from memory when the transcript could not be written."""
        if self.transcript is not None and self.transcript.error is None:
            from agentdbg.drivers.launch import copy_transcript

            copy_transcript(self.transcript, Path(path))
            return
        write_json(path, run_document(self.session, model=self.session.config.model,
                                      base_url=getattr(self.session.provider, "base_url", None)))


def edit_json(value, io: dict, what: str):
    """Edit ``value`` as pretty JSON; the parsed result. ValueError names what stays unchanged."""
    text = edit_text(json.dumps(value, ensure_ascii=False, indent=2), io)
    if text is None:
        raise ValueError(f"edit cancelled; {what} unchanged")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc}); {what} unchanged") from None


def edit_text(text: str, io: dict) -> str | None:
    """Edit ``text`` in $VISUAL/$EDITOR, else in an inline multi-line prompt; None if cancelled."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
            fh.write(text)
        try:
            if subprocess.call([*shlex.split(editor), fh.name]) != 0:
                return None
            return Path(fh.name).read_text(encoding="utf-8")
        finally:
            os.unlink(fh.name)
    from prompt_toolkit import PromptSession

    try:
        return PromptSession(**io).prompt("", default=text, multiline=True)
    except (KeyboardInterrupt, EOFError):
        return None
