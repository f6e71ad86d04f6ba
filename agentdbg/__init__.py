"""agentdbg: an interactive terminal debugger for LLM tool-calling loops."""

__version__ = "0.1.0"
