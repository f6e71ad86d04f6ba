"""The step-mode driver: pauses before every phase, reads commands, never crashes.

Like pdb over bdb: the ``Session`` decides what happens; this class decides when to step
and which command to run (``Screen``, its mixin, what to show). Errors print one
``*** ...`` line and the prompt comes back. Ctrl-C during a model request or a tool run
cancels that phase (nothing is appended); Ctrl-C or Ctrl-D at the prompt asks to quit.
Commands come from the prompt, from ``-c`` and ``source`` (pdb's), and from a lesson file,
whose steps run one after another up to a pause; Enter then goes on with the lesson.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agentdbg import i18n
from agentdbg.checker import check
from agentdbg.engine.phases import Phase
from agentdbg.engine.session import ApprovalNeeded, Event, RequestBlocked, Session, ToolsExecuted
from agentdbg.errors import ExitStatus, Terminated
from agentdbg.i18n import _, tr
from agentdbg.options import GoLive, RunOptions
from agentdbg.render import run as view_run
from agentdbg.repl.breakpoints import Breakpoints
from agentdbg.repl.commands import CommandError, lookup
from agentdbg.repl.editor import edit_json
from agentdbg.repl.lesson import Lesson, Step
from agentdbg.repl.screen import Screen, go_on
from agentdbg.repl.table import cannot_write
from agentdbg.transcript.document import run_document, write_json
from agentdbg.transcript.events import Action, Blocked, Stop

if TYPE_CHECKING:
    from rich.console import Console

    from agentdbg.checker.findings import Finding
    from agentdbg.engine.replaying import ActionReplayed, Replay
    from agentdbg.providers.base import Provider
    from agentdbg.toolspec import ToolSet
    from agentdbg.transcript.writer import TranscriptWriter

PROMPT = "(agentdbg) "
#: commands a saved lesson leaves out of its steps (breakpoints are saved on their own; clearing
#: the screen changes nothing a lesson replays)
NOT_STEPS = ("lesson", "save", "help", "quit", "break", "breaks", "clear", "source", "cls")


@dataclass
class Before:
    """The state before a step, for ``back``: the messages, and the user's pending faults."""
    messages: list
    injections: dict
    fails: dict

    def still_leads(self, messages: list) -> bool:
        """The history still starts with these very messages (no edit or drop since)."""
        return len(messages) >= len(self.messages) and \
            all(a is b for a, b in zip(self.messages, messages))


class Debugger(Screen):
    def __init__(self, session: Session, console: Console, *, options: RunOptions | None = None,
                 input: Any = None, output: Any = None, history: bool = True,
                 transcript: TranscriptWriter | None = None, replay: Replay | None = None,
                 go_live: GoLive | None = None, save: Path | None = None,
                 lesson: Lesson | None = None, commands: list[str] | tuple[str, ...] = ()) -> None:
        self.session = session
        self.console = console
        self.options = options or RunOptions(model_desc="", model=session.config.model,
                                             provider_name=session.provider.name)
        o = self.options
        self.explain, self.lang, self.profile, self.full = o.explain, o.lang, o.profile, o.full
        self.present = o.present
        i18n.use(self.lang)
        self.save_path = save
        self.transcript = transcript          # the live TranscriptWriter, if any
        self.replay = replay                  # an engine Replay when stepping a recording
        self.go_live_with = go_live           # what 'live' switches to (a drivers.launch.GoLive)
        self.breakpoints = Breakpoints()
        self.quitting = False
        self.last = None                      # the last event or action, for narration
        self.seen: list = []                  # the messages as last shown
        self.befores: list[Before] = []       # for 'back'
        self.typed: list[str] = []            # the commands run, for 'lesson PATH'
        self.lesson = lesson
        self.step_at = 0                      # the lesson's next step
        self.paused_at = -1                   # the step whose pause was shown
        self.fault_notes: dict[str, tuple[str, bool]] = {}
        self.startup = list(commands)
        self._warned = False
        self._io = {"input": input, "output": output}
        self.prompt = self._reader(history)

    def _reader(self, history: bool) -> Any:
        from agentdbg.repl.reader import PipedLines, piped, prompt_session

        if piped(self._io):
            return PipedLines(self.console)
        from agentdbg.repl.completion import DebuggerCompleter

        return prompt_session(DebuggerCompleter(self), self._io, history)

    # -- the loop ----------------------------------------------------------------------
    def loop(self) -> ExitStatus:
        self.header()
        self.say(_("step mode: Enter or 'next' performs the pending phase; 'help' lists commands."))
        self.show_new()
        self.banner()
        try:
            self._start_lesson()
            self._start_replay()
            self.run_commands(self.startup)
            self.run_lesson()
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
                if not line.strip() and self._lesson_left():
                    self.run_lesson(resume=True)
                    continue
                self.dispatch(line)
        except Terminated:
            pass
        finally:
            if not self.session.done:
                self.session.cancel(i18n.Msg(i18n.N_("quit from step mode before the run ended")))
            if self.save_path is not None:
                self.save(self.save_path)
        reason = self.session.stop_reason
        return reason.exit_status if reason is not None else ExitStatus.CANCELLED

    def _check_transcript(self) -> None:
        writer = self.transcript
        if writer is not None and writer.error is not None and not self._warned:
            self._warned = True
            self.error(_("the transcript {path} cannot be written ({error}); the run is kept in "
                         "memory: 'save PATH' writes it somewhere else").format(
                path=writer.path, error=writer.error))

    def dispatch(self, line: str) -> None:
        word, _sep, arg = line.strip().partition(" ")
        try:
            cmd = lookup(word or "next")
            cmd.fn(self, arg)
            if cmd.name not in NOT_STEPS:            # a command that failed is no step either
                self.typed.append(line.strip() or "next")
        except CommandError as exc:
            self.error(str(exc))
        except Exception as exc:  # noqa: BLE001 - a command must never kill the debugger
            self.error(f"{type(exc).__name__}: {tr(exc.args[0]) if exc.args else exc}")

    def run_commands(self, lines: list[str]) -> None:
        """Run ``lines`` as if typed (``-c``, ``source``): each shown after the prompt."""
        for line in lines:
            if self.quitting:
                return
            self.echo(line)
            self.dispatch(line)

    def echo(self, line: str) -> None:
        from rich.text import Text

        from agentdbg.render.safe import safe

        self.console.print(Text(PROMPT + safe(line), style="bold"), soft_wrap=True)

    def confirm_quit(self) -> bool:
        try:
            answer = self.prompt.prompt(_("Really quit? [y/N] "))
        except (KeyboardInterrupt, EOFError):
            return True
        return answer.strip().lower() in ("y", "yes", _("y"))

    def ask(self, question: str) -> str:
        """A question at the prompt; Ctrl-C or Ctrl-D is no answer."""
        try:
            return self.prompt.prompt(question)
        except (KeyboardInterrupt, EOFError):
            return ""

    def set_language(self, lang: str) -> None:
        i18n.use(lang)
        self.lang = lang

    # -- lessons -------------------------------------------------------------------------
    def _start_lesson(self) -> None:
        lesson = self.lesson
        if lesson is None:
            return
        if lesson.title:
            self.say(_("lesson: {title}").format(title=lesson.title), "bold")
        toolset = self.session.toolset
        for kind, value, note in lesson.breakpoints:
            try:
                self.breakpoints.add_checked(kind, value, toolset, note)
            except ValueError as exc:
                self.error(tr(exc.args[0]))
        for inj in lesson.injections:
            from agentdbg.engine.faults import Fault

            try:
                said = self.session.fail(inj["tool"], Fault(inj["kind"]), inj["sticky"])
            except KeyError as exc:
                self.error(tr(exc.args[0]))
                continue
            self.say(tr(said))      # as 'fail' says it (a replay of the lesson says it too)
            if inj["note"] or inj["pause"]:
                self.fault_notes[inj["tool"]] = (inj["note"], inj["pause"])

    def _start_replay(self) -> None:
        """The recording's faults set before the first request are set now, said as live
        (a lesson's injections): not a step the replay stops at."""
        if self.replay is None:
            return
        for said in self.replay.setup():
            self.say(tr(said))

    def _lesson_left(self) -> bool:
        return self.lesson is not None and self.step_at < len(self.lesson.steps)

    def run_lesson(self, resume: bool = False) -> None:
        """The lesson's steps, one after another, up to a step with a pause (shown, not run:
        Enter runs it) or the end; a breakpoint or a fault with a pause stops them too."""
        while self._lesson_left() and not self.quitting:
            assert self.lesson is not None
            step: Step = self.lesson.steps[self.step_at]
            if step.pause and self.paused_at != self.step_at:
                self.paused_at = self.step_at
                if step.note:
                    self.note(step.note)
                self.say(_("(lesson paused before: {command}; Enter runs it, or type a command)").format(
                    command=step.command), "bold")
                return
            if step.note and not step.pause:
                self.note(step.note)
            self.step_at += 1
            self.echo(step.command)
            self.held = False
            self.dispatch(step.command)
            if self.held:
                return
        if resume and not self._lesson_left():
            self.say(_("(the lesson's steps are done; Enter or 'next' goes on by hand)"))

    held = False   # a breakpoint or a fault note with a pause holds the lesson
    stale_said = ""  # the stale notice said last (said in full once)

    def write_lesson(self, path: Path) -> None:
        from agentdbg.repl.lesson import dump_lesson

        first = next((m.get("content") for m in self.session.messages if isinstance(m, dict)
                      and m.get("role") == "user"), None)
        o = self.options
        options = {k: v for k, v in (("lang", self.lang), ("explain", self.explain),
                                     ("present", self.present), ("profile", o.profile))
                   if v not in (None, False, "en", "openai")}
        lesson = Lesson(question=first if isinstance(first, str) else o.question,
                        title=self.lesson.title if self.lesson else "", options=options,
                        breakpoints=[(b.kind, b.value, b.note) for b in self.breakpoints.items],
                        steps=[Step(c) for c in self.typed],
                        exercises=self.lesson.exercises if self.lesson else [])
        try:
            path.write_text(dump_lesson(lesson), encoding="utf-8")
        except OSError as exc:
            raise cannot_write(path, exc) from None

    # -- moving --------------------------------------------------------------------------
    def advance(self) -> Event | ActionReplayed | None:
        """One step: the pending phase, or in a replay the recording's next user action."""
        s = self.session
        if self.replay is not None:
            ready = self._replay_ready()
            if ready is not True:
                return ready or None
        if s.done:
            raise CommandError(i18n.Msg("the run has stopped ({reason}). {hint}",
                                        {"reason": view_run.stop_label(s.stop_reason.value),
                                         "hint": go_on(s)}))
        what = _("model request") if s.phase is Phase.MODEL else _("tool execution")
        before = Before(list(s.messages), dict(s.injections), dict(s.fails))
        try:
            event = s.step()
        except Terminated:
            raise
        except KeyboardInterrupt:
            self.say(_("interrupted: the {what} was cancelled; nothing was appended").format(what=what))
            return None
        if not isinstance(event, (RequestBlocked, ApprovalNeeded)):   # those changed nothing
            self.befores.append(before)
        elif self.replay is not None and isinstance(self.replay.model.peek(), Blocked):
            self.replay.model.pop()     # the recording's own blocked request: this one
        self.last = event
        self.report(event)
        self.show_new()
        self.banner()
        self._fault_note(event)
        return event

    def _fault_note(self, event: Event) -> None:
        if not isinstance(event, ToolsExecuted):
            return
        for o in event.outcomes:
            note, pause = self.fault_notes.pop(o.name, ("", False)) if o.injected else ("", False)
            if note:
                self.note(note)
            self.held = self.held or pause

    def back(self) -> None:
        """The phase before the last step, re-running nothing."""
        if not self.befores:
            raise CommandError(i18n.Msg("nothing to go back to: no step was taken yet"))
        before = self.befores[-1]
        if not before.still_leads(self.session.messages):
            self.befores.clear()
            raise CommandError(i18n.Msg("the history was changed since the last step: 'back' "
                                        "cannot return to it ('rewind N' can)"))
        self.befores.pop()
        self.session.back(len(before.messages))
        self.session.injections, self.session.fails = before.injections, before.fails
        kept = len(before.messages)
        self.say((_("back: message 0, as before the last step") if kept == 1 else
                  _("back: messages 0–{last}, as before the last step")).format(last=kept - 1))
        self.changed()

    def _replay_ready(self) -> bool | ActionReplayed:
        """The recording's next user action is a step of its own, said and narrated as live
        (True: go on with the pending phase; a recorded ``send`` goes on with its request, as
        typing it does). A request the recording shows blocked is blocked again by the same
        check, as a phase of its own. Else the rest of the recorded actions are re-applied
        (said, one line each) and stale recorded responses are not played unknowingly."""
        assert self.replay is not None
        r, s = self.replay, self.session
        upcoming = r.model.peek() if not r.live else None
        if isinstance(upcoming, (Action, Stop)):
            done = len(s.actions)
            r.sync(limit=1)
            if len(s.actions) > done:
                return self._recorded_action(s.actions[-1])
        elif isinstance(upcoming, Blocked) and len(s.actions) == r.applied and self._blocks():
            return True
        done = len(self.session.actions)
        reason = self.replay.pause_reason()
        for entry in self.session.actions[done:]:
            self.say(_("the recording does this next, as recorded: {action}").format(
                action=describe_action(entry)), "bold")
            self.last = entry
        if len(self.session.actions) > done:
            self.show_new()
        if reason is not None:
            said = said_in_language(reason)
            if said == self.stale_said and "difference" in reason.values:   # said in full once
                said = _("(the recording is stale here: 'live' continues with a live model, "
                         "'play' keeps playing it knowingly)")
            else:
                self.stale_said = said
            self.say(said)
            return False
        return True

    def _recorded_action(self, entry: dict) -> bool | ActionReplayed:
        from agentdbg.engine.replaying import ActionReplayed

        assert self.replay is not None
        self.say(_("the recording does this next, as recorded: {action}").format(
            action=describe_action(entry)), "bold")
        self.last = entry
        if entry.get("action") == "send":
            return True
        self.befores.clear()
        self.show_new()
        self.banner()
        return ActionReplayed(self.replay.just_applied[0])

    def _blocks(self) -> bool:
        """The pre-send check would block the pending request now."""
        s = self.session
        return s.phase is Phase.MODEL and s.precheck is not None and not s.force_send and \
            any(f.severity == "error" for f in s.precheck(s.request()))

    def go_live(self) -> None:
        """Leave the recording: a live model, and the tools of --tools (loaded only now)."""
        if self.replay is None or self.replay.live:
            raise CommandError(i18n.Msg("already live: this session is not playing a recording"))
        live = self.go_live_with
        provider: Provider
        if live is None:
            from agentdbg.providers.judged import JudgedModel
            from agentdbg.providers.offline import OfflineModel

            provider, toolset = JudgedModel(OfflineModel(), profile=self.profile), None
        else:
            provider = cast("Provider", live.provider())   # GoLive says object: options sits
            if live.tools is not None:                      # below providers and toolspec
                self.say(_("loading the tools of {path}").format(path=live.tools_path))
            toolset = cast("ToolSet", live.tools()) if live.tools is not None else None
        self.replay.go_live(provider, toolset)
        self.session.config.approve = "ask"
        if toolset is not None:
            self.say(_("live from here with the {model} model and the tools of {path}").format(
                model=provider.name, path=self.session.toolset.path))
        else:
            self.say(_("live from here with the {model} model and no tools file (calls will "
                       "answer: no recorded result; pass --tools)").format(model=provider.name))

    def run_to_break(self) -> None:
        from agentdbg.engine.replaying import ActionReplayed

        self.held = False
        while not self.session.done or self._recording_goes_on():
            event = self.advance()
            if event is None or isinstance(event, (ApprovalNeeded, RequestBlocked)):
                return
            findings = self.findings()
            if any(f.severity == "error" for f in findings):
                self.say(_("continue stopped: the checker has an error-level finding"))
                return
            phase = None if isinstance(event, ActionReplayed) else event  # a recorded action ran no phase
            bp = self.breakpoints.hit(self.session, phase, findings)
            if bp is not None:
                self.say(_("breakpoint {id} hit: {what}").format(id=bp.id, what=bp.describe()))
                if bp.note:
                    self.note(bp.note)
                self.held = True
                return
            if self.held:
                return

    def _recording_goes_on(self) -> bool:
        """A replay whose recording continues after a stop (a recorded rewind or retry)."""
        r = self.replay
        return r is not None and not r.live and r.model.peek() is not None

    # -- showing -----------------------------------------------------------------------
    def findings(self) -> list[Finding]:
        s = self.session
        return (check(s.request().body(), self.profile, in_progress=s.phase is Phase.TOOLS)
                + view_run.answer_findings(s))

    # -- editing and saving -------------------------------------------------------------
    def edit_json(self, value: Any, what: str) -> Any:
        """Edit ``value`` as JSON in $VISUAL/$EDITOR, or inline; ValueError when unusable."""
        if not (os.environ.get("VISUAL") or os.environ.get("EDITOR")):
            self.say(_("inline editor: Esc then Enter accepts, Ctrl-C cancels"))
        return edit_json(value, self._io, what)

    def save(self, path: str | Path) -> None:
        """Copy the transcript so far; from memory when the transcript could not be written.
        Never over the recording being replayed (by any path or link)."""
        from agentdbg.paths import same_file
        from agentdbg.transcript.runs import being_written

        if self.replay is not None and same_file(self.replay.model.path, path):
            raise CommandError(i18n.Msg("{path} is the recording being replayed; writing there "
                                        "would destroy it: save to another path", {"path": str(path)}))
        busy = being_written(Path(path)) if os.path.isfile(path) else None
        if busy is not None and not (self.transcript is not None and
                                     same_file(self.transcript.path, path)):
            raise CommandError(i18n.Msg("{path}: {busy}; save to another path",
                                        {"path": str(path), "busy": busy}))
        if self.transcript is not None and self.transcript.error is None:
            self.transcript.copy_to(Path(path))
            return
        from agentdbg.transcript.redact import Redactor, safe_url, url_secrets

        o = self.options  # redacted as the transcript would have been
        redact = self.transcript.redact if self.transcript is not None else \
            Redactor(o.redact, [*o.secrets, *url_secrets(o.base_url)])
        write_json(path, redact(run_document(self.session, model=self.session.config.model,
                                             base_url=safe_url(o.base_url))))


def said_in_language(reason: i18n.Msg) -> str:
    """Why the replay pauses, in the chosen language: a first difference it quotes is read
    back into its own template (the recorded and current values stay as they are, JSON
    included; the replay's own words for "no further request" are translated)."""
    import json

    def value(text: object) -> object:
        if not isinstance(text, str):
            return text
        found = i18n.Msg.parse(DIFFERENCE, text)
        if found is None:
            return i18n.recorded(text, nested=True)
        return i18n.Msg(DIFFERENCE, {k: _own_words(v) for k, v in found.values.items()})

    def _own_words(text: str) -> str:
        if text in OWN_WORDS:
            return _(text)
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        return _(inner) if isinstance(inner, str) and inner in OWN_WORDS else text

    return i18n.Msg(reason.template, {k: value(v) for k, v in reason.values.items()}).tr()


DIFFERENCE = "first difference at {path}: recorded {recorded}, now {now}"
#: what a replay says in place of a value (``ReplayModel.stale``), shown translated
OWN_WORDS = ("(the recording has no further request)", "(a new request)", "(absent)")


def describe_action(entry: dict) -> str:
    """A recorded action in a few words: ``rewind 2``, ``drop 1``, ``inject call_o2 timeout``."""
    kind = entry.get("action")
    if kind in ("rewind", "drop", "edit", "back"):
        return f"{kind} {entry.get('index')}"
    if kind == "inject":
        return f"inject {entry.get('tool_call_id') or entry.get('index')} {entry.get('fault')}"
    if kind == "fail":
        return f"fail {entry.get('tool')} {entry.get('fault')}{' --sticky' if entry.get('sticky') else ''}"
    return str(kind)
