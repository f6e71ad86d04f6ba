"""--explain: one sentence, before each phase, on what app and model do in protocol terms."""

from __future__ import annotations

from agentdbg.engine.phases import Phase
from agentdbg.messages import call_name

TEXT = {
    "en": {
        "first": "The app sends the messages ({n}) and the {t} tool definitions to the model and "
                 "asks what to do next; the model answers with text or with tool_calls.",
        "again": "The app sends the whole history back ({n} messages, including every tool result) "
                 "so the model can read the results and decide: call more tools or answer.",
        "tools": "The model asked for {k} call(s) ({names}). The app has appended that assistant "
                 "message first; now it validates and runs each call and answers each with a "
                 "role \"tool\" message carrying its own tool_call_id.",
        "parallel": " Read-only calls run at the same time; results may finish in any order, the "
                    "ids keep them paired.",
        "approval": " {names} has side effects: the app must get approval before running it.",
        "done": "The model answered without tool_calls, so the loop ends here.",
        "stopped": "The loop was stopped ({reason}); a run stopped by a limit is not an answer.",
    },
    "zh": {
        "first": "应用把 messages（{n} 条）和 {t} 个工具定义发给模型，询问下一步；"
                 "模型会返回文本或 tool_calls。",
        "again": "应用把完整历史（{n} 条消息，包括每个工具结果）再发给模型，"
                 "让它读取结果并决定：继续调用工具，还是给出回答。",
        "tools": "模型请求了 {k} 个调用（{names}）。应用已先追加这条 assistant 消息；现在逐个校验并执行，"
                 "并为每个调用追加一条带有相同 tool_call_id 的 role \"tool\" 消息。",
        "parallel": "只读调用会并行执行；结果完成的顺序可能不同，靠 id 对应。",
        "approval": "{names} 有副作用：执行前必须先获得人工批准。",
        "done": "模型的回复里没有 tool_calls，循环到此结束。",
        "stopped": "循环被终止（{reason}）；因限制而终止的运行不是答案。",
    },
}


def explain(session, lang: str = "en") -> str:
    t = TEXT.get(lang, TEXT["en"])
    if session.done:
        if session.stop_reason.value == "completed":
            return t["done"]
        return t["stopped"].format(reason=session.stop_reason.value)
    if session.phase is Phase.TOOLS:
        names = ", ".join(call_name(c) or "?" for c in session.pending)
        text = t["tools"].format(k=len(session.pending), names=names)
        if len(session.pending) > 1:
            text += t["parallel"]
        needing = [call_name(c) or "?" for c in session.needs_approval()]
        if needing:
            text += t["approval"].format(names=", ".join(needing))
        return text
    key = "first" if not session.turns else "again"
    return t[key].format(n=len(session.messages), t=len(session.toolset.tools))
