"""--explain: before each phase, what just happened and what comes next, in protocol terms.

``narrate(session, last)`` says what the last step or change did (``last``: the engine's
event, or the user's action as the session recorded it) and then what the next phase does;
every sentence comes from the message catalog, so ``--lang zh`` narrates in Chinese.
Protocol words (``tool_calls``, ``tool_call_id``, role names) stay in English in every
language: they are what the student will read in the JSON.
"""

from __future__ import annotations

from typing import Any

from agentdbg.engine.faults import SPOILERS
from agentdbg.engine.phases import Phase, StopReason
from agentdbg.engine.session import RequestBlocked, Session, ToolsExecuted
from agentdbg.i18n import _, pgettext, recorded
from agentdbg.messages import call_name

LIMITS = (StopReason.MAX_TURNS, StopReason.MAX_TOOL_CALLS, StopReason.REPEATED_CALL,
          StopReason.TIMEOUT)


def narrate(session: Session, last: Any = None) -> str:
    """What ``last`` did, then what the next phase does (or why the loop stopped)."""
    said = [text for text in (_what_happened(session, last), _what_next(session, last)) if text]
    return join_sentences(said)


def join_sentences(sentences: list[str]) -> str:
    """Sentences one after another: a space after an English one, none after a Chinese one."""
    out = ""
    for s in sentences:
        out += ("" if not out or out[-1] in "。！？；：）" else " ") + s
    return out


def _what_happened(session: Session, last: Any) -> str:
    if isinstance(last, RequestBlocked):
        return _("Not sent: the checker found that the history breaks a rule the API enforces "
                 "(above), so the app did not send it and the model saw nothing.")
    if isinstance(last, ToolsExecuted):
        return _tool_results(last)
    if isinstance(last, dict) and "action" in last:
        return _action(session, last)
    return ""


def _tool_results(event: ToolsExecuted) -> str:
    failed = [o for o in event.outcomes if not o.ok]
    spoiled = [o for o in event.outcomes if o.injected and o.spoiled]
    injected = [o for o in event.outcomes if o.injected and not o.spoiled]
    said = []
    if spoiled:
        said.append(_("The fault you injected spoiled the result of {names}: the model reads it "
                      "cut short or repeated, not a clean result.").format(
            names=listed(o.name for o in spoiled)))
    if injected:
        said.append(_("The fault you injected answered {names} in place of the tool's own result: "
                      "the model sees only what you injected.").format(
            names=listed(o.name for o in injected)))
    if failed:
        names = listed(f"{o.name} ({o.error_type})" for o in failed)
        said.append(_("{names} failed: the app answers the call with an error result (a role "
                      "\"tool\" message with the same tool_call_id), not a crash, so the model can "
                      "react.").format(names=names))
        if any(o.retryable for o in failed):
            said.append(_("A retryable error: the model may call the same tool again."))
    return join_sentences(said)


def listed(names: Any) -> str:
    """Names as a list in the language ("a, b" / "a、b"), each once, in order."""
    return pgettext("list", ", ").join(dict.fromkeys(names))


def _action(session: Session, entry: dict) -> str:
    kind = entry.get("action")
    if kind == "drop":
        return _("You removed message {index}: the next request carries the history without it, "
                 "and the checker judges that history at once.").format(index=entry.get("index"))
    if kind == "rewind":
        return _("You cut the history after message {index}: the next request is sent from "
                 "there, as if the later messages had never happened.").format(
            index=entry.get("index"))
    if kind == "back":
        return _("Back to the phase before: nothing was re-run; the history is as it was then.")
    if kind == "retry" and entry.get("cut") == 0:    # after a model error: the same request
        return _("The request that got no reply will be sent again exactly as it was; nothing "
                 "was cut. A 400 comes back the same (the history still breaks the rule: a 400 "
                 "is not retryable); a 429 or a 5xx may pass this time.")
    if kind == "retry":
        return _("The last assistant message and its results were removed: the model is asked "
                 "again for that turn, with the same history.")
    if kind == "edit":
        return _("You edited message {index}: the model will read your version as if the app had "
                 "sent it.").format(index=entry.get("index"))
    if kind == "inject" and not entry.get("pending") and entry.get("kind") in SPOILERS:
        return _("Message {index} now holds the tool's own result, spoiled ({fault}): the model "
                 "will read it as if the tool had answered so.").format(
            index=entry.get("index"), fault=entry.get("kind"))
    if kind == "inject" and not entry.get("pending"):
        return _("Message {index} now holds the fault instead of the tool's result: the model "
                 "will read it as if the tool had answered so.").format(index=entry.get("index"))
    if kind == "inject":
        return _("A fault is waiting for call {id}: {effect}.").format(
            id=entry.get("tool_call_id"), effect=_effect(session, entry, _pending_tool(session, entry)))
    if kind == "fail":
        text = _("A fault is waiting for every call of {tool}: {effect}.") if entry.get("sticky") \
            else _("A fault is waiting for the next call of {tool}: {effect}.")
        return text.format(tool=entry.get("tool"), effect=_effect(session, entry, entry.get("tool")))
    return ""


def _pending_tool(session: Session, entry: dict) -> str:
    return next((call_name(c) or "" for c in session.pending
                 if str(c.get("id")) == entry.get("tool_call_id")), "")


def _effect(session: Session, entry: dict, tool: object) -> str:
    """What the recorded fault does to the call it waits for (as 'inject'/'fail' said it)."""
    from agentdbg.engine.faults import Fault, effect

    fault = Fault(str(entry.get("kind") or "custom"), str(entry.get("custom") or ""))
    return effect(fault, session.fault_source(str(tool or ""))).tr()


def _what_next(session: Session, last: Any) -> str:
    if session.done:
        return _stopped(session)
    if session.phase is Phase.TOOLS:
        return _tools(session)
    if isinstance(last, RequestBlocked):
        return _("'next' would be blocked again until the history is fixed (edit/drop/rewind); "
                 "'send' sends it anyway, to see what the API answers.")
    n, t = len(session.messages), len(session.toolset.tools)
    if not any(m.get("role") == "assistant" for m in session.messages if isinstance(m, dict)):
        return _("The app sends the messages ({n}) and the {t} tool definitions to the model and "
                 "asks what to do next; the model answers with text or with tool_calls.").format(
            n=n, t=t)
    return _("The app sends the whole history back ({n} messages, including every tool result) "
             "so the model can read the results and decide: call more tools or answer.").format(n=n)


def _tools(session: Session) -> str:
    names = pgettext("list", ", ").join(call_name(c) or "?" for c in session.pending)
    said = [_("The model asked for {k} call(s) ({names}). The app has appended that assistant "
              "message first; now it validates and runs the calls and answers each with a role "
              "\"tool\" message carrying its own tool_call_id.").format(k=len(session.pending),
                                                                         names=names)]
    if len(session.pending) > 1:
        said.append(_("Read-only calls run at the same time; results may finish in any order, "
                      "the ids keep them paired."))
    needing = [call_name(c) or "?" for c in session.needs_approval()]
    if needing:
        said.append(_("{names} has side effects: the app must get approval before running "
                      "it.").format(names=listed(needing)))
    return join_sentences(said)


def _stopped(session: Session) -> str:
    reason = session.stop_reason
    if reason is StopReason.COMPLETED:
        detail = session.stop_detail.strip()
        if detail and detail != "the model answered without tool calls":   # a proxy's recording
            return _("The recording ends here: {detail}.").format(detail=recorded(detail))
        return _("The model answered without tool_calls, so the loop ends here.")
    if reason is StopReason.MODEL_ERROR:
        return _model_error(session.model_failure)
    if reason is StopReason.INVALID_REQUEST:
        return _("The loop stopped before sending a request that breaks the protocol; nothing "
                 "was sent.")
    if reason is StopReason.CANCELLED:
        return _("The loop was stopped by you; what happened so far is recorded.")
    if reason in LIMITS:
        return _("The loop was stopped by a limit ({reason}); a run stopped by a limit is not an "
                 "answer.").format(reason=reason.value)
    return ""


def _model_error(exc: Any) -> str:
    status = getattr(exc, "status", None)
    if status == 400:
        return _("The API rejected the request (HTTP 400): the history breaks a rule it enforces, "
                 "so no reply came back and nothing was appended. A real app would fail here "
                 "every time it sends this history: fix it ('rewind N', 'drop N', 'edit N') and "
                 "send again.")
    if status in (401, 403):
        return _("The API refused the credentials (HTTP {status}): nothing reached the "
                 "model.").format(status=status)
    if status == 429 or (isinstance(status, int) and status >= 500):
        return _("The API failed on its side (HTTP {status}): a transient error, so an app may "
                 "send the same request again ('retry' does).").format(status=status)
    if isinstance(status, int):
        return _("The API answered HTTP {status}: no reply, nothing appended.").format(
            status=status)
    return _("The request did not reach the model (no connection or a timeout): no reply, "
             "nothing appended; 'retry' sends it again.")
