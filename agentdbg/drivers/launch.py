"""Shared by ``run`` and ``replay``: attach the transcript, pick step mode or batch."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentdbg.errors import ExitStatus
from agentdbg.options import GoLive, RunOptions


def drive(session, console, options: RunOptions, *, replay=None, go_live: GoLive | None = None,
          export: Callable[[dict, Any], Any] | None = None) -> ExitStatus:
    """Run ``session`` in step mode or batch, writing its transcript as it goes.

    ``export`` (``run --otlp``): called with the transcript's header and its writer, it
    returns an exporter fed the same events (``feed(kind, data, redact)``) whose
    ``close()`` returns warnings (spans it could not deliver)."""
    from agentdbg.transcript import prune_runs, start_transcript

    writer = start_transcript(session, options.save, model=options.model, provider=options.provider_name,
                              base_url=options.base_url, question=options.question,
                              redact=options.redact, secrets=options.secrets,
                              parent=options.parent)
    exporter = None
    try:
        if export is not None:
            exporter = _beside(session, options, export, writer)
        if options.step:
            from agentdbg.repl.debugger import Debugger

            status = Debugger(session, console, options=options, transcript=writer,
                              replay=replay, go_live=go_live).loop()
        else:
            from agentdbg.drivers.batch import run_batch

            status = run_batch(session, console, options, replay=replay)
    finally:
        writer.close()
        warnings = exporter.close() if exporter is not None else []
        removed = prune_runs(options.keep_runs) if options.save is None else 0
    for warning in warnings:
        print(f"agentdbg: warning: {warning}", file=sys.stderr)
    path = writer.path
    if writer.error is not None:
        print(f"agentdbg: error: could not write the transcript {path} ({writer.error}); "
              f"{rescue(session, options, writer)}", file=sys.stderr)
    elif not options.json_out:
        console.print(f"transcript: {path}", soft_wrap=True, highlight=False, markup=False)
    if removed:
        print(f"agentdbg: kept the newest {options.keep_runs} finished transcripts in the runs "
              f"folder (--keep-runs): removed {removed} older one(s)", file=sys.stderr)
    return status


def _beside(session, options: RunOptions, export: Callable[[dict, Any], Any], writer):
    """An exporter beside the transcript writer: the same header, the same events."""
    from agentdbg.transcript.redact import safe_url

    header = {"model": options.model, "provider": options.provider_name,
              "base_url": safe_url(options.base_url), "question": options.question,
              "tools": session.toolset.openai_tools(), "parent": options.parent}
    exporter = export(header, writer)
    session.observers.append(lambda kind, data: exporter.feed(kind, data, writer.redact))
    return exporter


def rescue(session, options: RunOptions, writer) -> str:
    """Save the in-memory run somewhere else; returns what happened, for the error line."""
    import tempfile
    import time

    from agentdbg.transcript.document import run_document, write_json

    target = Path(tempfile.gettempdir()) / f"agentdbg-rescue-{time.strftime('%Y%m%d-%H%M%S')}.json"
    try:
        write_json(target, writer.redact(run_document(session, model=options.model,
                                                      base_url=options.base_url)))
    except OSError as exc:
        return f"saving it to {target} failed too ({exc.strerror}); rerun with --json for stdout"
    return f"the run was kept in memory and saved to {target}"
