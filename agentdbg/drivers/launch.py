"""Shared by ``run`` and ``replay``: attach the transcript, pick step mode or batch."""

from __future__ import annotations

import sys
from pathlib import Path

from agentdbg.errors import ExitStatus
from agentdbg.options import GoLive, RunOptions
from agentdbg.textsafe import one_line


def drive(session, console, options: RunOptions, *, replay=None, go_live: GoLive | None = None,
          ) -> ExitStatus:
    """Run ``session`` in step mode or batch, writing its transcript as it goes."""
    from agentdbg.transcript import prune_runs, start_transcript

    writer = start_transcript(session, options.save, model=options.model, provider=options.provider_name,
                              base_url=options.base_url, question=options.question,
                              redact=options.redact, secrets=options.secrets,
                              parent=options.parent)
    try:
        if options.step:
            from agentdbg.repl.debugger import Debugger

            status = Debugger(session, console, options=options, transcript=writer,
                              replay=replay, go_live=go_live).loop()
        else:
            from agentdbg.drivers.batch import run_batch

            status = run_batch(session, console, options, replay=replay)
    finally:
        writer.close()
        removed = prune_runs(options.keep_runs) if options.save is None else 0
    path = writer.path
    if writer.error is not None:
        print(f"agentdbg: error: could not write the transcript {one_line(path)} "
              f"({one_line(writer.error)}); {one_line(rescue(session, options, writer))}",
              file=sys.stderr)
    elif not options.json_out:
        console.print(f"transcript: {one_line(path)}", soft_wrap=True, highlight=False, markup=False)
    if removed:
        print(f"agentdbg: kept the newest {options.keep_runs} finished transcripts in the runs "
              f"folder (--keep-runs): removed {removed} older one(s)", file=sys.stderr)
    return status


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
