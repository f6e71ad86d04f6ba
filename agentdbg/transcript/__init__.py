"""Transcripts: a versioned JSON Lines event log of one run, written as it happens.

Line 1 is the header (``events.Header``)::

    {"type": "header", "format": "agentdbg-transcript", "version": 2,
     "agentdbg_version", "created", "model", "provider", "base_url",
     "question" (a preview), "tools": [...], "tools_hash", "tools_file", "options": {...},
     "initial_messages": [...], "parent": null | {"path", "from_index"}, "api", ...}

then one event per line, each with ``type`` and ``seq`` (``events``: one class per kind):

* ``request``  {turn, prefix, append, params}: the messages sent are the
  previous request's (the first: the header's ``initial_messages``) first ``prefix``
  messages plus ``append``; ``params`` is the rest of the request body (``tools`` only
  when they are not the header's).
* ``response`` {turn, message, usage, finish_reason, latency_ms, note}
* ``model_error`` {turn, message, status, latency_ms}
* ``blocked``  {turn, findings}: the pre-send check stopped a request.
* ``tool``     {turn, index, tool_call_id, name, arguments, ok, error_type,
  content, detail, duration_ms, injected, stubbed, ...}
* ``action``   {action: edit|drop|rewind|back|retry|inject|fail|send, ...}: the user's hand.
* ``stop``     {reason, detail, prefix, append, usage}: the final messages, as a request's.

One writer (``writer``) and one reader (``reader``, which reads version 1 too). Every line
is flushed when written, so a crash or a kill loses at most the event in flight; a
truncated last line loads with a warning. API keys are never written, and values matching
the redaction patterns are replaced.
"""

from agentdbg.transcript.events import FORMAT, VERSION
from agentdbg.transcript.reader import (
    Transcript,
    foreign,
    is_run,
    is_transcript,
    load_transcript,
    messages_over_time,
    read_transcript,
)
from agentdbg.transcript.redact import REDACTED, Redactor, safe_url
from agentdbg.transcript.runs import new_run_path, prune_runs, runs_dir
from agentdbg.transcript.writer import TranscriptWriter, start_transcript, tools_hash

__all__ = [
    "FORMAT",
    "REDACTED",
    "VERSION",
    "Redactor",
    "Transcript",
    "TranscriptWriter",
    "foreign",
    "is_run",
    "is_transcript",
    "load_transcript",
    "messages_over_time",
    "new_run_path",
    "prune_runs",
    "read_transcript",
    "runs_dir",
    "safe_url",
    "start_transcript",
    "tools_hash",
]
