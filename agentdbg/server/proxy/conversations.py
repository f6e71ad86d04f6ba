"""Group proxied requests into conversations and find what only a sequence shows.

A request belongs to the conversation whose previous request shares the longest
prefix with it, at least up to the first user message. Cross-request rules,
each with its own rule id (the single-request checker cannot see them):

* ``response-not-appended`` — the next request lacks the assistant message the
  model just returned (the seeds' first pitfall);
* ``results-not-sent`` — the model asked for tool calls and the next request
  carries no results for them;
* ``history-rewritten`` — an earlier message changed between requests;
* ``repeated-call`` — the model keeps asking for the same call with the same
  arguments and the app keeps executing it.

Each conversation is written as a transcript (same format as ``run``), with the
app's tool results recorded as tool events, so ``agentdbg replay`` can play it.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentdbg.checker import Finding
from agentdbg.messages import call_fingerprint, call_name, is_error_result, tool_calls_of
from agentdbg.transcript import Redactor, TranscriptWriter, tools_hash

REPEAT_LIMIT = 3
CROSS_RULES = {
    "response-not-appended": "error",
    "results-not-sent": "error",
    "history-rewritten": "warning",
    "repeated-call": "warning",
}


def cross(rule: str, index: int | None, message: str, tool_call_id: str | None = None) -> Finding:
    return Finding(rule=rule, severity=CROSS_RULES[rule], index=index, message=message,
                   api_error=None, tool_call_id=tool_call_id)


def _first_user(messages: list) -> int:
    return next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), 0)


def _common_prefix(a: list, b: list) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Conversation:
    number: int
    writer: TranscriptWriter | None = None
    requests: int = 0
    last_messages: list = field(default_factory=list)
    last_response: dict | None = None
    repeats: tuple[str, int] = ("", 0)     # (fingerprint, how many times in a row)

    def rules(self, messages: list) -> list[Finding]:
        """The cross-request findings for ``messages``, the app's next request."""
        if not self.requests:
            return []
        prev, answer = self.last_messages, self.last_response
        out: list[Finding] = []
        p = _common_prefix(prev, messages)
        if p < len(prev):
            out.append(cross("history-rewritten", p,
                             f"message {p} differs from what this conversation's previous request "
                             f"sent ({'removed' if p >= len(messages) else 'changed'}); rewriting "
                             "history between calls breaks pairing and prompt caching"))
        if answer is None or messages == prev:
            return out  # no response to follow up on, or a plain retry of the same request
        n = len(prev)
        appended = n < len(messages) and _same_reply(messages[n], answer)
        calls = tool_calls_of(answer)
        if not appended and p == n:
            out.append(cross("response-not-appended", n,
                             "the app's request lacks the assistant message the model just returned; "
                             "append the response (with its tool_calls) before the tool results",
                             calls[0].get("id") if calls else None))
        if calls:
            ids = {c.get("id") for c in calls}
            results = [m for m in messages[n:] if isinstance(m, dict) and m.get("role") == "tool"]
            sent = [m for m in results if m.get("tool_call_id") in ids]
            if not results:  # mislabelled results are the checker's tool-call-id-mismatch
                out.append(cross("results-not-sent", n + int(appended),
                                 f"the model asked for {len(calls)} call(s) "
                                 f"({', '.join(str(i) for i in ids)}) and this request carries no "
                                 "result for them; run them and append one tool message per call",
                                 calls[0].get("id")))
            elif sent:
                out.extend(self._repeats(calls, n))
        return out

    def _repeats(self, calls: list, index: int) -> list[Finding]:
        out = []
        for c in calls:
            fp = call_fingerprint(call_name(c) or "", str((c.get("function") or {}).get("arguments")))
            count = self.repeats[1] + 1 if fp == self.repeats[0] else 1
            self.repeats = (fp, count)
            if count >= REPEAT_LIMIT:
                out.append(cross("repeated-call", index,
                                 f"{call_name(c)} with the same arguments was asked for and executed "
                                 f"{count} times in a row; stop the loop (max turns, a repeat guard) "
                                 "or change what the tool returns", c.get("id")))
        return out


def _same_reply(message: object, answer: dict) -> bool:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    a_ids = [c.get("id") for c in tool_calls_of(answer)]
    m_ids = [c.get("id") for c in tool_calls_of(message)]
    if a_ids or m_ids:
        return a_ids == m_ids
    return (message.get("content") or "") == (answer.get("content") or "")


class Tracker:
    """All conversations seen by one proxy; writes one transcript per conversation."""

    def __init__(self, save_dir: Path | None, upstream: str):
        self.save_dir = save_dir
        self.upstream = upstream
        self.conversations: list[Conversation] = []
        self.redactor = Redactor()
        self._numbers = itertools.count(1)

    def add_secret(self, secret: str) -> None:
        """A key seen in a header: never written, never shown (kept in memory only)."""
        if secret and secret not in self.redactor.secrets and len(secret) >= 4:
            self.redactor.secrets.append(secret)

    def assign(self, messages: list) -> Conversation:
        """The conversation ``messages`` continues, or a new one.

        It continues one when it starts with that conversation's last request, or shares
        at least its opening (up to the first user message) and then goes on (history
        rewritten). A request that is only a prefix of an earlier one (the same question
        asked afresh) starts a new conversation.
        """
        anchor = _first_user(messages)
        best, best_p = None, anchor
        for conv in reversed(self.conversations):
            p = _common_prefix(conv.last_messages, messages)
            continues = p == len(conv.last_messages) or p < len(messages)
            if p > best_p and continues:
                best, best_p = conv, p
        if best is None:
            best = Conversation(next(self._numbers))
            self.conversations.append(best)
        return best

    def record_request(self, conv: Conversation, body: dict, findings: list[Finding]) -> None:
        messages = body.get("messages") or []
        if conv.writer is None:
            conv.writer = self._open(conv, body)
        elif conv.last_response is not None:
            self._tool_events(conv, messages)
        params = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        conv.writer("request", {"turn": conv.requests + 1, "messages": messages, "params": params,
                                "findings": [f.to_dict() for f in findings]})

    def record_response(self, conv: Conversation, messages: list, reply: dict | None, *,
                        usage: dict | None, finish: str | None, latency_ms: float,
                        error: str | None = None, status: int | None = None,
                        stream_shape: list[str] | None = None) -> None:
        conv.requests += 1
        conv.last_messages = list(messages)
        conv.last_response = reply
        if conv.writer is None:
            return
        if reply is None:
            conv.writer("model_error", {"turn": conv.requests, "message": error, "status": status,
                                        "latency_ms": latency_ms})
        else:
            conv.writer("response", {"turn": conv.requests, "message": reply, "usage": usage or {},
                                     "finish_reason": finish, "latency_ms": latency_ms,
                                     "note": "; ".join(stream_shape or []) or None})

    def record_blocked(self, conv: Conversation, body: dict, findings: list[Finding]) -> None:
        if conv.writer is None:
            conv.writer = self._open(conv, body)
        conv.writer("blocked", {"turn": conv.requests + 1,
                                "findings": [f.to_dict() for f in findings]})

    def _tool_events(self, conv: Conversation, messages: list) -> None:
        """The app's tool results, recorded as tool events so replay can play them."""
        calls = {c.get("id"): c for c in tool_calls_of(conv.last_response)}
        for index, m in enumerate(messages):
            if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") in calls:
                c = calls.pop(m["tool_call_id"])
                content = m.get("content") if isinstance(m.get("content"), str) else json.dumps(
                    m.get("content"), ensure_ascii=False)
                conv.writer("tool", {"turn": conv.requests, "index": index,
                                     "tool_call_id": m["tool_call_id"], "name": call_name(c),
                                     "arguments": (c.get("function") or {}).get("arguments"),
                                     "content": content, "ok": not is_error_result(content),
                                     "error_type": None, "detail": None, "duration_ms": None,
                                     "injected": False, "stubbed": False, "note": "run by the app"})

    def _open(self, conv: Conversation, body: dict) -> TranscriptWriter:
        from agentdbg.transcript import runs_dir

        messages = body.get("messages") or []
        folder = self.save_dir or runs_dir()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = Path(folder) / f"proxy-{stamp}-conversation-{conv.number}.jsonl"
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        question = next((m.get("content") for m in messages
                         if isinstance(m, dict) and m.get("role") == "user"), None)
        options = {"model": body.get("model"), "max_turns": 100_000, "max_tool_calls": 1_000_000,
                   "repeat_limit": 100_000, "send_anyway": True}
        for key in ("tool_choice", "parallel_tool_calls", "temperature"):
            if key in body:
                options[key] = body[key]
        header = {"model": body.get("model"), "provider": "proxy", "base_url": self.upstream,
                  "question": question if isinstance(question, str) else None, "tools": tools,
                  "tools_hash": tools_hash(tools), "tools_file": None, "options": options,
                  "initial_messages": list(messages), "parent": None,
                  "conversation": conv.number}
        return TranscriptWriter(path, header, self.redactor)

    def close(self) -> list[Path]:
        paths = []
        for conv in self.conversations:
            if conv.writer is None:
                continue
            final = conv.last_messages + ([conv.last_response] if conv.last_response else [])
            done = conv.last_response is not None and not tool_calls_of(conv.last_response)
            conv.writer("stop", {"reason": "completed" if done else "cancelled",
                                 "detail": "the model answered without tool calls" if done else
                                 "the proxy stopped while the app's loop was still running",
                                 "messages": final, "usage": {}})
            conv.writer.close()
            paths.append(conv.writer.path)
        return paths
