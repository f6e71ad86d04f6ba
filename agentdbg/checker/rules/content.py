"""Content and legacy rules, and the profile-only rules that look at one message."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agentdbg.checker.context import Ctx, _calls, _cid
from agentdbg.checker.findings import Finding, make
from agentdbg.checker.request import MISSING
from agentdbg.checker.rule import ERROR, declare, rule
from agentdbg.i18n import N_, Msg
from agentdbg.messages import a_or_an

DECLARED = declare(
    __name__,
    rule("null-content", ERROR, "content null where a string is required"),
    rule("content-wrong-type", ERROR, "content is an object/number"),
    rule("function-message-missing-name", ERROR, "legacy role function without name"),
    rule("empty-content", ERROR, "content \"\" (empty text block)", ["anthropic-proxy"]),
    rule("consecutive-same-role", ERROR, "two user or two assistant messages in a row",
         ["deepseek-reasoner-legacy"]),
    rule("reasoning-content-missing", ERROR, "tool-call turn replayed without reasoning_content",
         ["deepseek-thinking", "kimi-thinking"]),
    rule("tool-call-id-format", ERROR, "id format the provider rejects", ["anthropic-proxy", "mistral"]),
)

# -- content / legacy ------------------------------------------------------------------

def check_content(ctx: Ctx) -> Iterator[Finding]:
    empty_on, same_on = ctx.on("empty-content"), ctx.on("consecutive-same-role")
    reasoning_on, id_format_on = ctx.on("reasoning-content-missing"), ctx.on("tool-call-id-format")
    if ctx.profile.signed_calls:
        yield from _signatures(ctx)
    prev_role = None
    for i, m in enumerate(ctx.messages):
        role = m.get("role")
        content = m.get("content", MISSING)
        if type(content) is not str:  # the common case, a string, needs no type checks
            yield from _null_or_type(ctx, i, m, role)
        elif empty_on and content == "":
            yield make("empty-content", i, Msg("content \"\" becomes an empty text block behind an "
                                               "Anthropic proxy; omit it or use null on tool-call "
                                               "turns"),
                       "messages: text content blocks must be non-empty")
        if role == "function" and not m.get("name"):
            yield make("function-message-missing-name", i, Msg(
                       "a legacy role 'function' message needs the function's name (better: "
                       "migrate to role 'tool' + tool_call_id)"),
                       "Missing parameter 'name': messages with role 'function' must have a "
                       f"'name'. (param: messages.[{i}].name)")
        if same_on and role in ("user", "assistant") and role == prev_role:
            yield make("consecutive-same-role", i, Msg(
                       "two {role} messages in a row ([{before}] and [{i}]); merge them or "
                       "interleave the roles", {"role": role, "before": i - 1, "i": i}),
                       f"deepseek-reasoner does not support successive user or assistant messages "
                       f"(messages[{i - 1}] and messages[{i}] in your input). You should "
                       "interleave the user/assistant messages in the message sequence.")
        if reasoning_on and _calls(m) and _reasoning_missing(ctx, m.get("reasoning_content")):
            yield _reasoning(ctx, i)
        if id_format_on:
            yield from _id_format(ctx, i, m)
        prev_role = role


def _null_or_type(ctx: Ctx, i: int, m: dict, role: Any) -> Iterator[Finding]:
    content = m.get("content", MISSING)
    # content may be null when the reply is carried by calls, or by audio (an audio reply)
    has_calls = bool(_calls(m)) or bool(m.get("function_call")) or bool(m.get("audio"))
    if content is None or content is MISSING:
        local = ctx.profile.null_content_on_tool_turns
        if role != "assistant" or not has_calls or local:
            api = ("invalid message content type: <nil>" if ctx.profile.name == "ollama" else
                   "Expected 'content' to be a string or an array" if ctx.profile.name == "llamacpp"
                   else "Invalid value for 'content': expected a string, got null. "
                        f"(param: messages.[{i}].content)")
            fix = (Msg('use "" on tool-call turns for this server') if role == "assistant" and has_calls
                   else Msg("send a string (\"\" if there is nothing to say)"))
            said = {"role": role, "fix": fix}
            if content is None:
                text = (N_("content is null on an {role} message; {fix}") if a_or_an(role).startswith("an ")
                        else N_("content is null on a {role} message; {fix}"))
            else:
                text = (N_("content is missing on an {role} message; {fix}")
                        if a_or_an(role).startswith("an ") else
                        N_("content is missing on a {role} message; {fix}"))
            yield make("null-content", i, Msg(text, said), api)
    elif not isinstance(content, (str, list)):
        kind = JSON_KINDS.get(type(content), f"a {type(content).__name__}")
        yield make("content-wrong-type", i, Msg("content is {kind}; {fix}",
                                                {"kind": Msg(kind), "fix": _content_fix(role)}),
                   f"Invalid type for 'messages.[{i}].content': expected one of a string or "
                   f"array of objects, but got {kind} instead.")


JSON_KINDS = {dict: N_("an object"), bool: N_("a boolean"), int: N_("an integer"),
              float: N_("a decimal")}


def _content_fix(role: Any) -> Msg:
    """What content must be on a message of ``role``, and how to get there."""
    if role in ("tool", "function"):
        return Msg("a {role} result must be a string: json.dumps it", {"role": role})
    if role == "assistant":
        return Msg("an assistant message's content must be a string or an array of text parts "
                   "(null only on a tool-call turn)")
    if role in ("user", "system", "developer"):
        return Msg("a {role} message's content must be a string or an array of content parts",
                   {"role": role})
    return Msg("content must be a string or an array of content parts")


def _signatures(ctx: Ctx) -> Iterator[Finding]:
    """Gemini behind Chat Completions (PROTOCOL.md, Gemini rule 4): in the current turn (after
    the last user message), each assistant message's first tool call carries the signature
    the model sent with it, as ``extra_content.google.thought_signature``."""
    from agentdbg.checker.formats.gemini import SIGNATURE_TEXT

    start = max((i for i, m in enumerate(ctx.messages) if m.get("role") == "user"), default=0)
    position = 0
    for i in range(start, len(ctx.messages)):
        calls = _calls(ctx.messages[i])
        if not calls:
            continue
        first = calls[0] if isinstance(calls[0], dict) else {}
        extra = first.get("extra_content")
        google = extra.get("google") if isinstance(extra, dict) else None
        if not (isinstance(google, dict) and isinstance(google.get("thought_signature"), str)
                and google["thought_signature"]):
            fn = first.get("function")
            name = fn.get("name") if isinstance(fn, dict) else None
            yield make("thought-signature-missing", i, Msg(
                       "tool_calls[0] ({name}) lost the extra_content.google.thought_signature the "
                       "model sent with it; append the model's message unchanged",
                       {"name": repr(name)}),
                       SIGNATURE_TEXT.format(name=name, position=position + 1), _cid(first))
        position += len(calls)


def _reasoning_missing(ctx: Ctx, value: object) -> bool:
    """PROTOCOL.md rule 8: DeepSeek accepts ``""`` as present; Moonshot rejects it (``" "`` passes)."""
    return not isinstance(value, str) if ctx.profile.empty_reasoning_present else not value


def _reasoning(ctx: Ctx, i: int) -> Finding:
    if ctx.profile.name == "kimi-thinking":
        api = ("thinking is enabled but reasoning_content is missing in assistant tool call "
               f"message at index {i}")
    else:
        api = (f"Missing `reasoning_content` field in the assistant message at message index {i}. "
               "For more information, please refer to "
               "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
    return make("reasoning-content-missing", i, Msg(
                "thinking mode needs this tool-call turn's reasoning_content passed back; keep the "
                "field when you append the response"), api)


def _id_format(ctx: Ctx, i: int, m: dict) -> Iterator[Finding]:
    pattern = ctx.profile.id_pattern or ""
    for j, call in enumerate(_calls(m)):
        cid = _cid(call)
        if cid and not re.match(pattern, cid):
            api = (f"Tool call id was {cid} but must be a-z, A-Z, 0-9, with a length of 9."
                   if ctx.profile.name == "mistral" else
                   f"messages.{i}.content.{j}.tool_use.id: String should match pattern "
                   "'^[a-zA-Z0-9_-]+$'")
            yield make("tool-call-id-format", i, Msg(
                       "id {id} is not {pattern} as {server} requires; rewrite the ids consistently "
                       "on both the call and its result",
                       {"id": repr(cid), "pattern": ctx.profile.id_pattern_text,
                        "server": ctx.profile.name}), api, cid)
