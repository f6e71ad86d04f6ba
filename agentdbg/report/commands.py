"""What the typer commands call: ``report``, ``diff``, ``export``, and the live exporters.

Each function takes a transcript path (the CLI resolves run names, numbers and ``last``
before calling), prints through the given rich console, returns an ``ExitStatus`` and
raises ``AgentdbgError`` subclasses for the one-line error boundary.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentdbg.errors import AgentdbgError, ExitStatus, InputError
from agentdbg.i18n import N_, Msg, _
from agentdbg.textsafe import one_line

EXPORT_FORMATS = ("otlp-json",)


def run_report(path: str | os.PathLike, output: str | os.PathLike | None, console: Any, *,
               diff_with: str | os.PathLike | None = None, profile: str = "openai",
               lang: str | None = None) -> ExitStatus:
    """``agentdbg report TRANSCRIPT [-o FILE.html] [--diff OTHER]``: write the HTML page (its
    own words in ``lang``; what was recorded stays as recorded)."""
    from agentdbg import i18n
    from agentdbg.render.run import stop_label
    from agentdbg.report.html import render_report, turns_said
    from agentdbg.report.timeline import read_run

    i18n.use(lang)
    _exists(path)
    if diff_with is not None:
        _exists(diff_with)
    else:
        tree = _run_of(Path(path))
        if len(tree) > 1:   # a conversation of a multi-agent run: the whole run, as a tree
            return _run_page(tree, output, console, profile)
    target = Path(output) if output is not None else Path.cwd() / (Path(path).stem + ".html")
    never_over_inputs(target, "-o" if output is not None else "the report", transcript=path,
                      **{"--diff transcript": diff_with})
    run = read_run(path, profile=profile)
    page = render_report(run, diff_with=diff_with, profile=profile)
    write_text(target, page, mode=shared_mode(path))
    findings = run.findings()
    said = _("report: {path} ({turns}, {calls} tool call(s), {findings} finding(s), stop {reason})")
    console.print(said.format(path=one_line(target), turns=turns_said(run), calls=len(run.calls()),
                              findings=len(findings),
                              reason=one_line(stop_label(run.stop_reason)) if run.stop_reason
                              else _("none")),
                  markup=False, highlight=False, soft_wrap=True)
    return ExitStatus.OK


def run_handout(path: str | os.PathLike, output: str | os.PathLike | None, console: Any, *,
                lesson: str | os.PathLike | None = None, lang: str | None = None) -> ExitStatus:
    """``agentdbg report TRANSCRIPT --handout [--lesson FILE]``: a page per phase, with the
    lesson's exercises (default ./NAME-handout.html)."""
    from agentdbg import i18n
    from agentdbg.report.handout import render_handout

    i18n.use(lang)
    _exists(path)
    target = Path(output) if output is not None else Path.cwd() / (Path(path).stem + "-handout.html")
    never_over_inputs(target, "-o" if output is not None else "the handout", transcript=path,
                      lesson=lesson)
    exercises, title = [], None
    if lesson is not None:
        from agentdbg.repl.lesson import load_lesson

        found = load_lesson(Path(lesson))
        exercises, title = found.exercises, found.title or None
    page = render_handout(path, exercises=exercises, title=title)
    write_text(target, page, mode=shared_mode(path))
    console.print(_("handout: {path} ({n} exercise(s))").format(path=one_line(target), n=len(exercises)),
                  markup=False, highlight=False, soft_wrap=True)
    return ExitStatus.OK


def _run_of(path: Path) -> list[Path]:
    from agentdbg.transcript.tree import siblings

    return siblings(path) if path.is_file() else [path]


def _run_page(paths: list[Path], output: str | os.PathLike | None, console: Any,
              profile: str) -> ExitStatus:
    from agentdbg.report.runpage import render_run_report, summarize
    from agentdbg.transcript.tree import run_of

    name = (run_of(paths[0]) or (paths[0].stem,))[0]
    target = Path(output) if output is not None else Path.cwd() / f"{name}.html"
    never_over_inputs(target, "-o" if output is not None else "the report",
                      **{f"conversation {i + 1}": p for i, p in enumerate(paths)})
    write_text(target, render_run_report(paths, name, profile=profile))
    s = summarize(paths, profile)
    console.print(_("report: {path} (a run of {n} conversations, {requests} request(s), "
                    "{findings} finding(s))").format(
                      path=one_line(target), n=len(paths), requests=s.requests,
                      findings=sum(len(c.findings) for c in s.conversations)),
                  markup=False, highlight=False, soft_wrap=True)
    return ExitStatus.OK


def run_diff(a: str | os.PathLike, b: str | os.PathLike, json_out: bool, console: Any, *,
             profile: str = "openai") -> ExitStatus:
    """``agentdbg diff A B [--json]``: exit 0 when the runs match, 1 when they differ."""
    from agentdbg.report.diff import diff_transcripts, render_diff

    _exists(a)
    _exists(b)
    runs = _run_of(Path(a)), _run_of(Path(b))
    if len(runs[0]) > 1 or len(runs[1]) > 1:   # multi-agent runs: agent by agent
        return _diff_trees(runs[0], runs[1], json_out, console, profile)
    d = diff_transcripts(a, b, profile=profile)
    if json_out:
        import json

        print(json.dumps(d.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        console.print(render_diff(d), soft_wrap=True)
    return ExitStatus.OK if d.same else ExitStatus.FINDINGS


def _diff_trees(a: list[Path], b: list[Path], json_out: bool, console: Any,
                profile: str) -> ExitStatus:
    from agentdbg.report.diff_tree import diff_trees, render_tree_diff

    d = diff_trees(a, b, profile=profile)
    if json_out:
        import json

        print(json.dumps(d.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        console.print(render_tree_diff(d), soft_wrap=True)
    return ExitStatus.OK if d.same else ExitStatus.FINDINGS


def run_export(path: str | os.PathLike, otlp_url: str | None, fmt: str | None,
               output: str | os.PathLike | None, content: bool, console: Any, *,
               profile: str = "openai", timeout: float | None = None) -> ExitStatus:
    """``agentdbg export TRANSCRIPT --otlp URL`` and/or ``--format otlp-json -o FILE``."""
    from agentdbg.report.otel import DEFAULT_TIMEOUT, export_transcript

    _exists(path)
    if fmt is not None and fmt not in EXPORT_FORMATS:
        raise AgentdbgError(Msg(N_("--format must be one of {formats}, not {value}"),
                                {"formats": ", ".join(EXPORT_FORMATS), "value": repr(fmt)}))
    if fmt is not None and output is None:
        raise AgentdbgError(Msg(N_("--format {format} needs -o FILE"), {"format": fmt}))
    if otlp_url is None and output is None:
        raise AgentdbgError(Msg(N_("say where to: --otlp URL (an OTLP/HTTP receiver) and/or "
                                   "--format otlp-json -o FILE")))
    tree = _run_of(Path(path))
    if output is not None:
        never_over_inputs(Path(output), "-o", transcript=path,
                          **{f"conversation {i + 1}": p for i, p in enumerate(tree)})
    if len(tree) > 1:   # a conversation of a multi-agent run: the whole run, one trace
        from agentdbg.report.otel_run import export_tree

        result = export_tree(tree, otlp_url=otlp_url, json_path=output, content=content,
                             profile=profile, timeout=timeout or DEFAULT_TIMEOUT)
    else:
        result = export_transcript(path, otlp_url=otlp_url, json_path=output, content=content,
                                   profile=profile, timeout=timeout or DEFAULT_TIMEOUT)
    said = (_("exported {spans} span(s) (a run of {n} conversations) of trace {trace} to {where}")
            if len(tree) > 1 else _("exported {spans} span(s) of trace {trace} to {where}"))
    console.print(said.format(spans=result.spans, n=len(tree), trace=result.trace_id,
                              where=one_line(", ".join(result.destinations))),
                  markup=False, highlight=False, soft_wrap=True)
    return ExitStatus.OK


# -- exporting as it goes: run --otlp, proxy --otlp --------------------------------------------
# drivers/ and server/ do not import this package (the layers); the CLI builds these and
# hands them down.

def check_otlp(otlp_url: str) -> None:
    """Before anything starts: an http(s) URL and the SDK installed, else a one-line error."""
    from agentdbg.report.otel import require_sdk, traces_url

    traces_url(otlp_url)
    require_sdk()


def run_export_factory(otlp_url: str, *, content: bool = False) -> Callable[[dict, Any], Any]:
    """For ``run --otlp URL``: ``drive(..., export=...)`` calls it with the transcript's
    header and writer; it returns a ``LiveExporter`` (``feed`` each event, ``close()`` in
    the ``finally``: it returns the warnings, e.g. spans the receiver did not take)."""
    def export(header: dict, writer: Any) -> Any:
        from agentdbg.report.otel import LiveExporter

        return LiveExporter(header, otlp_url=otlp_url, content=content,
                            name=writer.path.stem)
    return export


class ConversationExport:
    """For ``proxy --otlp URL``: the proxy's tracker calls it with each conversation's new
    transcript writer (and header) and uses what it returns in the writer's place; every
    conversation's spans go through one pipeline, made on first use (in the analyst's
    process). ``close()`` sends what is left and returns the warnings."""

    def __init__(self, otlp_url: str, *, content: bool = False):
        self.otlp_url, self.content = otlp_url, content
        self.pipeline: Any = None

    def __call__(self, writer: Any, header: Any) -> Beside:
        from agentdbg.report.otel import LiveExporter, Pipeline
        from agentdbg.transcript.events import to_json_value

        if self.pipeline is None:
            self.pipeline = Pipeline(otlp_url=self.otlp_url)
        return Beside(writer, LiveExporter(to_json_value(header), content=self.content,
                                           pipeline=self.pipeline, name=writer.path.stem))

    def close(self) -> list[str]:
        return self.pipeline.shutdown() if self.pipeline is not None else []


class Beside:
    """A transcript writer and a live exporter fed the same events, the exporter's redacted
    as the transcript's are; anything else (``path``, ``error`` …) is the writer's."""

    def __init__(self, writer: Any, exporter: Any):
        self.writer, self.exporter = writer, exporter

    def __call__(self, kind: str, data: dict) -> None:
        self.writer(kind, data)
        self.exporter.feed(kind, data, self.writer.redact)

    def write(self, event: Any) -> None:
        """A typed event (the proxy's), to both: the exporter sees its whole messages."""
        from agentdbg.transcript.events import fields_of

        data = fields_of(event)
        self.writer.write(event)
        self.exporter.feed(event.event_type, data, self.writer.redact)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.writer, name)

    def close(self) -> None:
        self.writer.close()
        self.exporter.close()


def session_budget(session: Any) -> Any:
    """Step mode's ``usage``: the budget of the messages the session holds now (see
    ``agentdbg.render.budget``, which the step debugger calls directly)."""
    from agentdbg.render.budget import budget_of_session

    return budget_of_session(session)


def budget_json(path: str | os.PathLike) -> dict | None:
    """The last request's budget as a dict (for ``--json`` documents); None without requests."""
    from agentdbg.report.budget import budget_of

    b = budget_of(path)
    return b.to_dict() if b is not None else None


def shared_mode(source: str | os.PathLike) -> int:
    """The mode of a page made from ``source``: readable by the group and others (0644, less the
    umask), unless the folder ``source`` lies in is private (then 0600, as that folder keeps it)."""
    try:
        folder = Path(source).resolve().parent.stat().st_mode
    except OSError:
        folder = 0o755
    if not folder & 0o077:
        return 0o600
    umask = os.umask(0)
    os.umask(umask)
    return 0o644 & ~umask


def write_text(target: Path, text: str, mode: int | None = None) -> None:
    """Write atomically (``mode``: the file's permissions; default: mkstemp's 0600); one line
    naming the file when it cannot be written."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise AgentdbgError(Msg(N_("{path}: cannot write: {reason}"),
                                {"path": target, "reason": exc.strerror or exc})) from None


def never_over_inputs(target: Path, option: str, **inputs: str | os.PathLike | None) -> None:
    """Refuse to write ``target`` when it is a file being read (by any path, a symlink or a
    hard link): the page or the spans would replace or corrupt the transcript."""
    from agentdbg.paths import same_file

    for what, path in inputs.items():
        if path is not None and same_file(path, target):
            raise AgentdbgError(Msg(N_("{option} {path}: that is the {what} being read; writing "
                                       "there would destroy it: choose another path"),
                                    {"option": option, "path": target, "what": what}))


def _exists(path: str | os.PathLike) -> None:
    p = Path(path)
    if p.is_dir():
        raise InputError(Msg(N_("{path}: is a folder, not a transcript"), {"path": p}))
    if not p.exists():
        raise InputError(Msg(N_("{path}: no such transcript"), {"path": p}))
