"""``agentdbg proxy -- CMD``: a command run with its model clients pointed at the proxy."""
