"""A run of one or more conversations on one page: ``proxy -- CMD``'s report and the live view.

One section per conversation — its transcript drawn as ``agentdbg report`` draws it (findings,
call labels, folds), each turn card saying what changed since the previous request (see
``reqdiff``), its tool definitions — and a summary of the run: conversations, requests,
findings by rule. ``render_run_report`` writes the static page (no scripts); the live view
serves the same sections and swaps one in when its transcript grows.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.report.html import (
    CSS,
    distinct_findings,
    esc,
    foot_html,
    head_rows,
    history_html,
    page,
    stop_html,
    summary_html,
)
from agentdbg.report.reqdiff import RequestDiff, describe, request_diffs
from agentdbg.report.timeline import Card, Run
from agentdbg.transcript.events import StartedBy
from agentdbg.transcript.tree import Node, how_started

RUN_CSS = """
header.run h1{margin-bottom:2px}
nav.convs{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}
nav.convs a{background:#fff;border:1px solid #d9dde3;border-radius:12px;padding:2px 10px;
text-decoration:none;color:#0969da}
nav.convs a.has-error{border-color:#ff8182}nav.convs a.has-warning{border-color:#d4a72c}
article.conv{border-top:3px solid #d9dde3;margin-top:28px;padding-top:4px}
article.conv>h2{font-size:18px}
.rdiff{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:4px 8px;margin:6px 0;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
.rdiff .add{color:#1a7f37}.rdiff .del{color:#cf222e}.rdiff .rw{color:#9a6700;font-weight:700}
.rules td{padding-right:16px}
.tooldefs .tool{margin:2px 0}
nav.tree details{margin-left:18px}nav.tree>details{margin-left:0}
nav.tree summary{cursor:pointer;margin:2px 0}nav.tree .leaf{margin:2px 0 2px 32px}
.agent{display:inline-block;border-radius:10px;padding:0 8px;color:#fff;font-weight:600}
.agent.a0{background:hsl(0,55%,38%)}.agent.a1{background:hsl(137,55%,38%)}.agent.a2{background:hsl(274,55%,38%)}.agent.a3{background:hsl(51,55%,38%)}.agent.a4{background:hsl(188,55%,38%)}.agent.a5{background:hsl(325,55%,38%)}.agent.a6{background:hsl(102,55%,38%)}.agent.a7{background:hsl(239,55%,38%)}.agent.a8{background:hsl(16,55%,38%)}.agent.a9{background:hsl(153,55%,38%)}.agent.a10{background:hsl(290,55%,38%)}.agent.a11{background:hsl(67,55%,38%)}
.how{color:#57606a;font-size:12px}
"""


@dataclass
class Conversation:
    """What the run's summary says of one transcript."""

    path: Path
    number: int | None          # the proxy's conversation number (None: not a proxy's)
    requests: int
    findings: list = field(default_factory=list)      # distinct: one per rule and message
    api: str | None = None
    model: str | None = None
    stop: str | None = None
    agent: str | None = None
    started_by: StartedBy | None = None

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors

    @property
    def title(self) -> str:
        base = f"conversation {self.number}" if self.number is not None else self.path.name
        return f"{base} ({self.agent})" if self.agent else base


@dataclass
class RunSummary:
    conversations: list[Conversation]

    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.conversations)

    def by_rule(self) -> list[tuple[str, str, int]]:
        """(severity, rule, count) over the run, errors first, then the most frequent."""
        counts = Counter((f.severity, f.rule) for c in self.conversations for f in c.findings)
        return sorted(((sev, rule, n) for (sev, rule), n in counts.items()),
                      key=lambda x: (x[0] != "error", -x[2], x[1]))


def read_conversation(path: str | os.PathLike, profile: str = "openai") -> tuple[Run, dict]:
    """The transcript as a ``Run`` and its requests' diffs (one reading of the file)."""
    from agentdbg.report.timeline import read_run
    from agentdbg.transcript import load_transcript

    loaded = load_transcript(path)
    return read_run(loaded, profile=profile), request_diffs(loaded.events)


def conversation_of(run: Run) -> Conversation:
    h = run.header
    return Conversation(run.path, h.conversation, len(run.turns), distinct_findings(run.findings()),
                        h.api, h.model, run.stop_reason, h.agent, h.started_by)


def summarize(paths: Sequence[str | os.PathLike], profile: str = "openai") -> RunSummary:
    from agentdbg.report.timeline import read_run

    return RunSummary([conversation_of(read_run(p, profile=profile)) for p in paths])


# -- HTML --------------------------------------------------------------------------------------

def conversation_html(run: Run, diffs: dict[int, RequestDiff], anchor: str,
                      version: int | None = None, palette: dict[str, int] | None = None) -> str:
    """One conversation's section; every element id in it starts with ``anchor``
    (``version``: the live view's number for the transcript's state it shows)."""
    conv = conversation_of(run)
    ns = f"{anchor}-"
    counts = _counts(conv)
    title = (f'<h2>{esc(conv.title)} {agent_badge(conv.agent, palette)} <span class="dim">· '
             f'{esc(conv.api or "chat")} · '
             f"{esc(conv.model or '?')} · {conv.requests} request(s)</span> {counts}</h2>")
    started = _started_html(conv)
    parts = [title, started, head_rows(run), tools_html(run.tools),
             summary_html(run, heading=""), f'<h3 id="{ns}timeline">Timeline</h3>']

    def extra(card: Card) -> str:
        d = diffs.get(card.turn) if card.turn is not None else None
        return diff_html(d) if d is not None else ""
    parts += [history_html(run, n, h, ns=ns, extra=extra) for n, h in enumerate(run.histories)]
    parts.append(stop_html(run, ns))
    return f'{article_open(anchor, run.path.name, version)}{"".join(parts)}</article>'


def _started_html(conv: Conversation) -> str:
    if conv.started_by is None:
        return ""
    return f'<p class="how">{esc(how_started(conv.started_by))}</p>'


def article_open(anchor: str, name: str, version: int | None = None) -> str:
    v = f' data-version="{version}"' if version is not None else ""
    return f'<article class="conv" id="{anchor}" data-name="{esc(name)}"{v}>'


def _counts(conv: Conversation) -> str:
    out = []
    if conv.errors:
        out.append(f'<span class="bad">✗ {conv.errors}</span>')
    if conv.warnings:
        out.append(f'<span class="pending">! {conv.warnings}</span>')
    return " ".join(out) or '<span class="ok">✓</span>'


def _marked(conv: Conversation) -> str:
    return "has-error" if conv.errors else "has-warning" if conv.warnings else ""


def tools_html(tools: list) -> str:
    """The tool definitions, each folded under its name (search finds them too)."""
    if not tools:
        return ""
    import json

    from agentdbg.report.html import fold

    items = []
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else t
        name = fn.get("name") if isinstance(fn, dict) else None
        items.append(f'<div class="tool"><b>{esc(name if isinstance(name, str) else "?")}</b>'
                     f"{fold(json.dumps(t, ensure_ascii=False, indent=2, default=str), 160)}</div>")
    return (f'<details class="tooldefs"><summary>tool definitions ({len(tools)})</summary>'
            f'{"".join(items)}</details>')


def diff_html(d: RequestDiff) -> str:
    """The turn card's "since the previous request" block."""
    lines = describe(d)
    head = "request diff" if d.first else \
        f"since request {d.turn - 1}" if d.turn > 1 else "since the previous request"
    rows = []
    for line in lines:
        cls = "add" if line.startswith("+ ") else "del" if line.startswith("− ") else \
            "rw" if line.startswith("history rewritten") else ""
        rows.append(f'<div class="{cls}">{esc(line)}</div>' if cls else f"<div>{esc(line)}</div>")
    return f'<div class="rdiff"><span class="dim">{esc(head)}:</span>{"".join(rows)}</div>'


def run_summary_html(summary: RunSummary, anchors: dict[Path, str]) -> str:
    convs = summary.conversations
    errors = sum(c.errors for c in convs)
    warnings = sum(c.warnings for c in convs)
    nav = "".join(f'<a href="#{anchors[c.path]}" class="{_marked(c)}">{esc(c.title)} · '
                  f"{c.requests} · {_counts(c)}</a>" for c in convs if c.path in anchors)
    rules = "".join(f'<tr><td class="{"bad" if sev == "error" else "pending"}">{esc(sev)}</td>'
                    f"<td>{esc(rule)}</td><td class=\"num\">{n}</td></tr>"
                    for sev, rule, n in summary.by_rule())
    table = (f'<table class="rules"><tr><th>severity</th><th>rule</th><th class="num" title='
             f'"one per message it is on, in each conversation">found</th></tr>{rules}</table>'
             if rules else
             '<p class="ok">no findings</p>')
    return (f'<section id="run-summary"><p><span>{len(convs)} conversation(s)</span> '
            f"<span>{summary.requests} request(s)</span> <span>{errors} error(s), "
            f"{warnings} warning(s)</span></p>{table}<nav class=\"convs\">{nav}</nav></section>")


COLOURS = 12      # .agent.a0 … .a11: the run's agents in the order they first appear


def agent_badge(agent: str | None, palette: dict[str, int] | None = None) -> str:
    """The agent's name on its own colour: ``palette`` numbers the run's agents in order (up
    to twelve colours); without it the name picks one."""
    if not agent:
        return ""
    import zlib

    k = palette.setdefault(agent, len(palette)) if palette is not None else \
        zlib.crc32(agent.encode("utf-8", "replace"))
    return f'<span class="agent a{k % COLOURS}" data-agent="{esc(agent)}">{esc(agent)}</span>'


def tree_html(roots: Sequence[Node], anchors: dict[Path, str], convs: dict[Path, Conversation],
              palette: dict[str, int] | None = None) -> str:
    """The run's conversations as a tree: each under the call that started it, collapsible."""
    def item(node: Node) -> str:
        conv = convs.get(node.path)
        title = (f'<a href="#{anchors.get(node.path, "")}">{esc(node.label)}</a> '
                 f"{agent_badge(node.agent, palette)} "
                 f"{_counts(conv) if conv is not None else ''}"
                 + (f' <span class="how">{esc(node.how())}</span>' if node.started_by else ""))
        if not node.children:
            return f'<div class="leaf" data-conversation="{node.number}">{title}</div>'
        inner = "".join(item(c) for c in node.children)
        return (f'<details open data-conversation="{node.number}"><summary>{title}</summary>'
                f"{inner}</details>")
    return f'<nav class="tree" aria-label="agents">{"".join(item(r) for r in roots)}</nav>'


def anchors_of(paths: Sequence[Path]) -> dict[Path, str]:
    """A stable element id per transcript of the run: its position (new ones come last)."""
    return {Path(p): f"c{k + 1}" for k, p in enumerate(paths)}


def render_run_report(paths: Sequence[str | os.PathLike], title: str, *,
                      profile: str = "openai") -> str:
    """The static page of a run: every conversation, no scripts (``html.page``'s CSP)."""
    from agentdbg.transcript.tree import build

    ordered = [Path(p) for p in paths]
    anchors = anchors_of(ordered)
    sections, convs, headers = [], [], []
    palette: dict[str, int] = {}
    for p in ordered:
        run, diffs = read_conversation(p, profile)
        convs.append(conversation_of(run))
        headers.append((p, run.header))   # with the agent its events named last
        sections.append(conversation_html(run, diffs, anchors[p], palette=palette))
    roots = build(headers)
    tree = tree_html(roots, anchors, {c.path: c for c in convs}, palette) \
        if any(h.started_by is not None or h.agent for _, h in headers) else ""
    body = (f'<header class="run"><h1>agentdbg — {esc(title)}</h1></header>'
            f"{run_summary_html(RunSummary(convs), anchors)}{tree}{''.join(sections)}{foot_html()}")
    return page(f"agentdbg — {esc(title)}", body, css=CSS + RUN_CSS)

