"""``agentdbg diff A B``: two runs aligned turn by turn and call by call.

Turns are aligned on the sequence of tools each asked for (so a turn inserted in one
run shows as added, not as every later turn changed); calls within a pair of turns
are aligned by tool name. Arguments and results are compared as parsed JSON (key
order and spacing do not matter), naming the first paths that differ. The first point
of divergence is the first turn that differs, with the first difference between the
two final messages arrays; the totals compare tokens, turns, tool calls and the stop.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Msg, _
from agentdbg.messages import loads_json
from agentdbg.report import adapter
from agentdbg.report.timeline import Call, Run, read_run

MAX_PATHS = 5

# What the comparison says (English in --json; ``diff_lines`` shows it in the chosen language)
FORK = N_("{name} is a fork of {other} at message {index}")
FIRST_MESSAGE = N_("first difference at {path}: A {a}, B {b}")
EXTRA_TURN = N_("B has an extra turn {turn}: {calls}")
MISSING_TURN = N_("A's turn {turn} is missing from B: {calls}")
ALSO_CALLS = N_("turn {turns}: B also calls {name}")
NOT_CALLS = N_("turn {turns}: B does not call {name}")
ARGS_DIFFER = N_("turn {turns}: {name} arguments differ at {path}: A {a}, B {b}")
RESULT_DIFFERS = N_("turn {turns}: {name} result differs at {path}: A {a}, B {b}")
ERROR_DIFFERS = N_("turn {turns}: model error A {a}, B {b}")
ANSWERS_DIFFER = N_("turn {turns}: the answers differ: A {a}, B {b}")
TURN_DIFFERS = N_("turn {turns} differs")
SAID = (FORK, FIRST_MESSAGE, EXTRA_TURN, MISSING_TURN, ALSO_CALLS, NOT_CALLS, ARGS_DIFFER,
        RESULT_DIFFERS, ERROR_DIFFERS, ANSWERS_DIFFER, TURN_DIFFERS)
#: words of a turn's signature and number, inside those texts
WORDS = {"(model error)": N_("(model error)"), "(answer)": N_("(answer)"),
         "inherited": N_("inherited")}


def said(text: str) -> str:
    """A text of the comparison (recorded in English, e.g. the first divergence) in the chosen
    language; as it is when it is none of them."""
    for template in SAID:
        found = Msg.parse(template, text)
        if found is not None:
            return Msg(template, {k: _words(v) for k, v in found.values.items()}).tr()
    return text


def _words(value: Any) -> str:
    """Signature words and turn numbers ("inherited", "2 (A) / 3 (B)") in the chosen language."""
    text = str(value)
    pair = Msg.parse("{a} (A) / {b} (B)", text)
    if pair is not None:
        return f"{_words(pair.values['a'])} (A) / {_words(pair.values['b'])} (B)"
    return ", ".join(_(WORDS[w]) if w in WORDS else w for w in text.split(", "))


@dataclass
class TurnView:
    turn: int | None
    calls: list[Call]
    answer: str | None
    error: str | None
    finish_reason: str | None

    @property
    def signature(self) -> tuple:
        if self.error is not None:
            return (WORDS["(model error)"],)
        return tuple(c.name or "?" for c in self.calls) or (WORDS["(answer)"],)


@dataclass
class CallDiff:
    status: str                     # same | changed | added | dropped
    name: str | None
    a: Call | None = None
    b: Call | None = None
    arguments: list[tuple[str, Any, Any]] = field(default_factory=list)
    result: list[tuple[str, Any, Any]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"status": self.status, "name": self.name,
                "a": _call_dict(self.a), "b": _call_dict(self.b),
                "arguments_differ": [_path_dict(p) for p in self.arguments],
                "result_differs": [_path_dict(p) for p in self.result]}


@dataclass
class TurnDiff:
    status: str                     # same | changed | added | dropped
    a: TurnView | None
    b: TurnView | None
    calls: list[CallDiff] = field(default_factory=list)
    answer: tuple[str | None, str | None] | None = None   # when the answers differ
    error: tuple[str | None, str | None] | None = None

    def to_dict(self) -> dict:
        return {"status": self.status, "a_turn": self.a.turn if self.a else None,
                "b_turn": self.b.turn if self.b else None,
                "calls": [c.to_dict() for c in self.calls],
                "answer_differs": None if self.answer is None else
                {"a": self.answer[0], "b": self.answer[1]},
                "model_error_differs": None if self.error is None else
                {"a": self.error[0], "b": self.error[1]}}


@dataclass
class Side:
    path: str
    model: str
    turns: int
    tool_calls: int
    usage: dict
    stop_reason: str | None
    stop_detail: str
    parent: dict | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RunDiff:
    a: Side
    b: Side
    turns: list[TurnDiff]
    first: dict | None              # the first point of divergence
    messages: str | None            # first difference between the final messages arrays
    fork: str | None = None         # B is a fork of A (or A of B)

    @property
    def same(self) -> bool:
        """Same calls, arguments, results, answers and stop (call ids and JSON spacing aside;
        ``messages`` still names the first raw difference, if any)."""
        return self.first is None and self.a.stop_reason == self.b.stop_reason

    def delta(self) -> dict:
        ua, ub = self.a.usage, self.b.usage
        return {"turns": self.b.turns - self.a.turns,
                "tool_calls": self.b.tool_calls - self.a.tool_calls,
                "tokens": {k: ub[k] - ua[k] for k in ("prompt_tokens", "completion_tokens",
                                                       "total_tokens")},
                "tokens_estimated": bool(ua.get("estimated") or ub.get("estimated")),
                "stop_reason": {"a": self.a.stop_reason, "b": self.b.stop_reason,
                                "same": self.a.stop_reason == self.b.stop_reason}}

    def to_dict(self) -> dict:
        return {"format": "agentdbg-diff", "version": 1, "same": self.same,
                "a": self.a.to_dict(), "b": self.b.to_dict(), "fork": self.fork,
                "first_divergence": self.first, "first_message_difference": self.messages,
                "delta": self.delta(), "turns": [t.to_dict() for t in self.turns]}


# -- building -----------------------------------------------------------------------------------

def diff_transcripts(a: Any, b: Any, *, profile: str = "openai") -> RunDiff:
    """Diff two transcripts (paths, loaded transcripts or Runs)."""
    return diff_runs(read_run(a, profile=profile, findings=False),
                     read_run(b, profile=profile, findings=False))


def turn_views(run: Run) -> list[TurnView]:
    """The run's turns; a fork's inherited assistant messages first, as turns numbered None."""
    calls_by_card: dict[tuple[int, int | None], list[Call]] = {}
    for c in run.calls(inherited=True, latest=True):
        calls_by_card.setdefault((c.history, c.message_index), []).append(c)
    out = []
    if run.histories and run.histories[0].cards:
        h = run.histories[0]
        for i in h.cards[0].sent:
            m = h.messages[i]
            if isinstance(m, dict) and m.get("role") == "assistant":
                content = m.get("content")
                out.append(TurnView(None, calls_by_card.get((0, i), []),
                                    content if isinstance(content, str) else None, None, None))
    for h_no, h in enumerate(run.histories):
        for card in h.cards:
            if card.kind != "turn" or (card.reply is None and card.error is None):
                continue
            reply = h.messages[card.reply] if card.reply is not None else None
            content = reply.get("content") if isinstance(reply, dict) else None
            out.append(TurnView(card.turn, calls_by_card.get((h_no, card.reply), []),
                                content if isinstance(content, str) else None,
                                (card.error or {}).get("message") if card.error else None,
                                (card.response or {}).get("finish_reason")))
    return out


def diff_runs(a: Run, b: Run) -> RunDiff:
    ta, tb = turn_views(a), turn_views(b)
    matcher = difflib.SequenceMatcher(None, [t.signature for t in ta], [t.signature for t in tb],
                                      autojunk=False)
    turns: list[TurnDiff] = []
    for _op, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = list(zip(ta[i1:i2], tb[j1:j2]))
        turns.extend(_turn_diff(x, y) for x, y in pairs)
        turns.extend(TurnDiff("dropped", x, None) for x in ta[i1 + len(pairs):i2])
        turns.extend(TurnDiff("added", None, y) for y in tb[j1 + len(pairs):j2])
    diff = _absent_marked(adapter.first_difference(a.final_messages, b.final_messages),
                          a.final_messages, b.final_messages)
    messages = _describe(diff) if diff else None
    first = next((_divergence(t) for t in turns if t.status != "same"), None)
    return RunDiff(_side(a), _side(b), turns, first, messages, _fork(a, b))


def _absent_marked(diff: tuple[str, Any, Any] | None, a: list, b: list) -> tuple[str, Any, Any] | None:
    """A message one array does not have is absent, not null."""
    n = min(len(a), len(b))
    if diff is None or len(a) == len(b) or diff[0] != f"messages[{n}]":
        return diff
    return diff[0], a[n] if n < len(a) else _ABSENT, b[n] if n < len(b) else _ABSENT


def _side(run: Run) -> Side:
    parent = run.header.parent
    return Side(str(run.path), run.model, len(run.turns), len(run.calls()), run.usage(),
                run.stop_reason, run.stop_detail,
                {"path": parent.path, "from_index": parent.from_index} if parent is not None else None)


def _fork(a: Run, b: Run) -> str | None:
    for child, parent, name in ((b, a, "B"), (a, b, "A")):
        p = child.header.parent
        if p is not None and p.path and _same_file(p.path, parent):
            return str(Msg(FORK, {"name": name, "other": "A" if name == "B" else "B",
                                  "index": p.from_index}))
    return None


def _same_file(path: str, run: Run) -> bool:
    from pathlib import Path

    try:
        return Path(path).resolve() == run.path.resolve()
    except OSError:
        return False


def _turn_diff(x: TurnView, y: TurnView) -> TurnDiff:
    matcher = difflib.SequenceMatcher(None, [c.name for c in x.calls], [c.name for c in y.calls],
                                      autojunk=False)
    calls: list[CallDiff] = []
    for _op, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = list(zip(x.calls[i1:i2], y.calls[j1:j2]))
        for ca, cb in pairs:
            if ca.name == cb.name:
                calls.append(_call_diff(ca, cb))
            else:
                calls.extend([CallDiff("dropped", ca.name, a=ca), CallDiff("added", cb.name, b=cb)])
        calls.extend(CallDiff("dropped", c.name, a=c) for c in x.calls[i1 + len(pairs):i2])
        calls.extend(CallDiff("added", c.name, b=c) for c in y.calls[j1 + len(pairs):j2])
    answer = (x.answer, y.answer) if (x.answer or "") != (y.answer or "") else None
    error = (x.error, y.error) if x.error != y.error else None
    same = answer is None and error is None and all(c.status == "same" for c in calls)
    return TurnDiff("same" if same else "changed", x, y, calls, answer, error)


def _call_diff(a: Call, b: Call) -> CallDiff:
    args = json_differences(a.parsed_arguments, b.parsed_arguments)
    result = json_differences(_parsed(a.result), _parsed(b.result))
    status = "same" if not args and not result else "changed"
    return CallDiff(status, a.name, a, b, args, result)


def _parsed(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return loads_json(text)
    except ValueError:       # not JSON, or nested too deeply to compare: compared as text
        return text


def json_differences(a: Any, b: Any, path: str = "$", out: list | None = None) -> list:
    """Up to MAX_PATHS (path, a, b) where two parsed JSON values differ."""
    out = [] if out is None else out
    if len(out) >= MAX_PATHS:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                out.append((f"{path}.{key}", a.get(key, _ABSENT), b.get(key, _ABSENT)))
            else:
                json_differences(a[key], b[key], f"{path}.{key}", out)
            if len(out) >= MAX_PATHS:
                break
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                out.append((f"{path}[{i}]", a[i] if i < len(a) else _ABSENT,
                            b[i] if i < len(b) else _ABSENT))
                break
            json_differences(a[i], b[i], f"{path}[{i}]", out)
            if len(out) >= MAX_PATHS:
                break
    elif a != b or type(a) is not type(b):
        out.append((path, a, b))
    return out


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _show(value: Any, limit: int = 120) -> str:
    if value is _ABSENT:
        return "(absent)"
    if hasattr(value, "text"):   # arguments that are not JSON
        value = value.text
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _path_dict(p: tuple[str, Any, Any]) -> dict:
    def plain(v: Any) -> Any:
        if v is _ABSENT:
            return None
        return v.text if hasattr(v, "text") else v
    return {"path": p[0], "a": plain(p[1]), "b": plain(p[2]), "absent_in_a": p[1] is _ABSENT,
            "absent_in_b": p[2] is _ABSENT}


def _call_dict(c: Call | None) -> dict | None:
    if c is None:
        return None
    return {"turn": c.turn, "id": c.id, "name": c.name, "arguments": c.arguments,
            "result": c.result, "ok": c.ok, "error_type": c.error_type}


def _describe(diff: tuple[str, Any, Any]) -> str:
    path, a, b = diff
    return str(Msg(FIRST_MESSAGE, {"path": path, "a": _show_value(a), "b": _show_value(b)}))


def _show_value(value: Any) -> str:
    if repr(value) == "(absent)":
        return "(absent)"
    return _show(value, 200)


def _divergence(t: TurnDiff) -> dict:
    turn = t.a.turn if t.a else None
    b_turn = t.b.turn if t.b else None
    if t.status == "added":
        what = str(Msg(EXTRA_TURN, {"turn": b_turn, "calls": ", ".join(t.b.signature)}))  # type: ignore[union-attr]
    elif t.status == "dropped":
        what = str(Msg(MISSING_TURN, {"turn": turn, "calls": ", ".join(t.a.signature)}))  # type: ignore[union-attr]
    else:
        what = _first_change(t)
    return {"a_turn": turn, "b_turn": b_turn, "status": t.status, "what": what}


def _first_change(t: TurnDiff) -> str:
    turns = _turns(t)
    for c in t.calls:
        if c.status == "added":
            return str(Msg(ALSO_CALLS, {"turns": turns, "name": c.name}))
        if c.status == "dropped":
            return str(Msg(NOT_CALLS, {"turns": turns, "name": c.name}))
        if c.arguments:
            path, a, b = c.arguments[0]
            return str(Msg(ARGS_DIFFER, {"turns": turns, "name": c.name, "path": path,
                                         "a": _show(a), "b": _show(b)}))
        if c.result:
            path, a, b = c.result[0]
            return str(Msg(RESULT_DIFFERS, {"turns": turns, "name": c.name, "path": path,
                                            "a": _show(a), "b": _show(b)}))
    if t.error is not None:
        return str(Msg(ERROR_DIFFERS, {"turns": turns, "a": _show(t.error[0]),
                                       "b": _show(t.error[1])}))
    if t.answer is not None:
        return str(Msg(ANSWERS_DIFFER, {"turns": turns, "a": _show(t.answer[0]),
                                        "b": _show(t.answer[1])}))
    return str(Msg(TURN_DIFFERS, {"turns": turns}))


def _turns(t: TurnDiff) -> str:
    a = _number(t.a.turn) if t.a else None
    b = _number(t.b.turn) if t.b else None
    return str(a) if a == b else f"{a} (A) / {b} (B)"


def _number(turn: int | None) -> str:
    return "inherited" if turn is None else str(turn)


# -- rendering ---------------------------------------------------------------------------------

def diff_lines(d: RunDiff) -> list[tuple[str, str]]:
    """(class, text) lines in the chosen language: the plain renderer and the HTML page both
    print these."""
    lines: list[tuple[str, str]] = []
    for name, s in (("A", d.a), ("B", d.b)):
        u = s.usage
        est = _(" (estimated)") if u.get("estimated") else ""
        lines.append(("", _("{name}: {path} — {model} · {turns} turn(s) · {calls} tool call(s) · "
                            "{tokens} tokens{estimated} · stop {stop}").format(
            name=name, path=s.path, model=s.model, turns=s.turns, calls=s.tool_calls,
            tokens=u["total_tokens"], estimated=est, stop=_stop(s.stop_reason))))
    if d.fork:
        lines.append(("dim", said(d.fork)))
    if d.same:
        lines.append(("ok", _("same: every turn, call, argument, result and the stop reason match")))
    if d.first:
        lines.append(("bad", _("first divergence: {what}").format(what=said(d.first["what"]))))
    if d.messages:
        lines.append(("dim", "  " + _("messages: {difference}").format(difference=said(d.messages))))
    for t in d.turns:
        lines.extend(_turn_lines(t))
    lines.append(("", _delta_line(d.delta())))
    return lines


def _turn_lines(t: TurnDiff) -> list[tuple[str, str]]:
    if t.status == "added":
        return [("ok", "+ " + _("turn {turn} (B only): {calls}").format(
            turn=_words(_number(t.b.turn)), calls=_words(", ".join(t.b.signature))))]  # type: ignore[union-attr]
    if t.status == "dropped":
        return [("bad", "- " + _("turn {turn} (A only): {calls}").format(
            turn=_words(_number(t.a.turn)), calls=_words(", ".join(t.a.signature))))]  # type: ignore[union-attr]
    head = _("turn {turns}").format(turns=_words(_turns(t)))
    if t.status == "same":
        return [("dim", "= " + _("{turn}: same ({calls})").format(
            turn=head, calls=_words(", ".join(t.a.signature))))]  # type: ignore[union-attr]
    out = [("pending", "~ " + _("{turn}:").format(turn=head))]
    for c in t.calls:
        label = f"{c.name} ({(c.a or c.b).id})" if (c.a or c.b) else str(c.name)  # type: ignore[union-attr]
        if c.status == "added":
            out.append(("ok", f"    + {label} {_args(c.b)}"))
        elif c.status == "dropped":
            out.append(("bad", f"    - {label} {_args(c.a)}"))
        elif c.status == "same":
            out.append(("dim", f"    = {label}"))
        for path, a, b in c.arguments:
            out.append(("pending", "    ~ " + _("{name} arguments {path}: {a} → {b}").format(
                name=c.name, path=path, a=_show(a), b=_show(b))))
        for path, a, b in c.result:
            out.append(("pending", "    ~ " + _("{name} result {path}: {a} → {b}").format(
                name=c.name, path=path, a=_show(a), b=_show(b))))
    if t.error is not None:
        out.append(("pending", "    ~ " + _("model error: {a} → {b}").format(
            a=_show(t.error[0]), b=_show(t.error[1]))))
    if t.answer is not None:
        out.append(("pending", "    ~ " + _("answer: {a} → {b}").format(
            a=_show(t.answer[0]), b=_show(t.answer[1]))))
    return out


def _args(c: Call | None) -> str:
    if c is None:
        return ""
    args = c.parsed_arguments
    return _show(args.text if hasattr(args, "text") else args, 80)


def _delta_line(delta: dict) -> str:
    def signed(n: int) -> str:
        return f"+{n}" if n > 0 else str(n)
    tk = delta["tokens"]
    est = _(" (estimated)") if delta["tokens_estimated"] else ""
    stop = delta["stop_reason"]
    stops = (_("stop {stop} (both)").format(stop=_stop(stop["a"])) if stop["same"] else
             _("stop {a} → {b}").format(a=_stop(stop["a"]), b=_stop(stop["b"])))
    return _("B − A: turns {turns} · tool calls {calls} · tokens {tokens} (prompt {prompt}, "
             "completion {completion}){estimated} · {stops}").format(
        turns=signed(delta["turns"]), calls=signed(delta["tool_calls"]),
        tokens=signed(tk["total_tokens"]), prompt=signed(tk["prompt_tokens"]),
        completion=signed(tk["completion_tokens"]), estimated=est, stops=stops)


def _stop(reason: str | None) -> str:
    """A stop reason as the run view names it, in the chosen language."""
    from agentdbg.render.run import stop_label

    return stop_label(reason) if reason else str(reason)


STYLES = {"ok": "green", "bad": "bold red", "pending": "yellow", "dim": "dim", "": ""}


def render_diff(d: RunDiff) -> Any:
    """The diff as a rich Text (every recorded string through ``safe``)."""
    from rich.text import Text

    out = Text()
    for n, (cls, line) in enumerate(diff_lines(d)):
        out.append(("\n" if n else "") + adapter.safe(line), style=STYLES.get(cls, ""))
    return out
