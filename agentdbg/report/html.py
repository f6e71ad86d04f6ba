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

from agentdbg.i18n import _, language, recorded, tr
from agentdbg.messages import NestedTooDeeply, loads_json, shown_json
from agentdbg.providers.offline_note import read_note
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
    parts.append('<h2 id="timeline">' + esc(_("Timeline")) + "</h2>")
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
    return (f"<!DOCTYPE html>\n<html lang=\"{esc(language())}\"><head><meta charset=\"utf-8\">\n"
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
    return esc(_("agentdbg report")) + (f" — {esc(str(question)[:80])}" if question else "")


# -- header and summary --------------------------------------------------------------------

def head_html(run: Run) -> str:
    return "<header><h1>" + esc(_("agentdbg report")) + f"</h1>{head_rows(run)}</header>"


def head_rows(run: Run) -> str:
    """The transcript's header as a list of fields (and the warnings reading it gave)."""
    h = run.header
    rows: list[tuple[str, object]] = [
        (_("model"), h.model), (_("provider"), h.provider), (_("base URL"), h.base_url),
        (_("question"), h.question), (_("tools"), _tool_names(run) or _("(none)")),
        (_("created"), h.created), (_("transcript"), run.path.name), ("agentdbg", h.agentdbg_version)]
    if h.parent is not None:
        rows.append((_("fork of"), _("{path} at message {index}").format(
            path=h.parent.path, index=h.parent.from_index)))
    if h.conversation is not None:
        rows.append((_("proxy conversation"), h.conversation))
    options: dict = h.options.given() if h.options is not None else {}
    shown = {k: options[k] for k in ("max_turns", "max_tool_calls", "repeat_limit", "timeout",
                                     "tool_choice", "parallel_tool_calls", "temperature")
             if options.get(k) is not None}
    if shown:
        rows.append((_("options"), ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                                          for k, v in shown.items())))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc('' if v is None else str(v))}</dd>" for k, v in rows)
    warning = _("warning: {text}")
    warnings = "".join(f'<p class="bad">{esc(warning.format(text=w))}</p>' for w in run.warnings)
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
    said = _("{n} tool definition(s)").format(n=len(lines))
    return (f'<details class="tools"><summary>{esc(said)}</summary>'
            f"<ul>{items}</ul></details>")


def summary_html(run: Run, heading: str | None = None) -> str:
    from agentdbg.render.run import stop_label
    from agentdbg.render.view import finding_text, severity_word

    heading = heading if heading is not None else "<h2>" + esc(_("Summary")) + "</h2>"
    u = run.usage()
    calls = run.calls()
    findings = distinct_findings(run.findings())
    errors = sum(f.severity == "error" for f in findings)
    reason = run.stop_reason or _("(no stop event: the run was cut)")
    cls = "ok" if run.stop_reason == "completed" else "bad"
    tokens = (_("{prompt} prompt + {completion} completion = {total} tokens (estimated)")
              if u["estimated"] else _("{prompt} prompt + {completion} completion = {total} tokens"))
    spans = [_("stop: {reason}").format(reason=stop_label(reason)),
             turns_said(run), _("{n} tool call(s)").format(n=len(calls)),
             tokens.format(prompt=u["prompt_tokens"], completion=u["completion_tokens"],
                           total=u["total_tokens"]),
             _("{errors} error(s), {warnings} warning(s)").format(errors=errors,
                                                                  warnings=len(findings) - errors),
             _("{n} action(s) by you").format(n=len(run.actions) + run.actions_not_shown)]
    out = [f'<section class="summary">{heading}<p><span class="{cls}">{esc(spans[0])}</span>'
           + "".join(f"<span>{esc(text)}</span>" for text in spans[1:]) + "</p>"]
    if run.actions_not_shown:
        out.append("<p>" + esc(_("The timeline shows your first {shown} actions; the other {rest} "
                                 "are in the transcript, not drawn here.").format(
            shown=f"{len(run.actions):,}", rest=f"{run.actions_not_shown:,}")) + "</p>")
    if findings:
        out.append("<ul>")
        at = _(" at {where}: ")
        for f in findings:
            where = f"[{f.index}]" if f.index is not None else _("request")
            out.append(f'<li><span class="{_sev(f)}">{esc(severity_word(f.severity))} {esc(f.rule)}'
                       f"</span>{esc(at.format(where=where))}"
                       f"{esc(finding_text(f))}</li>")
        out.append("</ul>")
    out.append("</section>")
    return "".join(out)


def turns_said(run: Run) -> str:
    """``2 turn(s)`` as the last history holds them, and the requests made when a rewind or
    retry made more: ``2 turn(s) in 4 request(s)``."""
    if run.turns_in_history == len(run.turns):
        return _("{n} turn(s)").format(n=len(run.turns))
    return _("{n} turn(s) in {requests} request(s)").format(n=run.turns_in_history,
                                                            requests=len(run.turns))


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
    from agentdbg.render.budget import part_label
    rows = []
    for part in b.parts:
        share = part.tokens / b.total if b.total else 0.0
        rows.append(f"<tr><td>{esc(part_label(part))}</td><td class=\"num\">{part.tokens}</td>"
                    f"<td><meter min=\"0\" max=\"1\" value=\"{share:.3f}\"></meter> "
                    f"{share * 100:.0f}%</td></tr>")
    method = tr(b.method_shown or b.method)
    counted = (_("counted with {method}; the provider reported {n} prompt tokens").format(
        method=method, n=b.reported) if b.reported is not None else
        _("counted with {method}").format(method=method))
    title = _("Context budget of the last request (turn {turn})").format(turn=b.turn)
    return (f'<section id="budget"><h2>{esc(title)}</h2>'
            f'<p class="dim">{esc(counted)}</p>'
            "<table><tr><th>" + esc(_("part")) + '</th><th class="num">' + esc(_("tokens"))
            + "</th><th>" + esc(_("share")) + f"</th></tr>{''.join(rows)}</table></section>")


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
        said = _("history changed: messages 0..{last} as before; from [{start}] on they differ from "
                 "what was shown above").format(last=h.start - 1, start=h.start)
        out.append(f'<div class="rewrite" id="{ns}history-{number}">{esc(said)}</div>')
        earlier = sorted(i for i in view.findings if isinstance(i, int) and i < h.start)
        if earlier:
            out.append('<div class="card final"><h3>' + esc(_("re-checked in this history")) + "</h3>")
            out.extend(_message(view, i, new=False) for i in earlier)
            out.append("</div>")
    request_level = view.findings.get(None, [])
    out.extend(finding_html(f) for f in request_level)
    for card in h.cards:
        out.append(_card(view, card))
    past = [f for i, fs in view.findings.items() if isinstance(i, int) and i >= len(h.messages)
            for f in fs]
    if past:
        out.append(f'<div class="card final"><div class="msg"><span></span><span class="idx">'
                   f'[{len(h.messages)}]</span><span class="role bad">—</span><div class="body">'
                   '<span class="dim">' + esc(_("(missing: nothing here)")) + "</span>"
                   f"{''.join(finding_html(f) for f in past)}</div></div></div>")
    return "".join(out)


def turn_title(card: Card) -> str:
    """``turn 2`` as the history counts it (as step mode said it), and the request's number
    in time when a rewind or retry made them differ: ``turn 2 (request 3)``."""
    turn = card.in_history if card.in_history is not None else card.turn
    if card.turn is not None and turn != card.turn:
        return _("turn {turn} (request {request})").format(turn=turn, request=card.turn)
    return _("turn {turn}").format(turn=turn if turn is not None else "?")


def _card(view: _View, card: Card) -> str:
    if card.kind == "action":
        return _action(card.action) if card.action is not None else ""
    if card.kind == "blocked":
        items = "".join(finding_html(f, where=True) for f in card.findings)
        said = _("{turn}: the request was blocked by the pre-send check (not sent)").format(
            turn=turn_title(card))
        return f'<div class="card blocked"><h3>{esc(said)}</h3>{items}</div>'
    title = turn_title(card) if card.kind == "turn" else _("final messages")
    anchor = f' id="{view.ns}turn-{card.turn}"' if card.kind == "turn" and view.number == 0 else ""
    out = [f'<section class="card {card.kind}"{anchor}><h3>{esc(title)}</h3>']
    if card.request:
        params = {k: v for k, v in (card.request.get("params") or {}).items()
                  if k not in ("model", "tools") and v is not None}
        extra = " · " + esc(json.dumps(params, ensure_ascii=False)) if params else ""
        said = _("request: {n} message(s)").format(n=card.request.get("messages"))
        out.append(f'<div class="dim">{esc(said)}{extra}</div>')
    if view.extra is not None and card.kind == "turn":
        out.append(view.extra(card))
    out.extend(_message(view, i, new=True, card=card) for i in card.indices)
    out.extend(finding_html(f, where=True) for f in card.findings if f.index is None)
    if card.error:
        status = _(" (HTTP {status})").format(status=card.error.get("status")) \
            if card.error.get("status") else ""
        said = _("model error") + status + _(": ") + recorded(card.error.get("message") or "")
        out.append(f'<div class="finding error">{esc(said)}</div>')
    out.append("</section>")
    return "".join(out)


def _action(a: Action) -> str:
    from agentdbg.render.run import action_text

    kind = a.action
    text = action_text(a)
    detail = ""
    if kind == "edit":
        detail = ('<div class="dim">' + esc(_("before:")) + f"</div>{_fold(_json(a.before))}"
                  + '<div class="dim">' + esc(_("after:")) + f"</div>{_fold(_json(a.after))}")
    elif kind == "drop":
        detail = '<div class="dim">' + esc(_("removed:")) + f"</div>{_fold(_json(a.message))}"
    return f'<div class="card action"><h3>✎ {esc(text)}</h3>{detail}</div>'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def stop_html(run: Run, ns: str = "") -> str:
    stop = run.stop
    if stop is None:
        said = _("The transcript ends without one: the run was interrupted, or is still running.")
        return ('<div class="card stop bad"><h3>' + esc(_("■ no stop event")) + "</h3><p>"
                + esc(said) + "</p></div>")
    from agentdbg.render.run import stop_label

    reason = stop.reason
    cls = "stop" if reason == "completed" else "stop bad"
    u = run.usage()
    title = _("■ stopped: {reason} — {detail}").format(reason=stop_label(reason),
                                                       detail=recorded(stop.detail or ""))
    usage = _("usage: {prompt} prompt + {completion} completion = {total} tokens over {n} request(s); "
              "{calls} tool call(s)").format(prompt=u["prompt_tokens"], completion=u["completion_tokens"],
                                             total=u["total_tokens"], n=len(run.turns),
                                             calls=len(run.calls()))
    return f'<div class="card {cls}" id="{ns}stop"><h3>{esc(title)}</h3><p>{esc(usage)}</p></div>'


def foot_html() -> str:
    from agentdbg import __version__

    said = _("Made by agentdbg {version} from the transcript: a self-contained page (no scripts, no "
             "network); secrets were redacted when the transcript was written.").format(version=__version__)
    return f'<footer class="dim"><p>{esc(said)}</p></footer>'


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
        said = _("(not an object: {value})").format(value=repr(message)[:200])
        return f'<span class="bad">{esc(said)}</span>'
    out = []
    role = message.get("role")
    if role == "function":
        said = _("(legacy function result, name={name})").format(name=message.get("name"))
        out.append(f'<div class="dim">{esc(said)}</div>')
    if message.get("reasoning_content"):
        reasoning = _fold(str(message["reasoning_content"]), 200)
        out.append(f'<div class="dim">reasoning_content:</div>{reasoning}')
    if role == "tool":
        out.append(_tool_head(view, i, message))
    out.append(_content(message))
    if role == "assistant" and "tool_calls" in message:
        out.append(_calls(view, i, message))
    out.append(_meta(view, i, message, card))
    out.extend(finding_html(f) for f in view.findings.get(i, ()))
    return "".join(out)


def _content(message: dict) -> str:
    if "content" not in message:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            return ""
        return '<div class="dim">' + esc(_("(no content key)")) + "</div>"
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
            + esc(_("(content is a {kind})").format(kind=type(content).__name__)) + "</div>")


def fold(text: str, limit: int = adapter.FOLD_AT) -> str:
    return _fold(text, limit)


def _fold(text: str, limit: int = adapter.FOLD_AT) -> str:
    """Long text folded: a preview, and the whole of it one click away."""
    if len(text) <= limit:
        return f"<pre>{esc(text)}</pre>"
    more = _("… {n} more characters hidden (click to expand)").format(n=len(text) - limit)
    return (f'<details class="fold"><summary><pre class="preview">{esc(text[:limit])}</pre>'
            f'<span class="more">{esc(more)}</span>'
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
        return '<div class="bad">tool_calls: [] ' + esc(_("(empty)")) + "</div>"
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
        cid_text = esc(cid) if isinstance(cid, str) and cid else \
            '<span class="bad">' + esc(_("(no id)")) + "</span>"
        answer = pairing.answer_of.get((i, pos))
        answer = answer[0] if answer is not None else None
        text, style = adapter.call_status(i, pos, isinstance(cid, str) and cid in seen, pairing)
        if isinstance(cid, str):
            seen.add(cid)
        if view.pending == i and answer is None and cid is not None:
            status = '<span class="pending">' + esc(_("… not executed")) + "</span>"
        elif "green" in style and answer is not None:
            status = f'<a class="ok" href="#{view.msg_id(answer)}">{esc(text.strip())}</a>'
        else:
            status = f'<span class="{"pending" if "yellow" in style else "bad"}">{esc(text.strip())}</span>'
        name = fn.get("name") or _("(no name)")
        out.append(f'<div class="call">→ {_label(label)} <code>{cid_text}</code>  '
                   f"<b>{esc(name)}</b>   {status}"
                   f'<div class="args">{_arguments(fn)}</div></div>')
    return "".join(out)


def _arguments(fn: dict) -> str:
    if "arguments" not in fn:
        return '<span class="bad">' + esc(_("(no arguments)")) + "</span>"
    arguments = fn["arguments"]
    if not isinstance(arguments, str):
        said = _("(arguments is a {kind}, not a string)").format(kind=type(arguments).__name__)
        return f'<pre class="bad">{esc(shown_json(arguments))}   {esc(said)}</pre>'
    try:
        value = loads_json(arguments)
    except NestedTooDeeply as exc:
        return f'<pre class="bad">{esc(arguments)}   (JSON {esc(str(exc))})</pre>'
    except ValueError:
        return f'<pre class="bad">{esc(arguments)}   ' + esc(_("(not valid JSON)")) + "</pre>"
    text = json.dumps(value, ensure_ascii=False)
    if not (isinstance(value, dict) and len(text) <= 60):
        text = json.dumps(value, ensure_ascii=False, indent=2)
    return _fold(text)


def _tool_head(view: _View, i: int, message: dict) -> str:
    pairing = view.h.pairing
    tid = message.get("tool_call_id")
    text, style, asst, name = adapter.result_status(i, message, pairing, view.h.messages)
    label = pairing.label(tid) if asst is not None else None
    tid_text = esc(tid) if isinstance(tid, str) and tid else esc(_("(no tool_call_id)"))
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
            parts.append('<span class="dim">' + esc(_("model note: ")) + f"{esc(read_note(note))}</span>")
    if card is not None and message.get("role") == "tool":
        tid = message.get("tool_call_id")
        event = card.tools.get(tid) if isinstance(tid, str) else None
        if event is not None:
            parts.append(_tool_meta(event))
    marks = view.h.marks.get(i, set())
    from agentdbg.render.run import MARKS

    badges = " ".join(f'<span class="badge">{esc(MARKS.get(m, lambda m=m: f"[{m} by you]")())}</span>'
                      for m in sorted(marks))
    if badges:
        parts.append(badges)
    return "".join(f'<div class="meta">{p}</div>' for p in parts)


def _reply_meta(card: Card) -> str:
    r = card.response or {}
    usage = as_dict(r.get("usage"))
    latency = r.get("latency_ms")
    ms = _("{ms} ms").format(ms=f"{latency:.1f}" if isinstance(latency, (int, float)) else "?")
    said = (_("{prompt} prompt{cache} + {completion} completion = {total} tokens (estimated)")
            if usage.get("estimated") else
            _("{prompt} prompt{cache} + {completion} completion = {total} tokens"))
    tokens = said.format(prompt=usage.get("prompt_tokens", "?"), cache=_cache(usage),
                         completion=usage.get("completion_tokens", "?"),
                         total=usage.get("total_tokens", "?")) if usage else _("no usage reported")
    turn = card.in_history if card.in_history is not None else card.turn
    return (_("turn {turn}").format(turn=turn) + f" · {tokens} · {ms} · "
            f"finish_reason={r.get('finish_reason')}")


def _cache(usage: dict) -> str:
    """The prompt's cache counts as the API reported them (Anthropic: written, read; OpenAI:
    cached), when any."""
    words = ((("cache_creation_input_tokens", _("{n} written to the cache")),
              ("cache_read_input_tokens", _("{n} read from the cache")),
              ("cached_tokens", _("{n} cached"))))
    parts = [word.format(n=usage[k]) for k, word in words
             if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) and usage[k]]
    uncached = usage.get("input_tokens")
    if parts and isinstance(uncached, int) and not isinstance(uncached, bool):
        parts.insert(0, _("{n} uncached").format(n=uncached))
    return f" ({', '.join(parts)})" if parts else ""


def _tool_meta(e: Tool) -> str:
    parts = []
    if e.duration_ms is not None:
        parts.append(esc(_("{ms} ms").format(ms=f"{e.duration_ms:.1f}")))
    if e.ok is False:
        said = (_("error: {type} (retryable)") if e.retryable else _("error: {type}")).format(
            type=e.error_type)
        parts.append(f'<span class="bad">{esc(said)}</span>')
    if e.truncated_chars:
        parts.append(esc(_("cut {n} characters").format(n=e.truncated_chars)))
    if e.stubbed:
        parts.append(esc(_("fixture (stub)")))
    if e.injected:
        parts.append('<span class="injected">' + esc(_("injected fault")) + "</span>")
    if e.note and not e.injected:
        parts.append(esc(e.note))
    if e.ok is False and e.cause:
        parts.append('<span class="bad">' + esc(_("raised {cause}").format(cause=e.cause)) + "</span> "
                     + esc(_("(the model saw only the error)")))
    return " · ".join(parts)


def finding_html(f: Any, where: bool = False) -> str:
    from agentdbg.render.view import finding_text, severity_word

    sev = "error" if f.severity == "error" else "warning"
    mark = "✗" if sev == "error" else "!"
    at = _(" at [{index}]").format(index=f.index) if where and f.index is not None else ""
    who = _("{api} says: ").format(api=getattr(f, "api_source", None) or "API")  # the terminal's words
    api = (f'<div class="api">{esc(who)}{esc(f.api_error)}</div>' if getattr(f, "api_error", None)
           else "")
    return (f'<div class="finding {sev}"><b>{mark} {esc(severity_word(sev))} {esc(f.rule)}</b>'
            + esc(at + _(": ") + finding_text(f)) + f"{api}</div>")



# -- a diff in the page ------------------------------------------------------------------------

def diff_html(d: Any) -> str:
    """The diff of two runs (``diff.RunDiff``) as a section of the page."""
    from agentdbg.report.diff import diff_lines

    lines = "".join(f'<div class="{cls}">{esc(text)}</div>' for cls, text in diff_lines(d))
    heading = _("Diff")
    return (f'<section id="diff"><h2>{esc(heading)}</h2><div class="card"><pre>{lines}</pre>'
            '</div></section>')
