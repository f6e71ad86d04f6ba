"""The headers the relay forwards, relays back and keeps secret.

Hop-by-hop headers (RFC 9110 §7.6.1) end at the proxy in both directions: the fixed set, and
every header a ``Connection`` header names. Key headers are forwarded untouched but their values
are never printed or recorded: ``Authorization`` (any scheme, whatever whitespace follows it),
``api-key``, ``x-api-key``, ``x-goog-api-key``, ``Ocp-Apim-Subscription-Key`` and any header the
user names with ``--secret-header``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping

HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-authorization", "proxy-authenticate", "proxy-connection"})
#: never copied from the app's request: the proxy sets them itself (host, the body's length) or
#: asks for the bytes as they are (accept-encoding)
NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "accept-encoding"}
#: never copied from the upstream's response: starlette sets them for the relayed body
NOT_RELAYED = HOP_BY_HOP | {"content-length", "content-type", "date", "server"}
KEY_HEADERS = ("authorization", "api-key", "x-api-key", "x-goog-api-key", "ocp-apim-subscription-key")


def _pairs(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every (lower-case name, value) pair, repeated headers included (starlette's and httpx's
    headers have ``multi_items``; a plain mapping has each name once)."""
    items = headers.multi_items() if hasattr(headers, "multi_items") else headers.items()
    return [(k.lower(), v) for k, v in items]


def connection_named(pairs: Iterable[tuple[str, str]]) -> set[str]:
    """The header names the ``Connection`` header(s) list: hop-by-hop for this connection only."""
    return {token.strip().lower() for name, value in pairs if name == "connection"
            for token in value.split(",") if token.strip()}


def forward_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The app's request headers to send upstream."""
    pairs = _pairs(headers)
    dropped = NOT_FORWARDED | connection_named(pairs)
    out = {k: v for k, v in pairs if k not in dropped}
    out["accept-encoding"] = "identity"  # relay bytes exactly as the upstream sent them
    return out


def relayed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers the app gets (request ids, rate limits …). The body goes
    out as the upstream encoded it, byte for byte, so its ``content-encoding`` goes too, and its
    ``content-length`` when it was not sent in chunks."""
    pairs = _pairs(headers)
    dropped = NOT_RELAYED | connection_named(pairs)
    out = {k: v for k, v in pairs if k not in dropped}
    length = [v for k, v in pairs if k == "content-length"]
    if len(length) == 1 and length[0].strip().isdigit() and \
            not any(k == "transfer-encoding" for k, _ in pairs):
        out["content-length"] = length[0].strip()
    return out


def secrets_in(headers: Mapping[str, str], names: Iterable[str] = ()) -> list[str]:
    """The secret values the key headers (and ``names``) carry: each whole value, the credential
    after an ``Authorization`` scheme (``Bearer<TAB>token`` as well as ``Bearer token``), and
    what a ``Basic`` credential decodes to."""
    wanted = set(KEY_HEADERS) | {n.lower() for n in names}
    found: list[str] = []
    for name, value in _pairs(headers):
        if name not in wanted or not value.strip():
            continue
        value = value.strip()
        found.append(value)
        scheme, credential = _split_ws(value)
        if credential:
            found.append(credential)
            if scheme.lower() == "basic":
                found += _basic(credential)
    return found


def _split_ws(value: str) -> tuple[str, str]:
    """``scheme credential`` split at any whitespace (a space, a tab)."""
    parts = value.split(None, 1)
    return (parts[0], parts[1].strip()) if len(parts) == 2 else (value, "")


def _basic(token: str) -> list[str]:
    try:
        pair = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    _, _, password = pair.partition(":")
    return [v for v in (pair, password) if v]
