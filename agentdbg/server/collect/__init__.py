"""``agentdbg collect``: an OTLP/HTTP receiver whose spans become checked, saved conversations."""
