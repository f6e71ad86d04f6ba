"""Orders, logistics, order search and e-mail: the seed article's order scenario."""

from __future__ import annotations

import hashlib
import time

from agentdbg.tool_api import ToolError

ORDERS = {
    "ORD-2026-001": {"status": "shipped", "tracking_no": "SF123456"},
    "ORD-2026-002": {"status": "pending", "note": "awaiting payment confirmation"},
    "ORD-2026-003": {"status": "shipped", "tracking_no": "YT998877"},
    "ORD-2026-004": {"status": "delivered", "tracking_no": "JD555000"},
}

LOGISTICS = {
    "SF123456": {"status": "in_transit", "latest_event": "杭州转运中心已发出",
                 "updated_at": "2026-09-18T09:20:00+08:00"},
    "YT998877": {"status": "in_transit", "latest_event": "上海分拨中心已到达",
                 "updated_at": "2026-09-18T14:05:00+08:00"},
    "JD555000": {"status": "delivered", "latest_event": "已签收，签收人：本人",
                 "updated_at": "2026-09-17T18:42:00+08:00"},
}

STATUSES = ("pending", "shipped", "delivered", "cancelled")
CITIES = ("杭州", "北京", "上海", "广州", "深圳", "成都")


def query_order(order_id: str) -> dict:
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError("not_found", f"no order with id {order_id}")
    return dict(order)


def query_logistics(tracking_no: str) -> dict:
    info = LOGISTICS.get(tracking_no)
    if info is None:
        raise ToolError("not_found", f"no shipment with tracking number {tracking_no}")
    return dict(info)


def _all_orders() -> list[dict]:
    rows = []
    for n in range(1, 481):
        rows.append({
            "order_id": f"ORD-2025-{n:03d}",
            "status": STATUSES[n % 4],
            "city": CITIES[n % len(CITIES)],
            "amount_cny": round(19.9 + (n * 37) % 500, 2),
            "created_at": f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}",
        })
    return rows


def search_orders(status: str, limit: int = 500) -> dict:
    """Hundreds of rows on purpose: the result is cut by max_result_chars."""
    rows = [r for r in _all_orders() if r["status"] == status][:limit]
    return {"status": status, "total": len(rows), "orders": rows}


_OUTBOX: dict[str, dict] = {}


def send_email(to: str, subject: str, body: str, idempotency_key: str | None = None) -> dict:
    """A side effect. The same idempotency key never sends twice."""
    key = idempotency_key or hashlib.sha256(f"{to}\n{subject}\n{body}".encode()).hexdigest()[:16]
    if key in _OUTBOX:
        return {"status": "duplicate_ignored", "message_id": _OUTBOX[key]["message_id"],
                "idempotency_key": key}
    message_id = f"msg-{len(_OUTBOX) + 1:04d}"
    _OUTBOX[key] = {"message_id": message_id, "to": to, "subject": subject, "sent_at": time.time()}
    return {"status": "sent", "message_id": message_id, "idempotency_key": key}
