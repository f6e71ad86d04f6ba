"""Rules only a sequence of requests shows (the proxy sees the app's loop request by request).

Each keeps its own rule id; the single-request rules keep precedence, so one defect
is one finding:

* ``response-not-appended`` — the model answered with tool calls, and the app's next
  request goes on without that reply (nothing in its place; a tool result there is
  already ``orphan-tool-message``);
* ``results-not-sent`` — the reply was kept without its calls and nothing after it
  carries their results: the model's request vanished (a reply kept *with* its calls
  and no results is already ``missing-tool-response``; calls and results written back
  as text, as smolagents does, are a valid history);
* ``history-rewritten`` — an earlier message changed between requests (compared as the
  API reads it: arguments as JSON, fields client libraries add ignored), or work the model
  has not answered on yet was removed; each edit is said as what it is (``edits``), and an
  edit that costs the model nothing it still works on (past turns trimmed, a ``name``
  added) is a note, not a finding;
* ``repeated-call`` — the model keeps asking for the same call with the same arguments
  and the app keeps executing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentdbg.checker.findings import ERROR, Finding, make
from agentdbg.checker.rule import WARNING, declare, rule
from agentdbg.checker.rules.edits import Edit, history_edits, step_edits
from agentdbg.i18n import Msg
from agentdbg.messages import call_fingerprint, call_name, tool_calls_of
from agentdbg.transcript.compare import common_prefix

# the last one is a run's own outcome: the view's stop line judges it (render/run.py)
DECLARED = declare(
    __name__,
    rule("response-not-appended", WARNING, "the next request goes on without the model's tool-call "
         "reply", scope="conversation"),
    rule("results-not-sent", WARNING, "the reply was kept without its calls and no results follow",
         scope="conversation"),
    rule("history-rewritten", WARNING, "an earlier message changed between requests",
         scope="conversation"),
    rule("repeated-call", WARNING, "the same call asked for and executed again and again",
         scope="conversation"),
    rule("empty-final-answer", WARNING, "the run completed with an answer that has no text",
         scope="run"),
)

REPEAT_LIMIT = 3


@dataclass
class ConversationRules:
    """The cross-request state of one conversation."""

    requests: int = 0
    last_messages: list = field(default_factory=list)
    last_response: dict | None = None
    repeats: tuple[str, int] = ("", 0)     # (fingerprint, how many times in a row)
    edits: list[Edit] = field(default_factory=list)   # the last request's history edits
    text_protocol: bool = False            # steps written as text: each request a new prompt
    #: a handoff: the previous agent's last request and reply, which this conversation's
    #: first request goes on from under its own instructions
    inherited: tuple[list, dict | None] | None = None

    def check(self, messages: list) -> list[Finding]:
        """The cross-request findings for ``messages``, the app's next request (its history
        edits, warnings and notes alike, are left in ``edits``)."""
        self.edits = []
        if self.requests:
            prev, answer = self.last_messages, self.last_response
        elif self.inherited is not None:   # new instructions are the handoff, not an edit
            prev, answer = _instructions_from(self.inherited[0], messages), self.inherited[1]
        else:
            return []
        out: list[Finding] = []
        p = common_prefix(prev, messages)
        if self.text_protocol:   # each step a new prompt: only a step it no longer shows is an edit
            self.edits = step_edits(prev, messages)
        elif p < len(prev):
            self.edits = history_edits(prev, messages, in_progress=bool(tool_calls_of(answer)))
        if self.edits:
            out.extend(make("history-rewritten", e.at, Msg("{edit}: {consequence}", {
                "edit": e.shown if e.shown is not None else e.text, "consequence": _consequence(e)}))
                       for e in self.edits if e.lost)
        if answer is None or p < len(prev) or len(messages) <= len(prev):
            return out  # no reply to follow, history rewritten, or a plain retry
        calls = tool_calls_of(answer)
        if not calls:
            return out
        n = len(prev)
        reply = messages[n] if isinstance(messages[n], dict) else {}
        first = calls[0].get("id") if isinstance(calls[0], dict) else None
        if reply.get("role") not in ("assistant", "tool"):
            out.append(make("response-not-appended", n, Msg(
                "the model answered with tool calls and this request goes on without that reply; "
                "append the assistant message (with its tool_calls) and then one result per call"),
                None, first))
        elif reply.get("role") == "assistant" and not tool_calls_of(reply) and n + 1 == len(messages):
            out.append(make("results-not-sent", n + 1, Msg(
                "the model asked for {k} call(s) and this request keeps its reply without them and "
                "carries no results; keep the tool_calls and append one tool message per call",
                {"k": len(calls)}), None, first))
        # ids are data of any JSON type: only a string id pairs a result with its call
        results = {m.get("tool_call_id") for m in messages[n:] if isinstance(m, dict)
                   and m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)}
        executed = [c for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)
                    and c["id"] in results]
        if executed:
            out.extend(self._repeats(executed, n))
        return out

    def saw_response(self, messages: list, reply: dict | None) -> None:
        """Remember the request and the model's reply (None: the request failed)."""
        self.requests += 1
        self.last_messages = list(messages)
        self.last_response = reply

    def _repeats(self, calls: list, index: int) -> list[Finding]:
        out = []
        for c in calls:
            fn = c.get("function") if isinstance(c.get("function"), dict) else {}
            fp = call_fingerprint(call_name(c) or "", str(fn.get("arguments")))
            count = self.repeats[1] + 1 if fp == self.repeats[0] else 1
            self.repeats = (fp, count)
            if count >= REPEAT_LIMIT:
                out.append(make("repeated-call", index, Msg(
                    "{name} with the same arguments was asked for and executed {count} times in a "
                    "row; stop the loop (max turns, a repeat guard) or change what the tool "
                    "returns", {"name": call_name(c), "count": count}), None, c.get("id")))
        return out


def _instructions_from(prev: list, now: list) -> list:
    """``prev`` with each system/developer message replaced by the one ``now`` has there."""
    def instructions(m: object) -> bool:
        return isinstance(m, dict) and m.get("role") in ("system", "developer")
    return [now[k] if instructions(m) and k < len(now) and instructions(now[k]) else m
            for k, m in enumerate(prev)]


def _consequence(edit: Edit) -> Msg:
    if edit.kind == "removed":
        return Msg("the model loses work it has not answered on yet; keep the calls and results "
                   "of the turn in progress (trim only past turns)")
    return Msg("the model is told it said or saw what it did not; rewriting history between "
               "calls can cut a call from its result and breaks prompt caching")


def one_per_defect(across: list[Finding], single: list[Finding]) -> list[Finding]:
    """The cross-request findings that say something the request's own errors do not: a
    ``history-rewritten`` at a message the request's own checks already reject (a trim that
    left an orphan result) is the same defect, said once (by the error)."""
    rejected = {f.index for f in single if f.severity == ERROR and f.index is not None}
    return [f for f in across if not (f.rule == "history-rewritten" and f.index in rejected)]
