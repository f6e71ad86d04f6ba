"""Shared by ``run`` and ``replay``: build the session's transcript and pick the driver."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.errors import ExitStatus


@dataclass
class DriveOptions:
    model_desc: str
    model: str
    provider_name: str
    base_url: str | None = None
    question: str | None = None
    step: bool = False
    json_out: bool = False
    full: bool = False
    debug: bool = False
    save: Path | None = None
    keep_runs: int = 50
    redact: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    profile: str = "openai"
    explain: bool = False
    lang: str = "en"
    parent: dict | None = None
    offline: bool = False


def transcript_path(options: DriveOptions) -> Path:
    from agentdbg.transcript import new_run_path

    return options.save if options.save is not None else new_run_path(options.question or "run")


def drive(session, console, options: DriveOptions, *, replay=None,
          live_provider=None, live_tools=None) -> ExitStatus:
    """Run ``session`` in step mode or batch, writing its transcript as it goes."""
    from agentdbg.transcript import prune_runs, start_transcript

    path = transcript_path(options)
    writer = start_transcript(session, path, model=options.model, provider=options.provider_name,
                              base_url=options.base_url, question=options.question,
                              redact=options.redact, secrets=options.secrets,
                              parent=options.parent)
    try:
        if options.step:
            from agentdbg.repl.debugger import Debugger

            status = Debugger(session, console, explain=options.explain, lang=options.lang,
                              profile=options.profile, full=options.full,
                              model_desc=options.model_desc, transcript=writer,
                              replay=replay, live_provider=live_provider,
                              live_tools=live_tools).loop()
        else:
            from agentdbg.drivers.batch import BatchOptions, run_batch

            status = run_batch(session, console, BatchOptions(
                model_desc=options.model_desc, base_url=options.base_url,
                json_out=options.json_out, full=options.full, debug=options.debug,
                offline=options.offline, profile=options.profile), replay=replay)
    finally:
        writer.close()
        if options.save is None:
            prune_runs(options.keep_runs)
    if writer.error is not None:
        print(f"agentdbg: error: could not write the transcript {path} ({writer.error}); "
              f"{rescue(session, options)}", file=sys.stderr)
    elif not options.json_out:
        console.print(f"transcript: {path}", soft_wrap=True, highlight=False, markup=False)
    return status


def rescue(session, options: DriveOptions) -> str:
    """Save the in-memory run somewhere else; returns what happened, for the error line."""
    import tempfile
    import time

    from agentdbg.transcript.document import run_document, write_json

    target = Path(tempfile.gettempdir()) / f"agentdbg-rescue-{time.strftime('%Y%m%d-%H%M%S')}.json"
    try:
        write_json(target, run_document(session, model=options.model, base_url=options.base_url))
    except OSError as exc:
        return f"saving it to {target} failed too ({exc.strerror}); rerun with --json for stdout"
    return f"the run was kept in memory and saved to {target}"


def copy_transcript(writer, target: Path) -> None:
    writer.fh.flush()
    shutil.copyfile(writer.path, target)
