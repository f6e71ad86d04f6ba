"""OpenTelemetry export of a multi-agent run: one trace for the whole tree of conversations.

Each conversation is an ``invoke_agent {agent}`` span with ``gen_ai.agent.name`` (as in
``otel``); a conversation another one started sits under the ``execute_tool`` span of the
exact call that started it (a subagent's ``Agent`` call, a handoff's ``transfer_to_…``), or
under the starter's own ``invoke_agent`` span when that call's execution was not recorded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentdbg.report.otel import (
    DEFAULT_TIMEOUT,
    ExportResult,
    _provider,
    _RunSpans,
    _tracer,
    deliver,
    require_sdk,
    traces_url,
)


def spans_of_tree(paths: Sequence[str | os.PathLike], *, content: bool = False,
                  profile: str = "openai") -> list:
    """The finished spans of a run's conversations, children under the calls that started them."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentdbg.report.timeline import read_run
    from agentdbg.transcript.tree import build, walk

    runs = {Path(p): read_run(p, profile=profile) for p in paths}
    memory = InMemorySpanExporter()
    provider = _provider([SimpleSpanProcessor(memory)])
    tracer = _tracer(provider)
    built: dict[Path, _RunSpans] = {}
    by_number = {run.header.conversation: path for path, run in runs.items()}
    for node in walk(build([(path, run.header) for path, run in runs.items()])):
        spans = _RunSpans(runs[node.path], tracer, content, parent=_starter(node, built, by_number))
        spans.build()
        built[node.path] = spans
    provider.shutdown()
    return list(memory.get_finished_spans())


def _starter(node: Any, built: dict[Path, _RunSpans], by_number: dict) -> Any:
    """The span ``node``'s conversation goes under: its starting call's, else its starter's."""
    s = node.started_by
    where = by_number.get(s.conversation) if s is not None else None
    parent = built.get(where) if where is not None else None
    if s is None or parent is None:
        return None
    return parent.tool_span.get(s.call_id or "") or parent.agent


def export_tree(paths: Sequence[str | os.PathLike], *, otlp_url: str | None = None,
                json_path: Any = None, content: bool = False, profile: str = "openai",
                timeout: float = DEFAULT_TIMEOUT) -> ExportResult:
    """Build a multi-agent run's spans (one trace) and deliver them."""
    if otlp_url is not None:
        traces_url(otlp_url)
    require_sdk()
    spans = spans_of_tree(paths, content=content, profile=profile)
    destinations = deliver(spans, otlp_url=otlp_url, json_path=json_path, timeout=timeout)
    trace_id = format(spans[0].context.trace_id, "032x") if spans else ""
    return ExportResult(len(spans), trace_id, destinations)
