"""The scripted model: plays a YAML list of assistant turns in order.

    turns:
      - tool_calls:
          - name: query_order
            arguments: {order_id: ORD-2026-001}   # a mapping is JSON-encoded
            id: call_1                            # optional; generated when absent
      - content: "Your order is on its way."

``arguments`` given as a string is sent verbatim, so broken JSON can be
scripted on purpose. Running past the last turn is a clear error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentdbg.errors import ConfigError, ProviderError
from agentdbg.providers.base import ModelReply, ModelRequest, estimated_usage, tool_call


class ScriptedModel:
    name = "scripted"

    def __init__(self, turns: list[dict], source: str = "<script>"):
        self.turns = turns
        self.source = source
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        from agentdbg.yamlfile import parse, read_text

        p = Path(path)
        data, _ = parse(p, read_text(p, "script file"))
        return cls(parse_turns(data, str(p)), str(p))

    def complete(self, request: ModelRequest) -> ModelReply:
        if self.position >= len(self.turns):
            raise ProviderError(f"script {self.source} has {len(self.turns)} turn(s); "
                                f"the run asked for turn {self.position + 1}")
        message = self.turns[self.position]
        self.position += 1
        message = json.loads(json.dumps(message))  # a fresh copy each time
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return ModelReply(message=message, usage=estimated_usage(request, message),
                          finish_reason=finish,
                          note=f"scripted turn {self.position} of {len(self.turns)}")


def parse_turns(data: Any, source: str) -> list[dict]:
    if isinstance(data, dict) and "turns" in data:
        data = data["turns"]
    if not isinstance(data, list) or not data:
        raise ConfigError(f"{source}: expected a non-empty list of turns (or a mapping with 'turns')")
    turns = []
    for i, raw in enumerate(data):
        where = f"{source}: turns[{i}]"
        if not isinstance(raw, dict) or not ({"content", "tool_calls"} & set(raw)):
            raise ConfigError(f"{where}: each turn needs 'content' and/or 'tool_calls'")
        message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
        calls = raw.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise ConfigError(f"{where}: 'tool_calls' must be a list")
            message["tool_calls"] = [_call(c, f"{where}.tool_calls[{j}]", i, j)
                                     for j, c in enumerate(calls)]
        turns.append(message)
    return turns


def _call(raw: Any, where: str, turn: int, j: int) -> dict:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"{where}: each call needs a 'name'")
    args = raw.get("arguments", {})
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    call_id = raw.get("id", f"call_s{turn + 1}_{j + 1}")
    return tool_call(str(call_id), raw["name"], args)
