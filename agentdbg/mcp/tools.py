"""An MCP tool as agentdbg sees it: an OpenAI function definition plus a run policy.

Annotations are hints from the server (the spec says so); they decide only how agentdbg
schedules a call, never whether it trusts the output:

- ``readOnlyHint: true``                        -> may run in parallel, no approval
- ``destructiveHint: true``, or ``readOnlyHint: false`` without ``destructiveHint: false``
  (the spec's default for a writing tool is destructive) -> side effects, approval first
- ``readOnlyHint: false`` + ``destructiveHint: false`` (additive) -> side effects, no approval
- no ``readOnlyHint`` at all                    -> the server's ``unhinted`` setting:
  ``trust`` runs it like a local tool, ``safe`` treats it as side-effecting with approval

A name the API would reject is reported in ``problems``, never rewritten.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentdbg.mcp.errors import McpServerError
from agentdbg.messages import TOOL_NAME_RE


@dataclass(frozen=True)
class McpToolDef:
    server: str                 # the McpServerConfig name
    name: str                   # what the model sees (prefix + remote_name)
    remote_name: str            # what the server is called with
    description: str
    parameters: dict
    annotations: dict = field(default_factory=dict)   # as the server sent them (wire names)
    output_schema: dict | None = None
    side_effects: bool = False
    approval: str = "never"     # never | always
    policy_reason: str = ""     # which hint decided the policy, for `agentdbg tools`
    problems: tuple[str, ...] = ()

    def openai_tool(self) -> dict:
        """The definition as sent in the request's ``tools`` array."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}

    def to_dict(self) -> dict:
        return {"server": self.server, "name": self.name, "remote_name": self.remote_name,
                "description": self.description, "parameters": self.parameters,
                "annotations": self.annotations, "output_schema": self.output_schema,
                "side_effects": self.side_effects, "approval": self.approval,
                "policy_reason": self.policy_reason, "problems": list(self.problems)}


def tool_policy(annotations: dict | None, unhinted: str = "trust") -> tuple[bool, str, str]:
    """``(side_effects, approval, reason)`` from a tool's annotations (wire names)."""
    ann = annotations or {}
    read_only, destructive = ann.get("readOnlyHint"), ann.get("destructiveHint")
    if read_only is True:
        return False, "never", "readOnlyHint"
    if destructive is True:
        return True, "always", "destructiveHint"
    if read_only is False:
        if destructive is False:
            return True, "never", "readOnlyHint: false, destructiveHint: false"
        return True, "always", "readOnlyHint: false (destructive unless it says otherwise)"
    if unhinted == "safe":
        return True, "always", "no readOnlyHint (unhinted: safe)"
    return False, "never", "no readOnlyHint (unhinted: trust)"


def mcp_tool_to_openai(tool: Any, prefix: str = "", *, server: str = "",
                       unhinted: str = "trust") -> McpToolDef:
    """Convert one tool of a ``tools/list`` answer (SDK model or wire dict)."""
    raw = _wire_dict(tool)
    remote = raw.get("name")
    if not isinstance(remote, str) or not remote:
        raise McpServerError(server, "the tool list has a tool without a name")
    name = prefix + remote
    problems = []
    if not TOOL_NAME_RE.match(name):
        problems.append("its name does not match ^[a-zA-Z0-9_-]{1,64}$; the API rejects it"
                        + (f" ({len(name)} characters, 64 at most)" if len(name) > 64 else ""))
    schema = raw.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append("its inputSchema does not have type: object")
        schema = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
    annotations = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
    side_effects, approval, reason = tool_policy(annotations, unhinted)
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        description = str((annotations or {}).get("title") or raw.get("title") or "")
    output = raw.get("outputSchema")
    return McpToolDef(server=server, name=name, remote_name=remote, description=description.strip(),
                      parameters=copy.deepcopy(schema), annotations=dict(annotations or {}),
                      output_schema=copy.deepcopy(output) if isinstance(output, dict) else None,
                      side_effects=side_effects, approval=approval, policy_reason=reason,
                      problems=tuple(problems))


def select_tools(tools: Iterable[Any], *, server: str, include: tuple[str, ...] | None = None,
                 exclude: tuple[str, ...] = (), prefix: str = "",
                 unhinted: str = "trust") -> list[McpToolDef]:
    """Apply a server's include/exclude/prefix to its full tool list, in the server's order.

    An ``include`` or ``exclude`` name the server does not have is an error naming it
    (a typo there would otherwise silently change what the model can call).
    """
    defs = [mcp_tool_to_openai(t, prefix, server=server, unhinted=unhinted) for t in tools]
    names = [d.remote_name for d in defs]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise McpServerError(server, f"invalid tool list: the name {n!r} is listed twice")
        seen.add(n)
    for key, wanted in (("include", include or ()), ("exclude", exclude)):
        missing = [w for w in wanted if w not in seen]
        if missing:
            raise McpServerError(server, f"{key} names {', '.join(map(repr, missing))}, which the "
                                 f"server does not list (it has: {', '.join(names) or 'no tools'})")
    if include is not None:
        defs = [d for d in defs if d.remote_name in include]
    return [d for d in defs if d.remote_name not in exclude]


def _wire_dict(tool: Any) -> dict:
    if isinstance(tool, dict):
        return tool
    dump = getattr(tool, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, mode="json", exclude_none=True)
    raise TypeError(f"not an MCP tool: {type(tool).__name__}")
