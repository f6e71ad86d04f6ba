"""The shape of a failed tool call as the model sees it."""

from __future__ import annotations

import json

#: error types the model can see, and whether retrying may help
ERROR_TYPES = {
    "unknown_tool": False,
    "invalid_json": False,
    "invalid_arguments": False,
    "timeout": True,
    "internal_error": False,
    "empty_result": False,
    "denied": False,
    "not_found": False,
    "rate_limited": True,
    "tool_error": False,      # an MCP tool answered isError
    "cancelled": False,       # the call was cancelled (Ctrl-C, a timeout on an MCP server)
    "no_handler": False,      # a tool from a tools JSON, which names no handler
}


def error_in(content: object) -> tuple[str, bool] | None:
    """(type, retryable) when ``content`` is a failed result in the shape above, else None."""
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) and data.get("ok") is False else None
    if not isinstance(error, dict):
        return None
    kind = error.get("type")
    return (kind if isinstance(kind, str) else "error", error.get("retryable") is True)


def error_content(type: str, message: str, retryable: bool | None = None) -> str:
    retry = ERROR_TYPES.get(type, False) if retryable is None else retryable
    return json.dumps({"ok": False, "error": {"type": type, "retryable": retry,
                                              "message": message}}, ensure_ascii=False)
