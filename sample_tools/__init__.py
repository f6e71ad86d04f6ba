"""Sample tools for agentdbg: the seed articles' scenarios (orders, logistics, weather)."""
