"""The two tools every app here exposes, and the question it asks.

Plain functions and data only: each app wraps them the way its framework's docs
write a tool. The schemas carry the ``pattern`` the offline model fills
``order_id`` from; ``tracking_no`` then comes from the first result.
"""

from __future__ import annotations

QUESTION = "订单 ORD-2026-001 到哪里了?"
ORDER_ID_PATTERN = r"^ORD-\d{4}-\d{3}$"
TRACKING_NO_PATTERN = r"^[A-Z]{2}\d{6}$"
LOCATION = "杭州转运中心"  # every app's answer must name it

ORDERS = {"ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"}}
SHIPMENTS = {"SF123456": {"location": LOCATION}}

QUERY_ORDER_DOC = "查询订单状态和物流单号。当用户询问某个订单时使用。"
QUERY_LOGISTICS_DOC = "用物流单号查询运输进度（当前位置）。已知物流单号时使用。"
ORDER_ID_DOC = "订单号，例如 ORD-2026-001"
TRACKING_NO_DOC = "物流单号，例如 SF123456"


def query_order(order_id: str) -> dict:
    return dict(ORDERS.get(order_id) or {"ok": False, "error": {"type": "not_found"}})


def query_logistics(tracking_no: str) -> dict:
    return dict(SHIPMENTS.get(tracking_no) or {"ok": False, "error": {"type": "not_found"}})


def json_schema(param: str, pattern: str, description: str) -> dict:
    """A one-parameter JSON Schema (for the apps that write tool schemas by hand)."""
    return {"type": "object", "required": [param], "additionalProperties": False,
            "properties": {param: {"type": "string", "pattern": pattern, "description": description}}}
