"""``agentdbg report``: one self-contained HTML file of a run, safe to attach to a bug report.

No network and no scripts: the page carries its own CSS (allowed by hash in a
Content-Security-Policy that forbids everything else), long contents fold with
``<details>`` (expand on click, no JavaScript), and every recorded string is made
visible (control characters as escapes) and HTML-escaped, so a tool result holding
``<script>`` is shown as text. The words match the terminal view: labels A, B …,
``✓ answered at [i]``, ``✓ answers [i]``, the ✗ statuses, findings with "API says".
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Callable
from typing import Any

from agentdbg.messages import NestedTooDeeply, loads_json, shown_json
from agentdbg.report import adapter
from agentdbg.report.timeline import Card, History, Run, as_dict
from agentdbg.transcript.events import Action, Tool

LABEL_CLASSES = 8
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d232b}
main{max-width:1100px;margin:0 auto;padding:16px 20px 48px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:24px 0 8px}h3{font-size:14px;margin:0 0 6px}
dl.head{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}
dl.head dt{font-weight:600;color:#555}dl.head dd{margin:0;white-space:pre-wrap;word-break:break-word}
.card{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:10px 12px;margin:10px 0}
.card.action{border-left:4px solid #8250df}.card.blocked{border-left:4px solid #cf222e}
.card.final{border-left:4px solid #57606a}.card.stop{border-left:4px solid #1a7f37}
.card.stop.bad{border-left-color:#cf222e}
.rewrite{background:#fff8c5;border:1px solid #d4a72c;border-radius:4px;padding:4px 8px;margin:6px 0}
.msg{display:grid;grid-template-columns:1.2em 3.4em 6.5em 1fr;gap:0 6px;padding:3px 0;
border-top:1px dashed #eaeef2}
.msg .idx{color:#6e7781;text-align:right}.new{color:#1a7f37;font-weight:700}
.role-system .role,.role-developer .role{color:#8250df}.role-user .role{color:#1a7f37}
.role-assistant .role{color:#0969da}.role-tool .role,.role-function .role{color:#9a6700}
.body{min-width:0}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:13px/1.4 ui-monospace,Menlo,Consolas,monospace}
.call{margin:2px 0}.args{margin-left:2em;color:#24292f}
.lab{font-weight:700}.l0{color:#0550ae}.l1{color:#8250df}.l2{color:#1a7f37}.l3{color:#bc4c00}
.l4{color:#1b7c83}.l5{color:#cf222e}.l6{color:#6639ba}.l7{color:#7d4e00}
.ok{color:#1a7f37}.bad{color:#cf222e;font-weight:600}.pending{color:#9a6700}
.meta,.dim{color:#6e7781}.badge{color:#8250df;font-weight:600}
.injected{color:#bc4c00;font-weight:600}
.finding{margin:4px 0;padding:4px 8px;border-radius:4px}
.finding.error{background:#ffebe9;border:1px solid #ff8182}
.finding.warning{background:#fff8c5;border:1px solid #d4a72c}
.finding .api{margin-left:2em;font-style:italic}
details.fold>summary{cursor:pointer;color:#0969da;display:block;list-style:none}
details.fold>summary::-webkit-details-marker{display:none}
details.fold[open]>summary .preview{display:none}
details.fold>summary .preview{color:#1d232b}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
td.num,th.num{text-align:right}meter{width:160px}
.summary span{margin-right:14px}
"""


def render_report(source: Any, *, diff_with: Any = None, profile: str = "openai",
                  budget: bool = True) -> str:
    """The whole HTML page for a transcript (path, loaded Transcript or Run)."""
    from agentdbg.report.timeline import read_run

    run = read_run(source, profile=profile)
    parts = [head_html(run), summary_html(run)]
    if budget:
        parts.append(_budget(run))
    parts.append('<h2 id="timeline">Timeline</h2>')
    for number, history in enumerate(run.histories):
        parts.append(_history(run, number, history))
    parts.append(stop_html(run))
    if diff_with is not None:
        from agentdbg.report.diff import diff_runs

        parts.append(diff_html(diff_runs(run, read_run(diff_with, profile=profile))))
    parts.append(foot_html())
    return page(_title(run), "".join(parts))


def page(title: str, body: str, css: str = CSS) -> str:
    """The page around ``body``: its own CSS allowed by hash, nothing else (no scripts)."""
    style_hash = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; style-src 'sha256-{style_hash}'; script-src 'none'; "
           "img-src 'none'; font-src 'none'; connect-src 'none'; frame-src 'none'; "
           "object-src 'none'; media-src 'none'; base-uri 'none'; form-action 'none'")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
            f"<title>{title}</title>\n<style>{css}</style></head>\n"
            f"<body><main>{body}</main></body></html>\n")


def esc(value: Any) -> str:
    """Recorded text as inert HTML: control characters made visible, then escaped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(adapter.safe(adapter.redact(text)), quote=True)


def _title(run: Run) -> str:
    question = run.header.question
    return "agentdbg report" + (f" — {esc(str(question)[:80])}" if question else "")


# -- header and summary --------------------------------------------------------------------

def head_html(run: Run) -> str:
    return f'<header><h1>agentdbg report</h1>{head_rows(run)}</header>'


def head_rows(run: Run) -> str:
    """The transcript's header as a list of fields (and the warnings reading it gave)."""
    h = run.header
    rows: list[tuple[str, object]] = [
        ("model", h.model), ("provider", h.provider), ("base URL", h.base_url),
        ("question", h.question), ("tools", _tool_names(run) or "(none)"),
        ("created", h.created), ("transcript", run.path.name), ("agentdbg", h.agentdbg_version)]
    if h.parent is not None:
        rows.append(("fork of", f"{h.parent.path} at message {h.parent.from_index}"))
    if h.conversation is not None:
        rows.append(("proxy conversation", h.conversation))
    options: dict = h.options.given() if h.options is not None else {}
    shown = {k: options[k] for k in ("max_turns", "max_tool_calls", "repeat_limit", "timeout",
                                     "tool_choice", "parallel_tool_calls", "temperature")
             if options.get(k) is not None}
    if shown:
        rows.append(("options", ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                                          for k, v in shown.items())))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc('' if v is None else str(v))}</dd>" for k, v in rows)
    warnings = "".join(f'<p class="bad">warning: {esc(w)}</p>' for w in run.warnings)
    return f'<dl class="head">{items}</dl>{_definitions(run)}{warnings}'


def _tool_names(run: Run) -> str:
    from agentdbg.conversation import definitions_text

    return "".join(definitions_text(run.definitions))


def _definitions(run: Run) -> str:
    """The tool definitions the requests offered, one per line (folded: they can be long)."""
    from agentdbg.conversation import definitions_text

    lines = definitions_text(run.definitions, full=True)
    if not lines:
        return ""
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return (f'<details class="tools"><summary>{len(lines)} tool definition(s)</summary>'
            f"<ul>{items}</ul></details>")


def summary_html(run: Run, heading: str = "<h2>Summary</h2>") -> str:
    u = run.usage()
    calls = run.calls()
    findings = distinct_findings(run.findings())
    errors = sum(f.severity == "error" for f in findings)
    reason = run.stop_reason or "(no stop event: the run was cut)"
    cls = "ok" if reason == "completed" else "bad"
    est = " (estimated)" if u["estimated"] else ""
    out = [f'<section class="summary">{heading}<p><span class="{cls}">stop: {esc(reason)}</span>'
           f"<span>{len(run.turns)} turn(s)</span><span>{len(calls)} tool call(s)</span>"
           f"<span>{u['prompt_tokens']} prompt + {u['completion_tokens']} completion = "
           f"{u['total_tokens']} tokens{est}</span>"
           f"<span>{errors} error(s), {len(findings) - errors} warning(s)</span>"
           f"<span>{len(run.actions) + run.actions_not_shown} action(s) by you</span></p>"]
    if run.actions_not_shown:
        out.append(f"<p>The timeline shows your first {len(run.actions):,} actions; the other "
                   f"{run.actions_not_shown:,} are in the transcript, not drawn here.</p>")
    if findings:
        out.append("<ul>")
        for f in findings:
            where = f"[{f.index}]" if f.index is not None else "request"
            out.append(f'<li><span class="{_sev(f)}">{esc(f.severity)} {esc(f.rule)}</span> at '
                       f"{esc(where)}: {esc(f.message)}</li>")
        out.append("</ul>")
    out.append("</section>")
    return "".join(out)


def distinct_findings(findings: list) -> list:
    """One line per rule and message index (a defect seen in several requests counts once)."""
    seen: set = set()
    out = []
    for f in findings:
        if (f.rule, f.index) not in seen:
            seen.add((f.rule, f.index))
            out.append(f)
    return out


def _sev(f: Any) -> str:
    return "bad" if f.severity == "error" else "pending"


def _budget(run: Run) -> str:
    from agentdbg.report.budget import budget_of_run

    b = budget_of_run(run)
    if b is None:
        return ""
    return budget_html(b)


def budget_html(b: Any) -> str:
    rows = []
    for part in b.parts:
        share = part.tokens / b.total if b.total else 0.0
        rows.append(f"<tr><td>{esc(part.label)}</td><td class=\"num\">{part.tokens}</td>"
                    f"<td><meter min=\"0\" max=\"1\" value=\"{share:.3f}\"></meter> "
                    f"{share * 100:.0f}%</td></tr>")
    reported = (f"; the provider reported {b.reported} prompt tokens"
                if b.reported is not None else "")
    return (f'<section id="budget"><h2>Context budget of the last request (turn {b.turn})</h2>'
            f'<p class="dim">counted with {esc(b.method)}{esc(reported)}</p>'
            f"<table><tr><th>part</th><th class=\"num\">tokens</th><th>share</th></tr>"
            f"{''.join(rows)}</table></section>")


# -- the timeline ----------------------------------------------------------------------------

class _View:
    """What rendering one history needs: its messages, pairing, findings and marks.

    ``ns`` prefixes every element id (several conversations on one page); ``extra(card)``
    is HTML a page adds to a turn card (the run page: what changed since the last request)."""

    def __init__(self, run: Run, number: int, history: History, ns: str = "",
                 extra: Callable[[Card], str] | None = None):
        self.run, self.number, self.h = run, number, history
        self.ns, self.extra = ns, extra
        self.findings = history.findings_at()
        self.pending = len(history.messages) - 1 if history.pending_last else None

    def msg_id(self, i: int) -> str:
        return f"{self.ns}h{self.number}-m{i}"


def history_html(run: Run, number: int, h: History, *, ns: str = "",
                 extra: Callable[[Card], str] | None = None) -> str:
    """One history of the timeline (see ``_View`` for ``ns`` and ``extra``)."""
    return _history(run, number, h, ns, extra)


def _history(run: Run, number: int, h: History, ns: str = "",
             extra: Callable[[Card], str] | None = None) -> str:
    view = _View(run, number, h, ns, extra)
    out = []
    if number:
        out.append(f'<div class="rewrite" id="{ns}history-{number}">history changed: messages '
                   f"0..{h.start - 1} as before; from [{h.start}] on they differ from what was "
                   "shown above</div>")
        earlier = sorted(i for i in view.findings if isinstance(i, int) and i < h.start)
        if earlier:
            out.append('<div class="card final"><h3>re-checked in this history</h3>')
            out.extend(_message(view, i, new=False) for i in earlier)
            out.append("</div>")
    request_level = view.findings.get(None, [])
    out.extend(_finding(f) for f in request_level)
    for card in h.cards:
        out.append(_card(view, card))
    past = [f for i, fs in view.findings.items() if isinstance(i, int) and i >= len(h.messages)
            for f in fs]
    if past:
        out.append(f'<div class="card final"><div class="msg"><span></span><span class="idx">'
                   f'[{len(h.messages)}]</span><span class="role bad">—</span><div class="body">'
                   f'<span class="dim">(missing: nothing here)</span>'
                   f"{''.join(_finding(f) for f in past)}</div></div></div>")
    return "".join(out)


def _card(view: _View, card: Card) -> str:
    if card.kind == "action":
        return _action(card.action) if card.action is not None else ""
    if card.kind == "blocked":
        items = "".join(_finding(f, where=True) for f in card.findings)
        return (f'<div class="card blocked"><h3>request {card.turn or ""} blocked by the pre-send '
                f"check (not sent)</h3>{items}</div>")
    title = f"turn {card.turn}" if card.kind == "turn" else "final messages"
    anchor = f' id="{view.ns}turn-{card.turn}"' if card.kind == "turn" and view.number == 0 else ""
    out = [f'<section class="card {card.kind}"{anchor}><h3>{esc(title)}</h3>']
    if card.request:
        params = {k: v for k, v in (card.request.get("params") or {}).items()
                  if k not in ("model", "tools") and v is not None}
        extra = " · " + esc(json.dumps(params, ensure_ascii=False)) if params else ""
        out.append(f'<div class="dim">request: {card.request.get("messages")} message(s){extra}</div>')
    if view.extra is not None and card.kind == "turn":
        out.append(view.extra(card))
    out.extend(_message(view, i, new=True, card=card) for i in card.indices)
    out.extend(_finding(f, where=True) for f in card.findings if f.index is None)
    if card.error:
        status = f" (HTTP {card.error.get('status')})" if card.error.get("status") else ""
        out.append(f'<div class="finding error">model error{esc(status)}: '
                   f"{esc(card.error.get('message') or '')}</div>")
    out.append("</section>")
    return "".join(out)


def _action(a: Action) -> str:
    from agentdbg.render.run import action_text

    kind = a.action
    text = action_text(a)
    detail = ""
    if kind == "edit":
        detail = (f'<div class="dim">before:</div>{_fold(_json(a.before))}'
                  f'<div class="dim">after:</div>{_fold(_json(a.after))}')
    elif kind == "drop":
        detail = f'<div class="dim">removed:</div>{_fold(_json(a.message))}'
    return f'<div class="card action"><h3>✎ {esc(text)}</h3>{detail}</div>'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def stop_html(run: Run, ns: str = "") -> str:
    stop = run.stop
    if stop is None:
        return ('<div class="card stop bad"><h3>■ no stop event</h3><p>The transcript ends '
                "without one: the run was interrupted, or is still running.</p></div>")
    reason = stop.reason
    cls = "stop" if reason == "completed" else "stop bad"
    u = run.usage()
    return (f'<div class="card {cls}" id="{ns}stop"><h3>■ stopped: {esc(reason)} — '
            f"{esc(stop.detail or '')}</h3><p>usage: {u['prompt_tokens']} prompt + "
            f"{u['completion_tokens']} completion = {u['total_tokens']} tokens over "
            f"{len(run.turns)} request(s); {len(run.calls())} tool call(s)</p></div>")


def foot_html() -> str:
    from agentdbg import __version__

    return (f'<footer class="dim"><p>Made by agentdbg {esc(__version__)} from the transcript: '
            "a self-contained page (no scripts, no network); secrets were redacted when the "
            "transcript was written.</p></footer>")


# -- one message -----------------------------------------------------------------------------

def _message(view: _View, i: int, *, new: bool, card: Card | None = None) -> str:
    h = view.h
    if not 0 <= i < len(h.messages):
        return ""
    message = h.messages[i]
    role = message.get("role") if isinstance(message, dict) else None
    role_text = role if isinstance(role, str) else "?"
    body = _body(view, i, message, card)
    mark = '<span class="new">+</span>' if new else "<span></span>"
    cls = f"role-{role_text}" if role_text.isidentifier() else "role-other"
    return (f'<div class="msg {cls}" id="{view.msg_id(i)}">{mark}<span class="idx">[{i}]</span>'
            f'<span class="role">{esc(role_text)}</span><div class="body">{body}</div></div>')


def _body(view: _View, i: int, message: Any, card: Card | None) -> str:
    if not isinstance(message, dict):
        return f'<span class="bad">(not an object: {esc(repr(message)[:200])})</span>'
    out = []
    role = message.get("role")
    if role == "function":
        out.append(f'<div class="dim">(legacy function result, name={esc(str(message.get("name")))})</div>')
    if message.get("reasoning_content"):
        reasoning = _fold(str(message["reasoning_content"]), 200)
        out.append(f'<div class="dim">reasoning_content:</div>{reasoning}')
    if role == "tool":
        out.append(_tool_head(view, i, message))
    out.append(_content(message))
    if role == "assistant" and "tool_calls" in message:
        out.append(_calls(view, i, message))
    out.append(_meta(view, i, message, card))
    out.extend(_finding(f) for f in view.findings.get(i, ()))
    return "".join(out)


def _content(message: dict) -> str:
    if "content" not in message:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            return ""
        return '<div class="dim">(no content key)</div>'
    content = message["content"]
    if content is None:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            return ""
        return '<div class="dim">content: null</div>'
    if isinstance(content, str):
        return _fold(content) if content else '<div class="dim">content: ""</div>'
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict)]
        if len(texts) == len(content) and all(isinstance(t, str) for t in texts):
            return _fold("".join(texts))
    return (f'<div class="bad">{esc(json.dumps(content, ensure_ascii=False))}   '
            f"(content is a {esc(type(content).__name__)})</div>")


def fold(text: str, limit: int = adapter.FOLD_AT) -> str:
    return _fold(text, limit)


def _fold(text: str, limit: int = adapter.FOLD_AT) -> str:
    """Long text folded: a preview, and the whole of it one click away."""
    if len(text) <= limit:
        return f"<pre>{esc(text)}</pre>"
    hidden = len(text) - limit
    return (f'<details class="fold"><summary><pre class="preview">{esc(text[:limit])}</pre>'
            f'<span class="more">… {hidden} more characters hidden (click to expand)</span>'
            f"</summary><pre class=\"full\">{esc(text)}</pre></details>")


def _label(label: str | None) -> str:
    if not label:
        return '<span class="lab bad">?</span>'
    return f'<span class="lab l{sum(map(ord, label)) % LABEL_CLASSES}">{esc(label)}</span>'


def _calls(view: _View, i: int, message: dict) -> str:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return f'<div class="bad">tool_calls: {esc(json.dumps(calls, ensure_ascii=False))}</div>'
    if not calls:
        return '<div class="bad">tool_calls: [] (empty)</div>'
    pairing = view.h.pairing
    out = []
    seen: set = set()
    for pos, call in enumerate(calls):
        if not isinstance(call, dict):
            out.append(f'<div class="call bad">→ {esc(repr(call))}</div>')
            continue
        cid = call.get("id")
        fn = as_dict(call.get("function"))
        label = pairing.label(cid)
        cid_text = esc(cid) if isinstance(cid, str) and cid else '<span class="bad">(no id)</span>'
        answer = pairing.answer_of.get((i, pos))
        text, style = adapter.call_status(i, pos, isinstance(cid, str) and cid in seen, pairing)
        if isinstance(cid, str):
            seen.add(cid)
        if view.pending == i and answer is None and cid is not None:
            status = '<span class="pending">… not executed</span>'
        elif "green" in style and answer is not None:
            status = f'<a class="ok" href="#{view.msg_id(answer)}">{esc(text.strip())}</a>'
        else:
            status = f'<span class="{"pending" if "yellow" in style else "bad"}">{esc(text.strip())}</span>'
        out.append(f'<div class="call">→ {_label(label)} <code>{cid_text}</code>  '
                   f"<b>{esc(fn.get('name') or '(no name)')}</b>   {status}"
                   f'<div class="args">{_arguments(fn)}</div></div>')
    return "".join(out)


def _arguments(fn: dict) -> str:
    if "arguments" not in fn:
        return '<span class="bad">(no arguments)</span>'
    arguments = fn["arguments"]
    if not isinstance(arguments, str):
        return (f'<pre class="bad">{esc(shown_json(arguments))}   (arguments '
                f"is a {esc(type(arguments).__name__)}, not a string)</pre>")
    try:
        value = loads_json(arguments)
    except NestedTooDeeply as exc:
        return f'<pre class="bad">{esc(arguments)}   (JSON {esc(str(exc))})</pre>'
    except ValueError:
        return f'<pre class="bad">{esc(arguments)}   (not valid JSON)</pre>'
    text = json.dumps(value, ensure_ascii=False)
    if not (isinstance(value, dict) and len(text) <= 60):
        text = json.dumps(value, ensure_ascii=False, indent=2)
    return _fold(text)


def _tool_head(view: _View, i: int, message: dict) -> str:
    pairing = view.h.pairing
    tid = message.get("tool_call_id")
    text, style, asst, name = adapter.result_status(i, message, pairing, view.h.messages)
    label = pairing.label(tid) if asst is not None else None
    tid_text = esc(tid) if isinstance(tid, str) and tid else "(no tool_call_id)"
    shown = f"  <b>{esc(name)}</b>" if isinstance(name, str) else ""
    mark = (f'<a class="ok" href="#{view.msg_id(asst)}">{esc(text)}</a>' if "green" in style
            else f'<span class="bad">{esc(text)}</span>')
    return f'<div class="call">← {_label(label)} <code>{tid_text}</code>{shown}   {mark}</div>'


def _meta(view: _View, i: int, message: dict, card: Card | None) -> str:
    parts = []
    if card is not None and card.reply == i and card.response:
        parts.append(esc(_reply_meta(card)))
        note = card.response.get("note")
        if note:
            parts.append(f'<span class="dim">model note: {esc(note)}</span>')
    if card is not None and message.get("role") == "tool":
        tid = message.get("tool_call_id")
        event = card.tools.get(tid) if isinstance(tid, str) else None
        if event is not None:
            parts.append(_tool_meta(event))
    marks = view.h.marks.get(i, set())
    badges = " ".join(f'<span class="badge">[{esc(m)} by you]</span>' for m in sorted(marks))
    if badges:
        parts.append(badges)
    return "".join(f'<div class="meta">{p}</div>' for p in parts)


def _reply_meta(card: Card) -> str:
    r = card.response or {}
    usage = as_dict(r.get("usage"))
    est = " (estimated)" if usage.get("estimated") else ""
    latency = r.get("latency_ms")
    ms = f"{latency:.1f} ms" if isinstance(latency, (int, float)) else "? ms"
    tokens = (f"{usage.get('prompt_tokens', '?')} prompt{_cache(usage)} + "
              f"{usage.get('completion_tokens', '?')} completion = {usage.get('total_tokens', '?')} "
              f"tokens{est}") if usage else "no usage reported"
    return f"turn {card.turn} · {tokens} · {ms} · finish_reason={r.get('finish_reason')}"


def _cache(usage: dict) -> str:
    """The prompt's cache counts as the API reported them (Anthropic: written, read; OpenAI:
    cached), when any."""
    parts = [f"{usage[k]} {word}" for k, word in (("cache_creation_input_tokens", "written to "
                                                   "the cache"), ("cache_read_input_tokens",
                                                                  "read from the cache"),
                                                  ("cached_tokens", "cached"))
             if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) and usage[k]]
    uncached = usage.get("input_tokens")
    if parts and isinstance(uncached, int) and not isinstance(uncached, bool):
        parts.insert(0, f"{uncached} uncached")
    return f" ({', '.join(parts)})" if parts else ""


def _tool_meta(e: Tool) -> str:
    parts = []
    if e.duration_ms is not None:
        parts.append(esc(f"{e.duration_ms:.1f} ms"))
    if e.ok is False:
        retry = " (retryable)" if e.retryable else ""
        parts.append(f'<span class="bad">error: {esc(str(e.error_type))}{esc(retry)}</span>')
    if e.truncated_chars:
        parts.append(esc(f"cut {e.truncated_chars} characters"))
    if e.stubbed:
        parts.append("fixture (stub)")
    if e.injected:
        parts.append('<span class="injected">injected fault</span>')
    if e.note and not e.injected:
        parts.append(esc(e.note))
    if e.ok is False and e.cause:
        parts.append(f'<span class="bad">raised {esc(e.cause)}</span> (the model saw only the error)')
    return " · ".join(parts)


def _finding(f: Any, where: bool = False) -> str:
    sev = "error" if f.severity == "error" else "warning"
    mark = "✗" if sev == "error" else "!"
    at = f" at [{f.index}]" if where and f.index is not None else ""
    who = f"{getattr(f, 'api_source', None) or 'API'} says"  # the terminal view's words
    api = (f'<div class="api">{esc(who)}: {esc(f.api_error)}</div>' if getattr(f, "api_error", None)
           else "")
    return (f'<div class="finding {sev}"><b>{mark} {esc(sev)} {esc(f.rule)}</b>{esc(at)}: '
            f"{esc(f.message)}{api}</div>")


# -- a diff in the page ------------------------------------------------------------------------

def diff_html(d: Any) -> str:
    """The diff of two runs (``diff.RunDiff``) as a section of the page."""
    from agentdbg.report.diff import diff_lines

    lines = "".join(f'<div class="{cls}">{esc(text)}</div>' for cls, text in diff_lines(d))
    return f'<section id="diff"><h2>Diff</h2><div class="card"><pre>{lines}</pre></div></section>'
