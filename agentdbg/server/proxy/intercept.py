"""--intercept: pause each proxied request at a prompt before it is forwarded.

The server runs in a thread; each request handler waits on a future that this
prompt (in the main thread) resolves. Commands: ``forward`` (Enter), ``show``,
``edit``, ``inject N KIND``, ``respond TEXT|JSON``, ``block``, ``help``, ``quit``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import queue
from typing import TYPE_CHECKING

from rich.text import Text

from agentdbg.i18n import N_, _, json_problem, tr
from agentdbg.render.safe import safe
from agentdbg.server.proxy.app import Decision
from agentdbg.wire import codec as codecs

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console
    from rich.table import Table

#: each command's words (typed as they are, in every language) and what it does
HELP = [
    ("forward (Enter)", N_("send the request upstream (edited, if you edited it)")),
    ("show", N_("the request body as JSON")),
    ("edit", N_("edit the body in $EDITOR (inline editor without one); JSON is validated")),
    ("inject N KIND", N_("replace tool message N's content with a fault (timeout, not_found, empty, "
                         "invalid_json, internal_error, oversized, rate_limited, denied, or JSON)")),
    ("respond TEXT|JSON", N_("answer the app yourself (text, or an assistant message as JSON); "
                             "not forwarded")),
    ("block", N_("answer the app with a 400 listing the findings, in the request's own format")),
    ("quit", N_("stop the proxy")),
]


def render_help() -> Table:
    """The commands in two columns: a description wraps inside its own column at any width."""
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column()
    for usage, text in HELP:
        table.add_row(usage, _(text))
    return table


class Interceptor:
    def __init__(self, console: Console, *, input: Input | None = None,
                 output: Output | None = None) -> None:
        from prompt_toolkit import PromptSession

        self.console = console
        self.pending: queue.Queue = queue.Queue()
        self.prompt: PromptSession[str] = PromptSession(input=input, output=output)
        self._io = {"input": input, "output": output}

    async def decide(self, conv: int | None, body: dict, findings: list, wire: str = "chat") -> Decision:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.pending.put((conv, body, findings, future, wire))
        return await asyncio.wrap_future(future)

    def loop(self) -> None:
        """Answer paused requests until 'quit', Ctrl-C or end of input."""
        while True:
            try:
                conv, body, findings, future, wire = self.pending.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                if not self.handle(conv, body, findings, future, wire):
                    return
            finally:
                if not future.done():
                    future.set_result(Decision(action="block"))

    def say(self, text: str, style: str = "") -> None:
        self.console.print(Text(safe(text), style=style))

    def handle(self, conv: int | None, body: dict, findings: list,
               future: concurrent.futures.Future[Decision], wire: str = "chat") -> bool:
        self.say(_("paused before forwarding (conversation {n}); 'help' lists commands").format(n=conv),
                 "bold")
        changed = False
        while True:
            try:
                line = self.prompt.prompt("(intercept) ")
            except (KeyboardInterrupt, EOFError):
                return False
            word, _sep, arg = line.strip().partition(" ")
            word = word or "forward"
            try:
                if word in ("forward", "continue", "c", "f"):
                    future.set_result(Decision(body=body, changed=changed))
                    return True
                if word == "block":
                    future.set_result(Decision(action="block"))
                    return True
                if word == "respond":
                    future.set_result(Decision(action="respond", body=body, reply=_reply(arg)))
                    return True
                if word == "quit":
                    return False
                if word == "show":
                    self.say(json.dumps(body, ensure_ascii=False, indent=2))
                elif word == "edit":
                    body, changed = self._edit(body, wire) or (body, changed)
                elif word == "inject":
                    if not codecs.get(wire).chat_native:
                        raise ValueError(_("inject works on Chat Completions bodies; use 'edit' "
                                           "to change a tool result here"))
                    self._inject(body, arg)
                    changed = True
                elif word == "help":
                    self.console.print(render_help())
                else:
                    self.say("*** " + _("unknown command {word}; 'help' lists them").format(
                        word=repr(word)), "red")
            except ValueError as exc:   # a text, or a Msg (a fault the engine names)
                self.say(f"*** {tr(exc.args[0]) if exc.args else exc}", "red")

    def _edit(self, body: dict, wire_name: str = "chat") -> tuple[dict, bool]:
        from agentdbg.checker import summary
        from agentdbg.checker.formats import analyze
        from agentdbg.repl.editor import edit_json

        wire = codecs.get(wire_name)
        new = edit_json(body, self._io, _("body"))
        problem = wire.shape_error(new)
        if problem is not None:
            # the API's own words verbatim
            raise ValueError(_("not a {api} request body ({problem}); unchanged").format(
                api=wire.label, problem=problem[0]))
        self.say(_("body edited; the checker now says: {summary}").format(
            summary=summary(analyze(wire.name, new, 'openai')[0])))
        return new, True

    def _inject(self, body: dict, arg: str) -> None:
        from agentdbg.engine.faults import parse_fault

        index, _sep, kind = arg.strip().partition(" ")
        messages = body["messages"]
        if not index.isdigit() or int(index) >= len(messages):
            raise ValueError(_("usage: inject N KIND, N a message index 0..{last}").format(
                last=len(messages) - 1))
        message = messages[int(index)]
        if not isinstance(message, dict) or message.get("role") != "tool":
            raise ValueError(_("message {index} is not a tool result").format(index=index))
        fault = parse_fault(kind)
        before = message.get("content")
        message["content"] = fault.content(_tool_name(messages, int(index)),
                                           before if isinstance(before, str) else None)
        self.say(_("message {index} now holds the {fault} fault").format(index=index,
                                                                            fault=fault.describe()))


def _tool_name(messages: list, index: int) -> str:
    """The name of the call tool message ``index`` answers (the pairing analysis decides)."""
    from agentdbg.checker.pairing import analyze

    where = analyze(messages).call_of.get((index,))
    if where is None:
        return "?"
    fn = messages[where[0]]["tool_calls"][where[1]].get("function") or {}
    return str(fn.get("name") or "?")


def _reply(arg: str) -> dict:
    arg = arg.strip()
    if not arg:
        raise ValueError(_("usage: respond TEXT, or respond {{assistant message JSON}}").format())
    if arg.startswith("{"):
        try:
            message = json.loads(arg)
        except ValueError as exc:
            raise ValueError(_("not valid JSON ({error})").format(error=tr(json_problem(exc)))) from None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            raise ValueError(_('a scripted response is an assistant message: {json}').format(
                json='{"role": "assistant", ...}'))
        return message
    return {"role": "assistant", "content": arg}
