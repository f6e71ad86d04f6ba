"""The step-mode driver: pauses before every phase, reads commands, never crashes.

Like pdb over bdb: the ``Session`` decides what happens; this class decides what
to show and which command to run. Errors print one ``*** ...`` line and the
prompt comes back. Ctrl-C during a model request or a tool run cancels that
phase (nothing is appended); Ctrl-C or Ctrl-D at the prompt asks to quit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rich.cells import cell_len, chop_cells
from rich.text import Text

from agentdbg.checker import check
from agentdbg.engine.phases import Phase, StopReason
from agentdbg.engine.session import ApprovalNeeded, ModelReplied, RequestBlocked, Session
from agentdbg.errors import ExitStatus, Terminated
from agentdbg.messages import call_arguments, call_name
from agentdbg.options import RunOptions
from agentdbg.render import run as view_run
from agentdbg.render.safe import safe
from agentdbg.render.view import render_finding, render_messages, shown_arguments
from agentdbg.repl.breakpoints import Breakpoints
from agentdbg.repl.commands import CommandError, lookup
from agentdbg.repl.editor import edit_json
from agentdbg.repl.explain import explain
from agentdbg.transcript.document import run_document, write_json

PROMPT = "(agentdbg) "


class Debugger:
    def __init__(self, session: Session, console, *, options=None, input=None, output=None,
                 history: bool = True, transcript=None, replay=None, go_live=None,
                 save: Path | None = None):
        self.session = session
        self.console = console
        self.options = options or RunOptions(model_desc="", model=session.config.model,
                                             provider_name=session.provider.name)
        o = self.options
        self.explain, self.lang, self.profile, self.full = o.explain, o.lang, o.profile, o.full
        self.save_path = save
        self.transcript = transcript          # the live TranscriptWriter, if any
        self.replay = replay                  # an engine Replay when stepping a recording
        self.go_live_with = go_live           # what 'live' switches to (a drivers.launch.GoLive)
        self.breakpoints = Breakpoints()
        self.quitting = False
        self.shown = 0
        self._warned = False
        self._io = {"input": input, "output": output}
        self.prompt = self._prompt_session(history)

    def _prompt_session(self, history: bool):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        from agentdbg.paths import data_dir
        from agentdbg.repl.completion import DebuggerCompleter

        hist: InMemoryHistory | FileHistory = InMemoryHistory()
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
        o = self.options
        self.console.print(view_run.render_header(o.model_desc, self.session.toolset,
                                                  o.offline, o.title))
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
        reason = self.session.stop_reason
        return reason.exit_status if reason is not None else ExitStatus.CANCELLED

    def _check_transcript(self) -> None:
        writer = self.transcript
        if writer is not None and writer.error is not None and not self._warned:
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
        what = "model request" if s.phase is Phase.MODEL else "tool execution"
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
        reason = self.replay.pause_reason()
        if reason is not None:
            self.say(reason)
            return False
        return True

    def go_live(self) -> None:
        """Leave the recording: a live model, and the tools of --tools (loaded only now)."""
        if self.replay is None or self.replay.live:
            raise CommandError("already live: this session is not playing a recording")
        live = self.go_live_with
        if live is None:
            from agentdbg.providers.offline import OfflineModel

            provider, toolset = OfflineModel(), None
        else:
            provider = live.provider()
            if live.tools is not None:
                self.say(f"loading the tools of {live.tools_path}")
            toolset = live.tools() if live.tools is not None else None
        self.replay.go_live(provider, toolset)
        self.session.config.approve = "ask"
        tools = (f"the tools of {self.session.toolset.path}" if toolset is not None else
                 "no tools file (calls will answer: no recorded result; pass --tools)")
        self.say(f"live from here with the {provider.name} model and {tools}")

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
        return (check(s.request().body(), self.profile, in_progress=s.phase is Phase.TOOLS)
                + view_run.answer_findings(s))

    def report(self, event) -> None:
        if isinstance(event, ModelReplied):
            self.console.print(view_run.render_turn_title(event.turn))
            if event.stats.note:
                self.console.print(view_run.render_note(event.stats.note))
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
            meta=view_run.message_meta(self.session), in_progress=self.session.phase is Phase.TOOLS))

    def banner(self) -> None:
        s = self.session
        if s.stop_reason is not None:
            empty = " (warning: the answer is empty)" if view_run.empty_answer(s) else ""
            self.console.print(Text.assemble(
                ("■ stopped: ", "bold"), (s.stop_reason.value, "bold green" if
                                          s.stop_reason is StopReason.COMPLETED and not empty
                                          else "bold red" if not empty else "bold yellow"),
                (empty, "bold yellow"),
                f" — {safe(s.stop_detail)}. 'rewind N' or 'retry' to go on, 'save PATH', 'quit'."))
        elif s.phase is Phase.MODEL:
            self.console.print(Text(f"▶ next: ask the model (turn {len(s.turns) + 1}) with "
                                    f"{len(s.messages)} message(s)", style="bold"))
        else:
            calls = [f"{safe(c.get('id'))} {safe(call_name(c))}({shown_arguments(call_arguments(c))})"
                     for c in s.pending]
            head = f"▶ next: execute {len(calls)} call(s):"
            if len(calls) == 1 and cell_len(f"{head} {calls[0]}") <= self.console.width:
                self.console.print(Text(f"{head} {calls[0]}", style="bold"))
            else:  # a call a line, folded under itself: an id never parts from its name
                self.console.print(Text(head, style="bold"))
                width = max(20, self.console.width - 4)
                for call in calls:
                    parts = chop_cells(call, width) if self.console.is_terminal else [call]
                    self.console.print(Text("\n".join("    " + p for p in parts), style="bold"),
                                       soft_wrap=True)
        if self.explain:
            self.console.print(Text(safe(explain(s, self.lang)), style="italic cyan"))

    def say(self, text: str) -> None:
        self.console.print(Text(safe(text)))

    def error(self, text: str) -> None:
        self.console.print(Text(f"*** {safe(text)}", style="red"))

    def print_json(self, obj, title: str = "") -> None:
        if title:
            self.say(title + ":")
        self.console.print(Text(safe(json.dumps(obj, ensure_ascii=False, indent=2))))

    def show_tools(self) -> None:
        from agentdbg.render.tools import tools_table

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
        from agentdbg.render.budget import budget_of_session, render_budget

        self.console.print(render_budget(budget_of_session(self.session)))

    # -- editing and saving -------------------------------------------------------------
    def edit_json(self, value, what: str):
        """Edit ``value`` as JSON in $VISUAL/$EDITOR, or inline; ValueError when unusable."""
        if not (os.environ.get("VISUAL") or os.environ.get("EDITOR")):
            self.say("inline editor: Esc then Enter accepts, Ctrl-C cancels")
        return edit_json(value, self._io, what)

    def save(self, path) -> None:
        """Copy the transcript so far; from memory when the transcript could not be written.
        Never over the recording being replayed (by any path or link)."""
        from agentdbg.paths import same_file
        from agentdbg.transcript.runs import being_written

        if self.replay is not None and same_file(self.replay.model.path, path):
            raise CommandError(f"{path} is the recording being replayed; writing there would "
                               "destroy it: save to another path")
        busy = being_written(Path(path)) if os.path.isfile(path) else None
        if busy is not None and not (self.transcript is not None and
                                     same_file(self.transcript.path, path)):
            raise CommandError(f"{path}: {busy}; save to another path")
        if self.transcript is not None and self.transcript.error is None:
            self.transcript.copy_to(Path(path))
            return
        from agentdbg.transcript.redact import Redactor, safe_url, url_secrets

        o = self.options  # redacted as the transcript would have been
        redact = self.transcript.redact if self.transcript is not None else \
            Redactor(o.redact, [*o.secrets, *url_secrets(o.base_url)])
        write_json(path, redact(run_document(self.session, model=self.session.config.model,
                                             base_url=safe_url(o.base_url))))
