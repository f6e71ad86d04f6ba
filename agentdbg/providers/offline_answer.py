"""The offline model's final answer: the results of this question, and what it could not do.

English or Chinese, following the question. Every tool result since the question is
summarised; failures are reported once each; tools it could not call are named with
the parameter it could not fill and why; actions it left alone (negated, conditional,
a side-effecting call not retried) are said plainly.
"""

from __future__ import annotations

import json
from typing import Any

from agentdbg.providers.offline_history import Conversation, Result, fingerprint, json_object
from agentdbg.providers.offline_plan import Plan
from agentdbg.providers.offline_text import has_cjk


def answer(conv: Conversation, plan: Plan, no_tools: bool) -> str:
    t = _ZH if has_cjk(conv.question) else _EN
    lines: list[str] = [plan.problem] if plan.problem else []
    results = conv.results
    if not results:
        if no_tools:
            lines.append(t["no_tools"])
        elif not plan.missing and not plan.held and not plan.problem:
            lines.append(t["no_match"])
        elif plan.missing or plan.held:
            lines.append(t["could_not_call"])
    else:
        good = [r for r in results if r.error is None]
        lines.append(t["from_results"] if good else t["failed"])
        lines.extend(f"- {_label(r)}: {_summary(r.value)}" for r in good)
        lines.extend(_comparisons(good, t))
        lines.extend(f"- {t['could_not']} {_label(r)}: {_error_text(r.error)}"
                     for r in _latest_failures(results) if r.error is not None)
    seen = set()
    for m in plan.missing:
        if (m.tool, m.param) not in seen:
            seen.add((m.tool, m.param))
            lines.append("- " + t["missing"].format(tool=m.tool, param=m.param, reason=m.reason))
    for h in plan.held:
        lines.append("- " + t[h.kind].format(tool=h.tool, word=h.detail))
    return "\n".join(lines)


def _latest_failures(results: list[Result]) -> list[Result]:
    """The latest failure of each call that never succeeded, once."""
    settled = {fingerprint(r.name, r.arguments) for r in results if r.error is None}
    out: list[Result] = []
    for r in reversed(results):
        fp = fingerprint(r.name, r.arguments)
        if r.error is not None and fp not in settled:
            settled.add(fp)
            out.insert(0, r)
    return out


def _label(r: Result) -> str:
    parsed = json_object(r.arguments) or {}
    inner = ", ".join(f"{k}={v}" for k, v in parsed.items())
    return f"{r.name}({inner})"


def _short(v: Any, limit: int = 80) -> str:
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _summary(result: Any, depth: int = 0) -> str:
    if isinstance(result, dict):
        return ", ".join(f"{k}={_field(v, depth)}" for k, v in result.items()) or "{}"
    if isinstance(result, list):
        items = "; ".join(_short(_summary(x, depth + 1) if isinstance(x, dict) and depth < 1 else x, 120)
                          for x in result[:3])
        more = f"; … {len(result) - 3} more" if len(result) > 3 else ""
        return f"{len(result)} item(s)" + (f": {items}{more}" if items else "")
    text = str(result)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def _field(v: Any, depth: int) -> str:
    """A field of a result: short values as they are, a list of records item by item, a
    record field by field (``source=(timezone=Europe/Paris, datetime=…)``)."""
    if isinstance(v, list) and depth < 1 and any(isinstance(x, dict) for x in v):
        return f"[{_summary(v, depth + 1)}]"
    if isinstance(v, dict) and v and depth < 1 and len(v) <= 12:
        return _short(f"({_summary(v, depth + 1)})", 240)
    return _short(v)


def _comparisons(good: list[Result], t: dict) -> list[str]:
    """For two or more results of one tool sharing a numeric field: highest and lowest."""
    lines = []
    by_tool: dict[str, list[tuple[str, dict]]] = {}
    for r in good:
        if isinstance(r.value, dict):
            by_tool.setdefault(r.name, []).append((r.arguments, r.value))
    for rows in by_tool.values():
        if len(rows) < 2:
            continue
        numeric = [k for k, v in rows[0][1].items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)
                   and all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
                           for _, r in rows)]
        for key in numeric:
            ranked = sorted(rows, key=lambda r: r[1][key])
            lo, hi = ranked[0], ranked[-1]
            lines.append(t["compare"].format(key=key, hi=_who(hi[0]), hv=hi[1][key],
                                             lo=_who(lo[0]), lv=lo[1][key]))
    return lines


def _who(args: str) -> str:
    parsed = json_object(args) or {}
    return "/".join(str(v) for v in parsed.values()) or "?"


_EN = {
    "no_tools": "I have no tools for this request, and as the offline model I can only answer "
                "from tool results.",
    "no_match": "I could not match this question to any tool: no tool's required parameters "
                "could be filled from the question.",
    "could_not_call": "I could not call a tool for this question:",
    "from_results": "From the tool results:",
    "failed": "I could not get the information: every tool call failed.",
    "could_not": "could not get",
    "compare": "- {key}: highest {hi} ({hv}), lowest {lo} ({lv})",
    "missing": "could not call {tool}: required parameter {param} — {reason}",
    "negated": "did not call {tool}: the question says not to {word}",
    "how_to": "did not call {tool}: the question asks how to {word}, not to {word} now; "
              "ask me to {word} and I will",
    "conditional": "did not call {tool}: the question asks to {word} only under a condition, "
                   "which the offline model does not judge; ask again without the condition",
    "failed_side_effect": "did not retry {tool} after {word}: it has side effects and may have "
                          "gone through; check before trying again",
    "not_asked": "did not call {tool}: it changes something, and the question does not ask to {word}",
}
_ZH = {
    "no_tools": "这个请求没有可用的工具；离线模型只能根据工具结果回答。",
    "no_match": "我无法把这个问题对应到任何工具：问题中找不到任何工具必填参数的值。",
    "could_not_call": "我没能为这个问题调用工具：",
    "from_results": "根据工具结果：",
    "failed": "我没能获取到所需信息：所有工具调用都失败了。",
    "could_not": "未能获取",
    "compare": "- {key}：最高 {hi}（{hv}），最低 {lo}（{lv}）",
    "missing": "无法调用 {tool}：必填参数 {param} 没有值 — {reason}",
    "negated": "没有调用 {tool}：问题里说不要{word}",
    "how_to": "没有调用 {tool}：问题问的是怎样{word}，而不是现在就{word}；直接让我{word}即可",
    "conditional": "没有调用 {tool}：问题只在某个条件成立时才要求{word}，离线模型不判断条件；"
                   "请去掉条件再问一次",
    "failed_side_effect": "没有重试 {tool}（{word}）：它有副作用，可能已经执行；请先确认再重试",
    "not_asked": "没有调用 {tool}：它会改变数据，而问题没有要求这样做（{word}）",
}


def _error_text(error: dict) -> str:
    """``type — message``; the type alone when the tool gave no message."""
    message = error.get("message")
    kind = str(error.get("type"))
    return f"{kind} — {message}" if isinstance(message, str) and message.strip() else kind
