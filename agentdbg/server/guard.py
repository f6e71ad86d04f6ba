"""Only local programs, never a web page: the ASGI middleware in front of ``proxy`` and ``serve``.

A web page can make the browser send requests to ``http://127.0.0.1:PORT`` (a ``text/plain``
POST needs no CORS preflight), and with DNS rebinding a name it controls can come to point at
127.0.0.1 so the page reads the answers too. The proxy adds the upstream's credentials to what
it forwards, so such a request would spend them. Refused, with a JSON 403 and one console line:

* a ``Host`` that is not this server's own address: it must name the port the server listens
  on, and a loopback name (``localhost``), an IP address (no DNS answer is involved, so no
  rebinding) or a name allowed with ``--allow-host``. A rebinding page's requests carry its own
  name, so they never match;
* any request a browser marks as coming from a page: an ``Origin`` header (``null`` included)
  other than this server's own origin or one allowed with ``--allow-origin``, or
  ``Sec-Fetch-Site: cross-site``/``same-site`` without one.

Programs are not browsers: the official Python SDKs send neither header, nor do the openai
and @anthropic-ai/sdk Node packages (Node's fetch sends ``Sec-Fetch-Mode`` only). An allowed
origin also gets CORS answers (starlette's ``CORSMiddleware``), so a page of your own can use it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from agentdbg.i18n import N_, Msg

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"localhost"})
_SAID_LIMIT = 256   # distinct refused hosts/origins said on the console; the rest silently
_HOSTS_KEPT = 256   # Host values already judged (a client sends the same one on every request)
#: the headers the guard reads (ASGI servers give names in lower case)
_WATCHED = frozenset({b"host", b"origin", b"sec-fetch-site"})


def normal_origin(text: str) -> str | None:
    """``scheme://host[:port]`` as a browser writes an ``Origin`` (lower case, no default port,
    no path), or None when ``text`` is not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    default = 80 if parts.scheme == "http" else 443
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header's name (lower case, without a trailing dot) and port; None if malformed."""
    try:
        parts = urlsplit(f"//{value.strip()}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.path:
        return None
    return parts.hostname.lower().rstrip("."), port


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class LocalOnly:
    """ASGI middleware: refuse requests from web pages and requests addressed to another name.

    ``body_of(status, message)``: the JSON error body (each server its own shape); ``say``: one
    console line (the caller escapes it); ``what``: the server's name in messages."""

    def __init__(self, app: ASGIApp, *, body_of: Callable[[int, str], dict], say: Callable[[str], None],
                 what: str = "proxy", allow_origins: Iterable[str] = (),
                 allow_hosts: Iterable[str] = ()) -> None:
        self.body_of, self.say, self.what = body_of, say, what
        self.origins = {o for o in (normal_origin(x) for x in allow_origins) if o}
        self.hosts = {h.lower().rstrip(".") for h in allow_hosts}
        self._said: set[str] = set()
        self._hosts: dict[tuple[str, int | None], bool] = {}
        self.app = app
        if self.origins:   # a page of the user's own: answer its preflights and let it read
            from starlette.middleware.cors import CORSMiddleware

            self.app = CORSMiddleware(app, allow_origins=sorted(self.origins), allow_methods=["*"],
                                      allow_headers=["*"], expose_headers=["*"])
        self.state = getattr(app, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refused = self.refusal(scope)
            if refused is not None:
                await self._refuse(scope, receive, send, *refused)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[Msg, str] | None:
        """(what to say once, the key it is said once for), or None for a request to serve. Its
        ``str()`` is the English the HTTP 403 body carries; ``tr()`` the console's language."""
        headers: dict[str, list[str]] = {}
        for name, value in scope.get("headers") or []:
            if name in _WATCHED or name.lower() in _WATCHED:
                headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        port = (scope.get("server") or (None, None))[1]
        hosts = headers.get("host", [])
        if len(hosts) > 1:
            return Msg(N_("carries more than one Host header")), "host-many"
        if hosts and not self._host_ok(hosts[0], port):
            return (Msg(N_("its Host {host} is not this {what}'s address (a web page's request by "
                           "DNS rebinding, or a name you can allow with --allow-host)"),
                        {"host": repr(hosts[0]), "what": self.what}), f"host:{hosts[0]}")
        origins = headers.get("origin", [])
        if origins:
            origin = origins[0]
            if len(origins) == 1 and self._origin_ok(origin, hosts[0] if hosts else None):
                return None
            return (Msg(N_("it comes from the web page {origin} (Origin); a page may not use this "
                           "{what} unless you allow it with --allow-origin"),
                        {"origin": repr(origin), "what": self.what}), f"origin:{origin}")
        site = (headers.get("sec-fetch-site") or [""])[0].strip().lower()
        if site in ("cross-site", "same-site"):
            return (Msg(N_("a browser sent it from a page on another site (Sec-Fetch-Site: {site})"),
                        {"site": site}), f"site:{site}")
        return None

    def _host_ok(self, value: str, port: int | None) -> bool:
        known = self._hosts.get((value, port))
        if known is None:
            if len(self._hosts) >= _HOSTS_KEPT:
                self._hosts.clear()
            known = self._hosts[(value, port)] = self._judge_host(value, port)
        return known

    def _judge_host(self, value: str, port: int | None) -> bool:
        split = split_host(value)
        if split is None:
            return False
        name, given = split
        if value.strip().lower().rstrip(".") in self.hosts or name in self.hosts:
            return True
        if port is not None and (given or 80) != port:
            return False
        return name in LOOPBACK_NAMES or _is_ip(name.strip("[]"))

    def _origin_ok(self, origin: str, host: str | None) -> bool:
        normal = normal_origin(origin)
        if normal is None:    # "null" (a sandboxed page, a file), or not an origin at all
            return False
        return normal in self.origins or (host is not None and normal_origin(f"http://{host}") == normal)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, why: Msg, key: str) -> None:
        if key not in self._said and len(self._said) < _SAID_LIMIT:
            self._said.add(key)
            self.say(Msg(N_("agentdbg {what}: refused {method} {path}: {why}; further such requests are "
                            "refused without a word"),
                         {"what": self.what, "method": scope.get("method", "a"),
                          "path": repr(scope.get("path")), "why": why}).tr())
        if scope["type"] != "http":       # refused before it is accepted: an HTTP 403
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        data = json.dumps(self.body_of(403, f"agentdbg {self.what} refused this request: {why}"),
                          ensure_ascii=False).encode("utf-8")
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})
