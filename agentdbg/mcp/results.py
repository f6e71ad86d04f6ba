"""What one ``tools/call`` gave: ``McpCallResult``, built from the SDK's answer or failure.

``value`` is what the model should see on success: the structured content when the server
sent one, else the text blocks joined. A failure carries an ``error_type`` from the
executor's vocabulary (plus ``tool_error`` for a result with ``isError``, ``cancelled`` for
a call the user interrupted), a short ``message`` for the model and the full ``detail``
for the user only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.mcp.errors import one_line, printable

INVALID_PARAMS = -32602          # JSON-RPC codes (the spec's, not the SDK's objects)
MESSAGE_CHARS = 2000             # the longest error message passed on to the model


@dataclass
class McpCallResult:
    ok: bool
    value: Any = None                    # structured content, else the joined text
    text: str = ""                       # the text blocks joined with newlines
    structured: Any = None
    error_type: str | None = None        # tool_error invalid_arguments timeout internal_error cancelled
    message: str | None = None           # for the model
    retryable: bool = False
    detail: str | None = None            # for the user (--debug, step mode), never for the model
    code: int | None = None              # the JSON-RPC error code, when there was one
    duration_ms: float = 0.0
    exchange: list[dict] = field(default_factory=list)   # the JSON-RPC messages of the call
    exchange_dropped: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def from_call_result(result: Any) -> McpCallResult:
    """A ``CallToolResult`` (SDK model) → result; ``isError`` → ``tool_error``."""
    raw = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    text = join_content(raw.get("content") or [])
    structured = raw.get("structuredContent")
    if raw.get("isError"):
        message = text or (json.dumps(structured, ensure_ascii=False) if structured is not None else "")
        return McpCallResult(ok=False, text=text, structured=structured, error_type="tool_error",
                             message=_clip(message or "the tool reported an error without a message"),
                             detail=printable(json.dumps(raw, ensure_ascii=False)))
    value = structured if structured is not None else text
    return McpCallResult(ok=True, value=value, text=text, structured=structured)


def join_content(blocks: list) -> str:
    """Text blocks as they are; other blocks as a short placeholder (the model gets text)."""
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            parts.append(f"[{kind} {block.get('mimeType', '?')}, about {size} bytes, not shown]")
        elif kind == "resource":
            res = block.get("resource")
            res = res if isinstance(res, dict) else {}
            parts.append(str(res["text"]) if "text" in res else f"[resource {res.get('uri')}, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.get('uri', '?')}]")
        else:
            parts.append(f"[{kind} content, not shown]")
    return "\n".join(parts)


def jsonrpc_error(server: str, tool: str, code: int, message: str, data: Any) -> McpCallResult:
    detail = f"JSON-RPC error {code} from MCP server {server!r} for tools/call {tool!r}: {message}"
    if data is not None:
        detail += f"; data: {json.dumps(data, ensure_ascii=False, default=str)}"
    kind = "invalid_arguments" if code == INVALID_PARAMS else "internal_error"
    return McpCallResult(ok=False, error_type=kind, code=code, detail=printable(detail),
                         message=_clip(f"{message} (JSON-RPC error {code})"))


def failure(error_type: str, message: str, detail: str | None = None, *,
            retryable: bool = False) -> McpCallResult:
    return McpCallResult(ok=False, error_type=error_type, message=one_line(message, MESSAGE_CHARS),
                         detail=printable(detail) if detail else None, retryable=retryable)


def _clip(text: str) -> str:
    text = printable(text.strip())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"
