"""Fixtures for the MCP tests: real servers over real stdio and HTTP."""

from __future__ import annotations

import pytest
from mcp_helpers import HttpServer


@pytest.fixture
def http_server():
    """Start demo servers over Streamable HTTP (``http_server(MODE=…)``); killed afterwards."""
    servers: list[HttpServer] = []

    def start(**env) -> HttpServer:
        server = HttpServer(env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
