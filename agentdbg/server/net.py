"""Binding and serving: a socket on loopback, uvicorn on it, the URL to print."""

from __future__ import annotations

import socket


def bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: a response's headers and body never wait ~40 ms for
    # the client's delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)  # bursts of clients (and those before the loop starts) wait here, not retry
    sock.set_inheritable(True)
    return sock


def run_app(app, sock: socket.socket, *, on_ready=None) -> None:
    """Serve ``app`` on an already bound socket until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready()
    server.run(sockets=[sock])


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/v1"
