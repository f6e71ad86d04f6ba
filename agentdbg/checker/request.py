"""What the checker judges: a Chat Completions request (messages + tool parameters)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MISSING: Any = object()


@dataclass
class CheckRequest:
    messages: Any                     # a list when well-formed; the checker judges what it gets
    tools: Any = MISSING              # MISSING: not sent
    tool_choice: Any = MISSING
    parallel_tool_calls: Any = MISSING
    functions: Any = MISSING          # legacy
    function_call: Any = MISSING      # legacy (request-level)
    _names: dict | None = field(default=None, repr=False)

    @classmethod
    def from_body(cls, body: dict) -> CheckRequest:
        return cls(messages=body.get("messages"),
                   tools=body.get("tools", MISSING),
                   tool_choice=body.get("tool_choice", MISSING),
                   parallel_tool_calls=body.get("parallel_tool_calls", MISSING),
                   functions=body.get("functions", MISSING),
                   function_call=body.get("function_call", MISSING))

    def tools_sent(self) -> bool:
        return isinstance(self.tools, list) and bool(self.tools)

    def tool_schemas(self) -> dict[str, Any]:
        """name -> parameters schema (None when absent), from ``tools`` or legacy ``functions``."""
        if self._names is None:
            names: dict[str, Any] = {}
            for t in self.tools if isinstance(self.tools, list) else []:
                kind = t.get("type") if isinstance(t, dict) else None
                fn = t.get("custom" if kind == "custom" else "function") if isinstance(t, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    names[fn["name"]] = fn.get("parameters") if kind != "custom" else None
            for fn in self.functions if isinstance(self.functions, list) else []:
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    names[fn["name"]] = fn.get("parameters")
            self._names = names
        return self._names

    def declares_tools(self) -> bool:
        return isinstance(self.tools, list) or isinstance(self.functions, list)
