"""What the conversation so far tells the offline model.

The question is the latest user message (a string, or a list of text parts). Calls,
results and errors count from that message on: a new question starts a new plan,
while call ids are read from the whole history so a new id never equals an old one
(also ids a framework wrote into message text, as smolagents does).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agentdbg import messages as wire
from agentdbg.checker.pairing import analyze
from agentdbg.i18n import Msg
from agentdbg.messages import tool_calls_of
from agentdbg.providers.offline_schema import Param
from agentdbg.providers.offline_text import content_stems, name_tokens, stem
from agentdbg.providers.offline_values import Value

_OFFLINE_ID = re.compile(r"\bcall_o(\d{1,9})\b")
MAX_DEPTH = 4


@dataclass
class Result:
    name: str
    arguments: str
    value: Any          # parsed JSON, or the raw content
    error: dict | None  # agentdbg's structured error, when the call failed


def fingerprint(name: str, arguments: str) -> str:
    """``call_fingerprint``, also for arguments nested too deeply to parse (compared as text)."""
    try:
        return wire.call_fingerprint(name, arguments)
    except RecursionError:
        return f"{name}:{arguments}"


def json_object(text: Any) -> dict | None:
    try:
        return wire.parse_json_object(text)
    except RecursionError:
        return None


def _error_of(content: Any) -> dict | None:
    """agentdbg's structured error object, when the content is one."""
    obj = json_object(content) if isinstance(content, str) else None
    return obj if obj is not None and wire.is_error_result(obj) else None


#: blocks a client puts into the user's message that are not the user's words: Claude Code's
#: <system-reminder>, Cline's <environment_details>, Codex's <environment_context> and
#: <user_instructions>, slash-command echoes, IDE selections
_INJECTED = re.compile(
    r"<(system[-_]reminder|environment[-_a-z]{0,30}|env|user_instructions|[a-z_-]{0,30}context|"
    r"ide_[a-z_]{1,30}|local-command-[a-z]{1,20}|command-(?:name|message|args)|system|instructions)"
    r"(?=[\s>/])[^<>]{0,200}>", re.I)
MAX_TEXT = 200_000
MAX_TAGS = 16           # kinds of block looked for in one message (each costs one scan)


def question_text(content: Any) -> str | None:
    """The user's own words in a user message: its text without the blocks a client injects
    (None when nothing else is left: a message that only carries reminders asks nothing)."""
    text = text_of(content)
    if text is None:
        return None
    if "<" in text:
        text = re.sub(r"</?task>", " ", _without_injected(text[:MAX_TEXT]))
    text = text.strip()
    return text or None


def _without_injected(text: str) -> str:
    """``text`` less each injected block, from its opening tag to its closing tag (in linear
    time: the closing tags of each kind are found once)."""
    import bisect

    closes: dict[str, list[tuple[int, int]]] = {}
    out, pos = [], 0
    for m in _INJECTED.finditer(text):
        tag = m.group(1).lower()
        if m.start() < pos or (tag not in closes and len(closes) >= MAX_TAGS):
            continue
        if tag not in closes:
            closes[tag] = [(c.start(), c.end()) for c in
                           re.finditer(rf"</{re.escape(tag)}\s*>", text, re.I)]
        found = closes[tag]
        i = bisect.bisect_left(found, (m.end(), 0))
        if i == len(found):
            continue
        out.append(text[pos:m.start()])
        pos = found[i][1]
    out.append(text[pos:])
    return "".join(out)


def text_of(content: Any) -> str | None:
    """A user message's text: the string, or its text parts joined (images are skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p["text"] for p in content if isinstance(p, dict) and
                 p.get("type") in ("text", "input_text") and isinstance(p.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


class Conversation:
    def __init__(self, messages: Any):
        self.question = ""
        self.made: dict[str, int] = {}                 # fingerprint -> times called (this question)
        self.results: list[Result] = []                # this question's results, in order
        self.block_errors: list[Result] = []           # failures in the latest block of results
        self.call_count = 0                            # tool calls in the whole history
        self.used_ids: set[str] = set()
        self._highest = 0
        history = messages if isinstance(messages, list) else []
        # which result answers which call: the checker's one pairing analysis decides
        self._pairing = analyze(history)
        self._messages = history
        for i, m in enumerate(history):
            if isinstance(m, dict):
                self._read(i, m)

    def _read(self, index: int, m: dict) -> None:
        role = m.get("role")
        self._note_ids(m)
        if role == "user":
            text = question_text(m.get("content"))
            if text is not None:
                self.question, self.made, self.results, self.block_errors = text, {}, [], []
        if role == "assistant":
            self.block_errors = []
        for c in tool_calls_of(m):
            fn = c.get("function") if isinstance(c, dict) else None
            fn = fn if isinstance(fn, dict) else {}
            name, args = fn.get("name"), fn.get("arguments")
            self.call_count += 1
            if isinstance(name, str) and isinstance(args, str):
                fp = fingerprint(name, args)
                self.made[fp] = self.made.get(fp, 0) + 1
        answered = self._pairing.call_of.get((index,)) if role == "tool" else None
        if answered is not None:
            asst, pos = answered
            fn = self._messages[asst]["tool_calls"][pos].get("function")
            fn = fn if isinstance(fn, dict) else {}
            name, args = fn.get("name"), fn.get("arguments")
            if isinstance(name, str) and isinstance(args, str):
                self._result(name, args, m.get("content"))

    def _result(self, name: str, args: str, content: Any) -> None:
        error = _error_of(content)
        if error is not None:
            result = Result(name, args, error, error["error"])
            self.block_errors.append(result)
        else:
            result = Result(name, args, _parse(text_of(content) if isinstance(content, list) else content),
                            None)
        self.results.append(result)

    def _note_ids(self, m: dict) -> None:
        ids = [c["id"] for c in tool_calls_of(m) if isinstance(c, dict) and isinstance(c.get("id"), str)]
        if isinstance(m.get("tool_call_id"), str):
            ids.append(m["tool_call_id"])
        self.used_ids.update(ids)
        text = text_of(m.get("content")) or ""
        for found in _OFFLINE_ID.findall(" ".join(ids) + " " + text[:100_000]):
            self._highest = max(self._highest, int(found))

    # -- what the planner asks -----------------------------------------------------
    def new_ids(self, n: int) -> list[str]:
        """``n`` ids never used in this history; the same history always gets the same ids."""
        out: list[str] = []
        k = max(self.call_count, self._highest) + 1
        while len(out) < n:
            cid = f"call_o{k}"
            if cid not in self.used_ids:
                out.append(cid)
            k += 1
        return out

    def attempted(self, tool: str) -> bool:
        return any(r.name == tool for r in self.results)

    def retryable_once(self) -> list[Result]:
        """Failures of the latest block marked retryable, made only once."""
        return [r for r in self.block_errors if r.error and r.error.get("retryable")
                and self.made.get(fingerprint(r.name, r.arguments), 0) == 1]

    def lookup(self, param: Param, question: str) -> tuple[Value | None, Any]:
        """The latest result field for ``param`` (a free-form parameter), and, when a list of
        results left the choice open, a sentence saying so."""
        ambiguous = ""
        for r in reversed(self.results):
            if r.error is not None:
                continue
            found, why = _find(r.value, param, question, r.name, 0, "")
            if found is not None:
                return found, ""
            ambiguous = ambiguous or why
        return None, ambiguous


def _parse(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return content


def _norm(name: str) -> str:
    return "".join(name_tokens(name))


def key_matches(param: str, key: Any, producer: str) -> bool:
    """``isbn``/``ISBN``, ``flightNo``/``flight_no``, and ``event_id`` <- ``id`` of a result
    from a tool about events (``list_events``)."""
    if not isinstance(key, str):
        return False
    p, k = _norm(param), _norm(key)
    if p == k:
        return True
    if k == "id" and p.endswith("id") and len(p) > 2:
        return stem(p[:-2]) in {stem(t) for t in name_tokens(producer)}
    return False


def _find(value: Any, param: Param, question: str, producer: str, depth: int,
          path: str) -> tuple[Value | None, Any]:
    if depth > MAX_DEPTH:
        return None, ""
    if isinstance(value, dict):
        for key, v in value.items():
            if key_matches(param.name, key, producer) and _scalar(v) and _fits(v, param):
                field = repr(path + str(key))
                why = Msg("field {field} of an earlier tool result ({tool})",
                          {"field": field, "tool": producer}) if path else \
                    Msg("field {field} of an earlier tool result", {"field": field})
                return Value(v, why), ""
        ambiguous = ""
        for key, v in value.items():
            if isinstance(v, (dict, list)):
                found, why = _find(v, param, question, producer, depth + 1, f"{path}{key}.")
                if found is not None:
                    return found, ""
                ambiguous = ambiguous or why
        return None, ambiguous
    if isinstance(value, list) and value:
        index = _chosen(value, question)
        if index is None:
            if not any(_find(v, param, question, producer, depth + 1, "")[0] is not None
                       for v in value[:20]):
                return None, ""
            return None, Msg("{tool} returned {n} results for {param} and the question does not "
                             "single one out", {"tool": producer, "n": len(value), "param": param.name})
        where = f"{path.rstrip('.')}[{index}]." if path else f"[{index}]."
        return _find(value[index], param, question, producer, depth + 1, where)
    return None, ""


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and v != ""


def _fits(v: Any, param: Param) -> bool:
    from agentdbg.providers.offline_schema import fits

    return fits(v, param.schema, param.root)


def _chosen(items: list, question: str) -> int | None:
    """The one element of a list the question points at: the only one, or the one whose text
    the question mentions most (a unique best). None when the question leaves it open."""
    if len(items) == 1:
        return 0
    q_low, q_stems = question.lower(), content_stems(question)
    scores = []
    for item in items[:50]:
        texts = [v for v in (item.values() if isinstance(item, dict) else [item]) if isinstance(v, str)]
        score = sum(3 if len(t) >= 3 and t.lower() in q_low else len(content_stems(t) & q_stems)
                    for t in texts)
        scores.append(score)
    best = max(scores, default=0)
    return scores.index(best) if best > 0 and scores.count(best) == 1 else None
