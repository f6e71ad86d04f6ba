"""MCP servers as a source of tools.

- ``config``: ``McpServerConfig`` (tools.yaml ``mcp_servers:`` entries, ``--mcp``), no SDK import
- ``client``: ``McpClient``, a synchronous handle on one server (the SDK runs in a thread)
- ``tools``: an MCP tool → OpenAI function definition + run policy from its annotations
- ``results``: ``McpCallResult``, what one ``tools/call`` gave
- ``exchange``: the bounded JSON-RPC log of a server and of each call
- ``process``: the stdio server's stderr, pid and process group

Importing this package imports neither the MCP SDK nor anything heavy.
"""
