"""What a tool handler may import: raise ``ToolError`` to report a clean failure.

    from agentdbg.tool_api import ToolError

    def query_order(order_id):
        raise ToolError("not_found", f"no order {order_id}")

The model then sees ``{"ok": false, "error": {"type": "not_found", ...}}``.
The message is written by the tool's author and is passed to the model as is;
any other exception becomes a sanitized ``internal_error``.
"""

from __future__ import annotations


class ToolError(Exception):
    def __init__(self, type: str, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.type = type
        self.message = message
        self.retryable = retryable
