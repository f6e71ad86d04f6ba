"""Protocol rules for the Gemini API (``generateContent``), per PROTOCOL.md's Gemini section.

``index`` is the position in ``contents`` (None for request-level rules); ``path`` the native
path (``contents[2].parts[0]``, ``tools[0].functionDeclarations[3]``). Pairing is by turn and
position: the content after a model turn with calls holds one ``functionResponse`` per
``functionCall``, in order; ids are accepted, never required. The API's own words are quoted
(rules 1-6); what PROTOCOL.md lists as valid (rule 7) is never flagged.
"""

from __future__ import annotations

import re
from typing import Any

from agentdbg.checker.findings import Finding
from agentdbg.checker.formats.common import (
    FormatCtx,
    parsed_arguments,
    registry,
    schema_mismatch,
)
from agentdbg.checker.rule import ERROR, declare, rule
from agentdbg.i18n import Msg
from agentdbg.wire.codec import get as codec
from agentdbg.wire.common import as_dict, as_list, canonical
from agentdbg.wire.gemini import field
from agentdbg.wire.pairing import Pairing as WirePairing
from agentdbg.wire.pairing import analyze as pair

DECLARED = declare(
    __name__,
    rule("call-turn-misplaced", ERROR, "a model turn with function calls that opens contents or "
         "follows another model turn", scope="gemini"),
    rule("thought-signature-missing", ERROR, "Gemini 3: the first functionCall of a step of the "
         "current turn sent back without its thoughtSignature", scope="gemini"),
)

GEMINI_RULES = registry("call-turn-misplaced", "thought-signature-missing")

#: what this format's checker reports, and how: E error, W warning, P a condition
REPORTS = {
    **dict.fromkeys(("missing-tool-response", "orphan-tool-message", "tool-message-missing-id",
                     "invalid-tool-name", "call-turn-misplaced"), "E"),
    **dict.fromkeys(("unknown-tool", "arguments-schema-mismatch"), "W"),
    "thought-signature-missing": "E on Gemini 3 models (chat: P `gemini`)",
}

COUNT_TEXT = ("Please ensure that the number of function response parts is equal to the number of "
              "function call parts of the function call turn.")
CALL_TURN_TEXT = ("Please ensure that function call turn comes immediately after a user turn or "
                  "after a function response turn.")
RESPONSE_TURN_TEXT = ("Please ensure that function response turn comes immediately after a "
                      "function call turn.")
SIGNATURE_TEXT = ("Function call is missing a thought_signature in functionCall parts. This is "
                  "required for tools to work correctly, and missing thought_signature may lead to "
                  "degraded model performance. Additional data, function call `default_api:{name}` "
                  ", position {position}. Please refer to "
                  "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.")
NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
NAME_TEXT = ("The GenerateContentRequest proto is invalid:\n  * tools[{t}].function_declarations[{d}]."
             "name: [FIELD_INVALID] Invalid function name. Must start with a letter or an "
             "underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), "
             "or dashes (-), with a maximum length of 64.")
SIGNED_MODELS = re.compile(r"(^|/)gemini-3")     # Gemini 3 models validate thought signatures


def check_gemini(body: dict | list, profile: str = "openai", *, model: str | None = None,
                 in_progress: bool = False) -> list[Finding]:
    return analyze_gemini(body, profile, model=model, in_progress=in_progress)[0]


def analyze_gemini(body: Any, profile: str = "openai", *, prior: list | None = None,
                   in_progress: bool = False, model: str | None = None
                   ) -> tuple[list[Finding], WirePairing]:
    """Findings and the pairing they were judged on. ``model``: from the request's URL (else
    the body's own ``model`` field): thought signatures are required of Gemini 3 models."""
    body = {"contents": body} if isinstance(body, list) else as_dict(body)
    contents = [as_dict(c) for c in as_list(field(body, "contents"))]
    ctx = FormatCtx(profile, GEMINI_RULES)
    pairing = pair(codec("gemini"), contents)
    schemas = _declarations(ctx, body)
    for loc, cid in pairing.calls.items():
        if pairing.answer_of.get(loc) is None and schemas is not None:
            _arguments(ctx, loc, as_dict(field(as_list(contents[loc[0]]["parts"])[loc[1]], "functionCall")),
                       schemas, cid)
    _turns(ctx, contents, pairing, in_progress)
    _names(ctx, contents)
    model = model or (body.get("model") if isinstance(body.get("model"), str) else None)
    if model and SIGNED_MODELS.search(model):
        _signatures(ctx, contents)
    return ctx.sorted(), pairing


def _path(loc: tuple) -> str:
    return f"contents[{loc[0]}]" + (f".parts[{loc[1]}]" if len(loc) > 1 else "")


def _calls(content: dict) -> list[int]:
    return [j for j, p in enumerate(as_list(content.get("parts")))
            if isinstance(field(p, "functionCall"), dict)]


def _responses(content: dict) -> list[int]:
    return [j for j, p in enumerate(as_list(content.get("parts")))
            if isinstance(field(p, "functionResponse"), dict)]


def _turns(ctx: FormatCtx, contents: list[dict], p: WirePairing, in_progress: bool) -> None:
    """Rules 1-3: call turns after a user turn, response turns after a call turn, as many
    responses as calls."""
    for i, content in enumerate(contents):
        calls = _calls(content) if content.get("role") == "model" else []
        if calls and (i == 0 or contents[i - 1].get("role") == "model"):
            ctx.add("call-turn-misplaced", i, _path((i,)), Msg(
                    "a model turn with function calls opens contents; it must come right after a "
                    "user turn or a function response turn") if i == 0 else Msg(
                    "a model turn with function calls follows another model turn; it must come "
                    "right after a user turn or a function response turn"),
                    CALL_TURN_TEXT)
        if calls:
            _answered(ctx, contents, p, i, calls, in_progress)
        if content.get("role") != "model" and _responses(content):
            _orphans(ctx, contents, p, i)


def _answered(ctx: FormatCtx, contents: list[dict], p: WirePairing, i: int, calls: list[int],
              in_progress: bool) -> None:
    if i + 1 >= len(contents):
        return   # a request ending on the model's calls: not a verified rejection (PROTOCOL.md)
    open_ = [(i, j) for j in calls if p.answer_of.get((i, j)) is None]
    for loc in open_:
        cid = p.calls[loc]
        name = as_dict(field(contents[i]["parts"][loc[1]], "functionCall")).get("name")
        ctx.add("missing-tool-response", i, _path(loc), Msg(
                "call {name} ({cid}) has no functionResponse in the next content; answer every "
                "call of the turn there, in order (also when the tool failed: send the error as "
                "the response)", {"name": repr(name), "cid": cid}),
                COUNT_TEXT, cid)


def _orphans(ctx: FormatCtx, contents: list[dict], p: WirePairing, i: int) -> None:
    after_calls = i > 0 and contents[i - 1].get("role") == "model" and bool(_calls(contents[i - 1]))
    for j in _responses(contents[i]):
        if p.status.get((i, j)) != "orphan":
            continue
        name = as_dict(field(contents[i]["parts"][j], "functionResponse")).get("name")
        if after_calls:
            ctx.add("orphan-tool-message", i, _path((i, j)), Msg(
                    "this functionResponse ({name}) is one more than the calls of the turn before; "
                    "send one response per call", {"name": repr(name)}),
                    COUNT_TEXT)
        else:
            ctx.add("orphan-tool-message", i, _path((i, j)), Msg(
                    "this functionResponse ({name}) does not follow a model turn with function "
                    "calls; keep the call turn right before its responses, all responses in that "
                    "one content", {"name": repr(name)}),
                    RESPONSE_TURN_TEXT)
        return   # the turn is reported once


def _names(ctx: FormatCtx, contents: list[dict]) -> None:
    """Rule 6: a function response names its function."""
    for i, content in enumerate(contents):
        for j in _responses(content):
            response = as_dict(field(content["parts"][j], "functionResponse"))
            if not isinstance(response.get("name"), str) or not response["name"]:
                ctx.add("tool-message-missing-id", i, _path((i, j)), Msg(
                        "this functionResponse has no name; name the function whose call it "
                        "answers"),
                        f"GenerateContentRequest.contents[{i}].parts[{j}].function_response.name: "
                        "Name cannot be empty.")


def _signatures(ctx: FormatCtx, contents: list[dict]) -> None:
    """Rule 4: in the current turn (from the last user content that is not a function
    response), the first functionCall part of each step carries its thoughtSignature."""
    start = max((i for i, c in enumerate(contents) if c.get("role") != "model"
                 and not _responses(c)), default=0)
    position = 0
    for i in range(start, len(contents)):
        content = contents[i]
        calls = _calls(content) if content.get("role") == "model" else []
        if not calls:
            continue
        first = content["parts"][calls[0]]
        if not field(first, "thoughtSignature"):
            name = as_dict(field(first, "functionCall")).get("name")
            ctx.add("thought-signature-missing", i, _path((i, calls[0])), Msg(
                    "the call {name} lost the thoughtSignature the model sent with it; send the "
                    "model's parts back unchanged", {"name": repr(name)}),
                    SIGNATURE_TEXT.format(name=name, position=position + 1))
        position += len(calls)


def _declarations(ctx: FormatCtx, body: dict) -> dict | None:
    """Rule 5 (names); returns name -> schema of the declared functions (None: no tools)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    out: dict[str, Any] = {}
    for t, tool in enumerate(tools):
        for d, declaration in enumerate(as_list(field(tool, "functionDeclarations"))):
            declaration = as_dict(declaration)
            name = declaration.get("name")
            if not isinstance(name, str) or not NAME_RE.match(name):
                ctx.add("invalid-tool-name", None, f"tools[{t}].functionDeclarations[{d}]",
                        Msg("function name {name} is not a letter or _ then up to 63 of a-z, "
                            "A-Z, 0-9, _ . : -", {"name": repr(name)}), NAME_TEXT.format(t=t, d=d))
            if isinstance(name, str):
                out[name] = field(declaration, "parametersJsonSchema") or declaration.get("parameters")
    return out


def _arguments(ctx: FormatCtx, loc: tuple, call: dict, schemas: dict, cid: Any) -> None:
    """unknown-tool and arguments-schema-mismatch, on calls not answered yet."""
    name, args = call.get("name"), call.get("args", {})
    if not isinstance(name, str):
        return
    if name not in schemas:
        ctx.add("unknown-tool", loc[0], _path(loc), Msg(
                "calls {name}, which is not among the request's function declarations ({tools})",
                {"name": repr(name), "tools": ", ".join(schemas) or Msg("none")}), None, cid)
        return
    if isinstance(args, dict):
        text = canonical(args)
        value, _ = parsed_arguments(text)
        problems = schema_mismatch(schemas, name, text, value) if isinstance(value, dict) else ""
        if problems:
            ctx.add("arguments-schema-mismatch", loc[0], _path(loc), Msg(
                    "args fail the {name} schema: {problems}; validate before executing",
                    {"name": repr(name), "problems": problems}), None, cid)
