"""The offline model: a deterministic planner over the tool schemas. Not an LLM.

It calls a read-only tool when every required parameter can be filled: from the
user's question (a value fitting the parameter's ``pattern``, ``enum``, ``const``,
``examples`` or ``format``, also as its description says them in words: "e.g.
'America/New_York'", "(HH:MM)"; a word shaped like the examples, ``Asia/Tokyo``; the
IANA time zone of a place it names when the examples are zones; a number next to the
parameter's words, "2 passengers"; a boolean the question states; quoted or Title Case
text for a query or title), or from a field of an earlier result, also inside a list
when the question singles out one element (``results[0].isbn``). Free-form parameters
only: a closed ``enum`` choice is the user's to make. Parameters that share values
("from PEK to SHA", "09:30 Paris time in New York") get distinct values by the words
around them, from one clause of the question; a value that a call using more of the
question's values takes is not looked up again on its own. A tool with side effects is
called only when the question asks for its action (never "reserve" for "is it available?").

Independent calls go out together; a call already made for this question is never
repeated, except that a retryable error is retried once (a side-effecting call only
with an idempotency key). ``tool_choice`` and ``parallel_tool_calls`` are honoured;
call ids never repeat an id of the history. When nothing more can be called it
answers from the results and says plainly which tool and parameter it could not fill; a
request that asks for a JSON answer gets a value of its schema (``offline_json``).

Each reply carries a short ``note`` explaining the choice. The pieces live in
``offline_*`` modules: history, schema, prose, values, phrases, zones, fill, intent, plan,
report (results in sentences), answer, json, patterns. The answer is in the question's language;
the notes in the chosen one (``--lang``).
"""

from __future__ import annotations

from agentdbg.i18n import N_, Join, Msg
from agentdbg.providers.base import ModelReply, ModelRequest, estimated_usage, tool_call
from agentdbg.providers.offline_answer import answer
from agentdbg.providers.offline_history import Conversation
from agentdbg.providers.offline_json import json_answer
from agentdbg.providers.offline_plan import MAX_CALLS_PER_TURN, Planner, read_choice
from agentdbg.providers.offline_schema import read_tools

__all__ = ["MAX_CALLS_PER_TURN", "OfflineModel"]


class OfflineModel:
    name = "offline"

    def complete(self, request: ModelRequest) -> ModelReply:
        conv = Conversation(request.messages)
        declared: frozenset[str] = frozenset(getattr(request, "side_effect_tools", None) or ())
        tools = read_tools(request.tools, declared)
        choice = read_choice(request.tool_choice)
        plan = Planner(tools, conv, choice).run()
        calls = plan.calls
        if request.parallel_tool_calls is False and len(calls) > 1:
            calls = calls[:1]
            plan.notes.append(Msg("parallel_tool_calls is false: one call now, the rest later"))
        if calls:
            ids = conv.new_ids(len(calls))
            message = {"role": "assistant", "content": None,
                       "tool_calls": [tool_call(i, c.name, c.arguments) for i, c in zip(ids, calls)]}
            finish = "tool_calls"
        else:
            no_tools = not tools or choice.mode == "none"
            text = answer(conv, plan, no_tools, tools)
            plan.notes.append(Msg("nothing left to call: answering from {n} tool result(s)",
                                  {"n": len(conv.results)}))
            if request.answer_schema is not None:   # asked for JSON: a value of its schema
                text = json_answer(request.answer_schema, text)
                plan.notes.append(Msg("the request asks for JSON: answering with a value of its "
                                      "schema"))
            message = {"role": "assistant", "content": text}
            finish = "stop"
        return ModelReply(message=message, usage=estimated_usage(request, message),
                          finish_reason=finish,
                          note=Join(tuple(plan.notes), N_("; ")).tr())   # "；" in Chinese
