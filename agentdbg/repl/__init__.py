"""Step mode: a prompt_toolkit debugger over the engine (``agentdbg run --step``)."""
