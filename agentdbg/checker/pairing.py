"""The one pairing analysis (``agentdbg.wire.pairing``), read on Chat Completions messages.

The checker's Chat Completions rules, the messages view, the proxy and the offline model work
on a chat ``messages`` list; this is the analysis every format shares, asked through the Chat
Completions codec. A result's location is ``(j,)`` (the tool message ``messages[j]``), a
call's ``(i, pos)`` (``messages[i].tool_calls[pos]``).
"""

from __future__ import annotations

from agentdbg.wire.pairing import Block, CallState, Pairing, ResultState
from agentdbg.wire.pairing import analyze as _analyze


def analyze(messages: list, *, in_progress: bool = False) -> Pairing:
    """The pairing of Chat Completions ``messages``. ``in_progress``: the last assistant turn's
    calls are being executed now, so their missing results are pending rather than missing."""
    from agentdbg.wire.codec import get

    return _analyze(get("chat"), messages, in_progress=in_progress)


__all__ = ["Block", "CallState", "Pairing", "ResultState", "analyze"]
