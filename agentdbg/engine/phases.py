"""Where a session is (``Phase``) and why it stopped (``StopReason``)."""

from __future__ import annotations

from enum import Enum

from agentdbg.errors import ExitStatus


class StopReason(str, Enum):
    COMPLETED = "completed"
    MAX_TURNS = "max_turns"
    MAX_TOOL_CALLS = "max_tool_calls"
    REPEATED_CALL = "repeated_call"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    MODEL_ERROR = "model_error"
    INVALID_REQUEST = "invalid_request"

    @property
    def exit_status(self) -> ExitStatus:
        return ExitStatus.OK if self is StopReason.COMPLETED else ExitStatus[self.name]


class Phase(Enum):
    """What the next ``step()`` does."""

    MODEL = "model"    # ask the model
    TOOLS = "tools"    # execute the pending calls
    DONE = "done"      # stopped
