"""The offline model's decision for one request: which calls to make now, and why.

Read-only tools are called when every required parameter can be filled; a tool with
side effects only when the question asks for its action (``offline_intent``), and
then the plan works toward that action: it is called as soon as it can be filled,
alone, and once it has run the model answers. ``tool_choice`` (none, required, a
named function, allowed_tools) are honoured. Whatever could not be done is kept in
``Plan.missing`` and ``Plan.held`` so the answer can say which tool and which
parameter, or which action it left alone and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import Msg
from agentdbg.providers.offline_fill import Fill, Missing, QuestionValues, fill
from agentdbg.providers.offline_history import Conversation, fingerprint, json_object
from agentdbg.providers.offline_intent import intent
from agentdbg.providers.offline_labels import Labels
from agentdbg.providers.offline_note import CALL
from agentdbg.providers.offline_report import compose
from agentdbg.providers.offline_schema import Param, ToolDef
from agentdbg.providers.offline_text import has_cjk, language_of, name_tokens, overlap
from agentdbg.providers.offline_values import Value

MAX_CALLS_PER_TURN = 8
_ID_WORDS = frozenset({"id", "ref", "reference", "no", "number", "code", "key", "uuid", "isbn", "sku"})


@dataclass
class Call:
    name: str
    arguments: str
    why: Any


@dataclass
class Held:
    """An action the question mentions that the model did not take, and why."""
    tool: str
    kind: str       # negated | how_to | conditional | failed_side_effect | not_asked
    detail: str = ""


@dataclass
class Plan:
    calls: list[Call] = field(default_factory=list)
    notes: list[Any] = field(default_factory=list)    # i18n.Msg: the note is in the chosen language
    missing: list[Missing] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    problem: Any = ""          # a tool_choice it could not follow, said in the answer too


@dataclass
class Choice:
    mode: str = "auto"                 # auto | none | required
    only: frozenset[str] | None = None  # allowed tool names
    named: str | None = None
    problem: Any = ""


def read_choice(tool_choice: Any) -> Choice:
    if tool_choice in (None, "auto"):
        return Choice()
    if tool_choice in ("none", "required"):
        return Choice(mode=tool_choice)
    if isinstance(tool_choice, dict):
        kind = tool_choice.get("type")
        if kind == "function":
            fn = tool_choice.get("function")
            name = fn.get("name") if isinstance(fn, dict) else None
            if isinstance(name, str):
                return Choice(mode="required", only=frozenset({name}), named=name)
        if kind == "allowed_tools" and isinstance(tool_choice.get("allowed_tools"), dict):
            at = tool_choice["allowed_tools"]
            names = [t["function"]["name"] for t in at.get("tools") or []
                     if isinstance(t, dict) and isinstance(t.get("function"), dict)
                     and isinstance(t["function"].get("name"), str)]
            mode = "required" if at.get("mode") == "required" else "auto"
            return Choice(mode=mode, only=frozenset(names))
        if kind == "custom":
            return Choice(mode="none", problem=Msg("tool_choice names a custom tool; the offline "
                                                   "model calls only function tools"))
    return Choice(problem=Msg("tool_choice {choice} is not one the offline model knows; treated as "
                              "'auto'", {"choice": repr(str(tool_choice)[:60])}))


class Planner:
    def __init__(self, tools: list[ToolDef], conv: Conversation, choice: Choice):
        self.conv, self.choice = conv, choice
        self.question = conv.question
        self.tools = [t for t in tools if choice.only is None or t.name in choice.only]
        self.plan = Plan()
        self.unasked: list[Held] = []     # side-effecting tools it could fill but was not asked for
        self._planned: set[str] = set()
        if choice.named and not self.tools:
            self.plan.problem = Msg("tool_choice names {name}, which is not among the tools",
                                    {"name": repr(choice.named)})
        else:
            self.plan.problem = choice.problem
        if self.plan.problem:
            self.plan.notes.append(self.plan.problem)

    def run(self) -> Plan:
        if self.choice.mode == "none" or not self.tools:
            if self.choice.mode == "none" and not self.choice.problem:
                self.plan.notes.append(Msg("tool_choice is 'none': answering without tools"))
            return self.plan
        self.qv = QuestionValues(self.question, self.tools)
        self.fills = {t.name: fill(t, self.qv, self.conv) for t in self.tools}
        self._retries()
        if self.choice.named:
            self._forced(self.tools[0])
        else:
            self._auto()
        if self.choice.mode == "required" and not self.plan.calls and not self.choice.named:
            self._required_fallback()
        if not self.plan.calls and not self.conv.results and not self.plan.missing:
            self.plan.missing = closest_missing(self.tools, self.fills, self.question)
            self.plan.notes.extend(_missing_note(m) for m in self.plan.missing)
            self.plan.held.extend(self.unasked)  # nothing else to tell: say what it left alone
        self.plan.calls = self.plan.calls[:MAX_CALLS_PER_TURN]
        return self.plan

    # -- pieces ----------------------------------------------------------------
    def _add(self, tool: ToolDef, args: dict, why: Any) -> bool:
        text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        fp = fingerprint(tool.name, text)
        if fp in self.conv.made or fp in self._planned:
            return False
        self._planned.add(fp)
        self.plan.calls.append(Call(tool.name, text, why))
        self.plan.notes.append(Msg(CALL, {"tool": tool.name, "why": why}))
        return True

    def _new(self, f: Fill) -> list[tuple[dict, str]]:
        return [(a, w) for a, w in f.combos if not self._made(f.tool, a)]

    def _retries(self) -> None:
        by_name = {t.name: t for t in self.tools}
        for r in self.conv.retryable_once():
            tool = by_name.get(r.name)
            if tool is None:
                continue
            if tool.side_effects and not _idempotent(r.arguments):
                self.plan.held.append(Held(r.name, "failed_side_effect", str((r.error or {}).get("type"))))
                self.plan.notes.append(Msg("not retrying {tool}: it has side effects and the call may "
                                           "have gone through (no idempotency key)", {"tool": r.name}))
                continue
            fp = fingerprint(r.name, r.arguments)
            self._planned.add(fp)
            self.plan.calls.append(Call(r.name, r.arguments, "retry"))
            self.plan.notes.append(Msg("retrying {tool} once after a retryable error", {"tool": r.name}))

    def _forced(self, tool: ToolDef) -> None:
        f = self.fills[tool.name]
        for args, why in self._new(f):
            self._add(tool, args, Msg("{why}; tool_choice names it", {"why": why}))
        if f.missing:
            self.plan.missing.extend(f.missing)
            self.plan.notes.extend(_missing_note(m) for m in f.missing)
        elif not self.plan.calls:
            self.plan.notes.append(Msg("tool_choice names {tool}, but every call of it the question "
                                       "allows has been made", {"tool": tool.name}))

    def _auto(self) -> None:
        side = [t for t in self.tools if t.side_effects]
        intents = {t.name: intent(t, self.question, side) for t in side}
        asked = []
        for t in side:
            it = intents[t.name]
            if it.asked and it.negated:
                self.plan.held.append(Held(t.name, "negated", it.word))
                self.plan.notes.append(Msg("not calling {tool}: the question says not to {word}",
                                           {"tool": t.name, "word": it.word}))
            elif it.asked and it.how_to:
                self.plan.held.append(Held(t.name, "how_to", it.word))
                self.plan.notes.append(Msg("not calling {tool}: the question asks how to {word}, not "
                                           "to {word} now", {"tool": t.name, "word": it.word}))
            elif it.asked and it.conditional:
                self.plan.held.append(Held(t.name, "conditional", it.word))
                self.plan.notes.append(Msg("not calling {tool}: the question asks to {word} only under "
                                           "a condition, which the offline model does not judge",
                                           {"tool": t.name, "word": it.word}))
            elif it.asked:
                asked.append(t)
            elif self._new(self.fills[t.name]):
                self.unasked.append(Held(t.name, "not_asked", it.verb))
                self.plan.notes.append(Msg("not calling {tool}: it has side effects ({why}) and the "
                                           "question does not ask to {verb}",
                                           {"tool": t.name, "why": t.why_side_effects, "verb": it.verb}))
        pending = [t for t in asked if not self.conv.attempted(t.name)]
        ready = [t for t in pending if self._new(self.fills[t.name])]
        for t in ready:
            for args, why in self._new(self.fills[t.name]):
                self._add(t, args, Msg("{why}; the question asks to {word}",
                                       {"why": why, "word": intents[t.name].word}))
        if not ready and (pending or not asked):
            self._reads(fallback=not asked or any(self._lookable(t) for t in pending))
        if not self.plan.calls and self.conv.results:   # nothing left to look up: write the rest
            for t in pending:
                self._write(t, intents[t.name].word)
        for t in pending:   # an action that ran had every parameter it needed
            self.plan.missing.extend(self.fills[t.name].missing)
        quiet = bool(self.plan.calls or self.conv.results)  # partial fits matter when nothing ran
        for t in self.tools:
            f = self.fills[t.name]
            if not t.side_effects and f.missing and f.from_question > 0 and not quiet:
                self.plan.missing.extend(f.missing)
            elif not t.side_effects and any(m.unfit for m in f.missing) and not self.conv.attempted(t.name):
                self.plan.missing.extend(m for m in f.missing if m.unfit)
            elif not t.side_effects:
                self.plan.notes.extend(Msg("not calling {tool}: {reason}",
                                           {"tool": m.tool, "reason": m.reason})
                                       for m in f.missing if m.ambiguous)
        self.plan.notes.extend(_missing_note(m) for m in self.plan.missing)

    def _write(self, tool: ToolDef, word: str) -> None:
        """An action the question asks for whose only open parameters are text the model can
        write itself from the results (an e-mail's body): written, and the action called."""
        missing = self.fills[tool.name].missing
        params = [tool.param(m.param) for m in missing]
        if not missing or not all(p is not None and writable(p) for p in params):
            return
        text = compose(self.conv.results, language_of(self.question), Labels(self.tools))
        if not text:
            return
        why = Msg("written from the tool results")
        self.fills[tool.name] = fill(tool, self.qv, self.conv,
                                     {m.param: Value(text, why) for m in missing})
        for args, reason in self._new(self.fills[tool.name]):
            self._add(tool, args, Msg("{why}; the question asks to {word}", {"why": reason, "word": word}))

    def _lookable(self, tool: ToolDef) -> bool:
        """A missing parameter of an action that a lookup could supply: an identifier
        (``event_id``, ``booking_ref``, a patterned code), not something only the user knows."""
        for m in self.fills[tool.name].missing:
            p = tool.param(m.param)
            last = (name_tokens(p.name) or [""])[-1] if p is not None else ""
            own_pattern = p is not None and p.schema.get("pattern") and "pattern" not in p.from_prose
            if p is not None and not p.closed and p.type in ("string", "any") and \
                    (own_pattern or last in _ID_WORDS):
                return True
        return False

    def _reads(self, fallback: bool) -> None:
        reads = [t for t in self.tools if not t.side_effects and self._new(self.fills[t.name])
                 and (t.needs or _named(t, self.question))]
        if not reads and fallback and not self.conv.results:
            # nothing else fits a question that asks for no action: a tool whose parameters
            # are all optional, when the question fills one of them
            reads = [t for t in self.tools if not t.side_effects and not t.needs
                     and self.fills[t.name].from_question and self._new(self.fills[t.name])]
        strong = [t for t in reads if not self.fills[t.name].weak]
        weak = [t for t in reads if self.fills[t.name].weak]
        if weak:
            scores = {t.name: overlap(self.question, f"{' '.join(name_tokens(t.name))} {t.description}")
                      for t in weak}
            best = max(scores.values())
            weak = [t for t in weak if scores[t.name] == best and (best > 0 or not strong)]
        chosen = [t for t in reads if t in strong or t in weak]
        for t in chosen:
            f = self.fills[t.name]
            for (args, why), spans in zip(f.combos, f.spans):
                if not self._made(t, args) and not self._taken(t, spans, chosen):
                    self._add(t, args, why)

    def _made(self, tool: ToolDef, args: dict) -> bool:
        return fingerprint(tool.name, json.dumps(args, ensure_ascii=False, separators=(",", ":"))) \
            in self.conv.made

    def _taken(self, tool: ToolDef, spans: frozenset[tuple[int, int]], chosen: list[ToolDef]) -> bool:
        """A call that reuses a value of the question that another call, taking more of the
        question's values, uses: "what is 09:30 Paris time in New York" converts a time; it
        does not also ask the time in Paris and in New York."""
        for other in self.tools:
            f = self.fills[other.name]
            if other is tool or other.side_effects:
                continue
            for (args, _why), theirs in zip(f.combos, f.spans):
                going = other in chosen or self._made(other, args)
                if going and len(theirs) > len(spans) and theirs & spans:
                    if other in chosen:   # said once, in the turn that makes the other call
                        quoted = ", ".join(repr(self.question[a:b]) for a, b in sorted(theirs & spans))
                        self.plan.notes.append(Msg("not calling {tool} with {quoted}: {other} takes it "
                                                   "with more of the question's values",
                                                   {"tool": tool.name, "quoted": quoted,
                                                    "other": other.name}))
                    return True
        return False

    def _required_fallback(self) -> None:
        """tool_choice 'required' and nothing planned: the best-fitting tool that can be filled."""
        def fit(t: ToolDef) -> tuple[int, int]:
            return (self.fills[t.name].from_question,
                    overlap(self.question, f"{' '.join(name_tokens(t.name))} {t.description}"))
        callable_ = [t for t in self.tools if self._new(self.fills[t.name]) and not t.side_effects]
        best_overall = max(self.tools, key=fit)
        if callable_:
            t = max(callable_, key=fit)
            args, why = self._new(self.fills[t.name])[0]
            self._add(t, args, Msg("{why}; tool_choice is 'required' and this is the best-fitting "
                                   "tool that can be filled", {"why": why}))
            if best_overall is not t and self.fills[best_overall.name].missing:
                self.plan.notes.extend(_missing_note(m) for m in self.fills[best_overall.name].missing)
            return
        self.plan.notes.append(Msg("tool_choice is 'required', but no tool can be called: answering instead"))
        if not self.plan.missing and self.fills[best_overall.name].missing:
            self.plan.missing.extend(self.fills[best_overall.name].missing)
            self.plan.notes.extend(_missing_note(m) for m in self.fills[best_overall.name].missing)


def closest_missing(tools: list[ToolDef], fills: dict[str, Fill], question: str, n: int = 3) -> list[Missing]:
    """When no tool fits: the required parameters the most relevant tools lack."""
    scored = [(overlap(question, f"{' '.join(name_tokens(t.name))} {t.description}"), i, t)
              for i, t in enumerate(tools) if fills[t.name].missing and not t.side_effects]
    if not any(s[0] > 0 for s in scored) and has_cjk(question) and \
            not any(has_cjk(f"{t.name} {t.description}") for t in tools):
        # the question's words cannot be compared with the tools' (another script): say what
        # each tool lacked rather than that nothing matched
        return [m for _, _, t in scored[:n] for m in fills[t.name].missing]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:n]
    return [m for _, _, t in scored for m in fills[t.name].missing]


_WRITABLE = frozenset({"body", "content", "message", "text", "html", "description", "note", "notes",
                       "comment", "details"})


def writable(p: Param) -> bool:
    """Free text the model may write itself: an e-mail's body, a note, a message."""
    if p.type not in ("string", "any") or p.closed or "pattern" in p.schema or "format" in p.schema:
        return False
    described = p.description[:200].lower()
    return bool(set(name_tokens(p.name)) & _WRITABLE) or any(w in described for w in ("正文", "内容"))


def _idempotent(arguments: str) -> bool:
    """The call carried an idempotency key, so sending it again cannot do the thing twice."""
    args = json_object(arguments) or {}
    return any("idempotency" in str(k).lower() and v not in (None, "") for k, v in args.items())


def _named(tool: ToolDef, question: str) -> bool:
    low = question.lower()
    return tool.name.lower() in low or " ".join(name_tokens(tool.name)) in low


def _missing_note(m: Missing) -> Msg:
    return Msg("could not call {tool}: required parameter {param} — {reason}",
               {"tool": m.tool, "param": repr(m.param), "reason": m.reason})
