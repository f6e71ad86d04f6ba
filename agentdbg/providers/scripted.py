"""The scripted model: plays a YAML list of assistant turns in order.

    turns:
      - tool_calls:
          - name: query_order
            arguments: {order_id: ORD-2026-001}   # a mapping is JSON-encoded
            id: call_1                            # optional; generated when absent
      - content: "Your order is on its way."

``arguments`` given as a string is sent verbatim, so broken JSON can be
scripted on purpose. Running past the last turn is a clear error.

Which requests a turn answers: by default, the next request, whatever it is. A client that
sends requests of its own besides its tool loop (Gemini CLI asks a routing classifier first,
with no tools) says so with ``when``, on a turn or for the whole script:

    when: {tools: true}         # the script answers requests that offer tools
    turns:
      - tool_calls: [{name: run_shell_command, arguments: {command: ls}}]
      - content: done
        when: {tool: run_shell_command, text: "list the files"}   # this turn's own

``tools: true|false`` (the request offers tools, or none), ``tool: NAME`` (it offers that
tool), ``text: WORDS`` (its latest user message contains them, case ignored); a turn's own
``when`` replaces the script's. A request the next turn's ``when`` does not match is not the
script's: the offline model answers it (a request asking for JSON gets a value of its schema)
and the turn waits for the next request. So does a request, after the last turn, that the
script's ``when`` does not match; one it matches gets the played-out error, as without
``when``.

Agents that run at the same time (a subagent's requests race with its parent's) each play
their own turns: ``agents`` lists further scripts, each with its own ``when`` (required) and
``turns``. A request one of them matches (the first, in their order) takes that one's next
turn; every other request is the main ``turns``':

    turns:                                  # the main agent
      - tool_calls: [{name: spawn_agent, arguments: {task_name: greet, message: Say hello.}}]
      - tool_calls: [{name: wait_agent, arguments: {}}]
      - content: The subagent said hello.
    agents:
      - when: {text: "Task name: /root/greet"}   # the subagent's requests
        turns:
          - tool_calls: [{name: exec_command, arguments: {cmd: echo hello}}]
          - content: hello
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.errors import ConfigError, ProviderError
from agentdbg.i18n import Msg, tr
from agentdbg.providers.base import ModelReply, ModelRequest, estimated_usage, tool_call
from agentdbg.wire.common import text_of

WHEN_KEYS = ("tools", "tool", "text")


@dataclass(frozen=True)
class When:
    """Which requests a turn answers (each condition given must hold)."""

    tools: bool | None = None
    tool: str | None = None
    text: str | None = None

    def missing(self, request: ModelRequest) -> Msg | None:
        """What the request lacks (None: it matches), said as 'a request that …' ends."""
        names = {_tool_name(t) for t in request.tools}
        if self.tools is not None and bool(request.tools) != self.tools:
            return Msg("offers tools") if self.tools else Msg("offers no tools")
        if self.tool is not None and self.tool not in names:
            return Msg("offers the tool {tool}", {"tool": repr(self.tool)})
        if self.text is not None and self.text.casefold() not in _latest_user_text(request).casefold():
            return Msg("asks {text}", {"text": repr(self.text)})
        return None


class ScriptedModel:
    name = "scripted"

    def __init__(self, turns: list[dict], source: str = "<script>", *,
                 whens: list[When | None] | None = None, when: When | None = None,
                 agents: list[ScriptedModel] | None = None):
        self.turns = turns
        self.source = source
        self.position = 0
        self.whens = whens or [None] * len(turns)
        self.when = when            # the script's own: for the turns without one
        self.agents = agents or []  # other agents' scripts, each with its own ``when``
        self.label = ""             # "agents[0]: " for one of those
        self._offline: Any = None

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        from agentdbg.yamlfile import parse, read_text

        p = Path(path)
        data, _ = parse(p, read_text(p, "script file"))
        return cls.from_data(data, str(p))

    @classmethod
    def from_data(cls, data: Any, source: str) -> ScriptedModel:
        turns, whens = parse_script(data, source)
        return cls(turns, source, whens=whens, when=script_when(data, source),
                   agents=parse_agents(data, source))

    def complete(self, request: ModelRequest) -> ModelReply:
        agent = next((a for a in self.agents if a.when is not None
                      and a.when.missing(request) is None), None)
        if agent is not None:
            return agent.complete(request)
        if self.position >= len(self.turns):
            lacks = self.when.missing(request) if self.when is not None else None
            if lacks is not None:
                return self._aside(request, Msg("the script is played out and answers only a "
                                                "request that {lacks}", {"lacks": lacks}))
            said = Msg("script {source} has {n} turn(s); the run asked for turn {turn}",
                       {"source": self.source, "n": len(self.turns), "turn": self.position + 1})
            raise ProviderError(str(said), shown=said)
        when = self.whens[self.position] or self.when
        lacks = when.missing(request) if when is not None else None
        if lacks is not None:
            return self._aside(request, Msg("turn {turn} of the script waits for a request that "
                                            "{lacks}", {"turn": self.position + 1, "lacks": lacks}))
        message = self.turns[self.position]
        self.position += 1
        message = json.loads(json.dumps(message))  # a fresh copy each time
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return ModelReply(message=message, usage=estimated_usage(request, message),
                          finish_reason=finish,
                          note=self.label + tr(Msg("scripted turn {turn} of {n}",
                                                   {"turn": self.position, "n": len(self.turns)})))

    def _aside(self, request: ModelRequest, why: Msg) -> ModelReply:
        """A request that is not the script's: the offline model answers it."""
        if self._offline is None:
            from agentdbg.providers.offline import OfflineModel

            self._offline = OfflineModel()
        reply: ModelReply = self._offline.complete(request)
        reply.note = tr(Msg("not the script's ({why}): the offline model answered — {note}",
                            {"why": why, "note": reply.note}))
        return reply


def parse_turns(data: Any, source: str) -> list[dict]:
    return parse_script(data, source)[0]


def parse_script(data: Any, source: str) -> tuple[list[dict], list[When | None]]:
    """The turns (assistant messages) and each one's own ``when``."""
    if isinstance(data, dict) and "turns" in data:
        data = data["turns"]
    if not isinstance(data, list) or not data:
        raise ConfigError(Msg("{source}: expected a non-empty list of turns (or a mapping with 'turns')",
                              {"source": source}))
    turns, whens = [], []
    for i, raw in enumerate(data):
        where = f"{source}: turns[{i}]"
        if not isinstance(raw, dict) or not ({"content", "tool_calls"} & set(raw)):
            raise ConfigError(Msg("{where}: each turn needs 'content' and/or 'tool_calls'", {"where": where}))
        message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
        calls = raw.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise ConfigError(Msg("{where}: 'tool_calls' must be a list", {"where": where}))
            message["tool_calls"] = [_call(c, f"{where}.tool_calls[{j}]", i, j)
                                     for j, c in enumerate(calls)]
        turns.append(message)
        whens.append(parse_when(raw["when"], f"{where}.when") if "when" in raw else None)
    return turns, whens


def script_when(data: Any, source: str) -> When | None:
    """The script's own ``when`` (a key beside ``turns``), if it has one."""
    if isinstance(data, dict) and "when" in data:
        return parse_when(data["when"], f"{source}: when")
    return None


def parse_agents(data: Any, source: str) -> list[ScriptedModel]:
    """The scripts of the other agents (``agents``: each a ``when`` and its ``turns``)."""
    raw = data.get("agents") if isinstance(data, dict) else None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(Msg("{source}: agents: expected a list of scripts (each a 'when' and 'turns')",
                              {"source": source}))
    out = []
    for k, agent in enumerate(raw):
        where = f"{source}: agents[{k}]"
        if not isinstance(agent, dict) or "when" not in agent or "turns" not in agent:
            raise ConfigError(Msg("{where}: each agent's script needs 'when' and 'turns'", {"where": where}))
        if "agents" in agent:
            raise ConfigError(Msg("{where}: an agent's script has no 'agents' of its own", {"where": where}))
        script = ScriptedModel.from_data(agent, f"{source} agents[{k}]")
        script.label = f"agents[{k}]: "
        out.append(script)
    return out


def parse_when(raw: Any, where: str) -> When:
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(Msg("{where}: expected a mapping with one or more of {keys}",
                              {"where": where, "keys": ", ".join(WHEN_KEYS)}))
    unknown = [str(k) for k in raw if k not in WHEN_KEYS]
    if unknown:
        raise ConfigError(Msg("{where}: unknown key {key} (known: {keys})",
                              {"where": where, "key": repr(unknown[0]), "keys": ", ".join(WHEN_KEYS)}))
    tools = raw.get("tools")
    if tools is not None and not isinstance(tools, bool):
        raise ConfigError(Msg("{where}.tools: expected true or false", {"where": where}))
    for key in ("tool", "text"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key]):
            raise ConfigError(Msg("{where}.{key}: expected a non-empty string", {"where": where, "key": key}))
    return When(tools, raw.get("tool"), raw.get("text"))


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    fn = tool.get("function")
    name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
    return name if isinstance(name, str) else None


def _latest_user_text(request: ModelRequest) -> str:
    for m in reversed(request.messages):
        if isinstance(m, dict) and m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def _call(raw: Any, where: str, turn: int, j: int) -> dict:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(Msg("{where}: each call needs a 'name'", {"where": where}))
    args = raw.get("arguments", {})
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    call_id = raw.get("id", f"call_s{turn + 1}_{j + 1}")
    return tool_call(str(call_id), raw["name"], args)
