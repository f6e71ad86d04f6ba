"""What tool results say, in sentences: the offline model's answer and the text it writes.

``describe`` turns one result into a sentence about what was asked for, in the question's
language: ``ORD-2026-001: status is shipped, tracking_no is SF123456.`` /
``北京：temperature 为 24，condition 为 晴。`` Field names and values are data and stay as the
tool wrote them; the sentence around them is the catalog's. Everything is bounded: at most
``MAX_FIELDS`` fields, ``MAX_ITEMS`` items of a list, values cut at ``MAX_VALUE`` characters.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentdbg.i18n import N_
from agentdbg.providers.offline_history import Result, json_object
from agentdbg.providers.offline_labels import Labels, say
from agentdbg.providers.offline_schema import ToolDef
from agentdbg.providers.offline_text import has_cjk, name_tokens

MAX_FIELDS = 12
MAX_ITEMS = 3
MAX_VALUE = 80
MAX_SHOWN_ARGS = 2


def subject_of(r: Result) -> str:
    """What the call was about: its arguments' values (``北京``, ``ORD-2026-001``), else the
    tool's name."""
    args = json_object(r.arguments) or {}
    shown = [v if isinstance(v, str) else _short(v, 40) for v in args.values()
             if v not in (None, "", [], {}) and not (isinstance(v, str) and (len(v) > 40 or "\n" in v))]
    return "/".join(shown[:2]) or r.name


def describe(r: Result, lang: str, labels: Labels | None = None) -> str:
    """One result as a sentence in ``lang``: ``订单 ORD-2026-001 的状态是 shipped，物流单号是
    SF123456。`` / ``For order ORD-2026-001, the status is shipped and …``; an action's result
    says it was done (``已发送一封邮件（收件人邮箱 a@b.com）：…``)."""
    labels = labels or Labels(None)
    args = json_object(r.arguments) or {}
    said = {json.dumps(v, ensure_ascii=False, sort_keys=True) for v in args.values()}
    tool = labels.tools.get(r.name)
    if tool is not None and tool.side_effects:
        return _done(r, tool, args, lang, labels, facts(r.value, lang, said, labels=labels, tool=r.name))
    shown = _shown(args)
    noun, subject = labels.argument(r.name, shown[0][0], shown[0][1], lang) if len(shown) == 1 \
        else ("", subject_of(r))
    found = facts(r.value, lang, said, labels=labels, tool=r.name, noun=noun)
    if len(shown) == 1 and isinstance(r.value, dict):
        return say(lang, N_("For {subject}, {facts}."), subject=subject, facts=found)
    return say(lang, N_("{subject}: {facts}."), subject=subject, facts=found)


def _shown(args: dict) -> list[tuple[str, str]]:
    """The arguments worth naming a result by: short scalars."""
    return [(k, v if isinstance(v, str) else _short(v, 40)) for k, v in args.items()
            if v not in (None, "", [], {}) and not isinstance(v, (dict, list))
            and not (isinstance(v, str) and (len(v) > 40 or "\n" in v))]


def _done(r: Result, tool: ToolDef, args: dict, lang: str, labels: Labels, found: str) -> str:
    """An action's result: what was done, with what, and what the tool says about it."""
    parts = [say(lang, N_("{label} {value}"), label=labels.field(r.name, k, lang),
                 value=_quoted(v, lang)) for k, v in _shown(args)[:MAX_SHOWN_ARGS]]
    shown = say(lang, N_(", ")).join(parts)
    action = action_of(tool.description, lang)
    if action:
        return say(lang, N_("Done: {action} ({args}); {facts}."), action=action, args=shown, facts=found)
    return say(lang, N_("I called {tool} ({args}): {facts}."), tool=r.name, args=shown, facts=found)


def _quoted(v: str, lang: str) -> str:
    if not has_cjk(v) and " " not in v:
        return v
    return say(lang, N_("\"{text}\""), text=v)


_SENTENCE = re.compile(r"[^。.!！?？\n]+(?:[。!！?？]|\.(?=\s|$)|$)")
_NOT_AN_ACTION = re.compile(r"^(?:use|this|the|a|an|returns?|calls?|when|only|tool|if|do|don't|"
                            r"当|只|如果|用于|这|该|本|请|不要)", re.I)


def action_of(description: str, lang: str) -> str:
    """What a tool does, in ``lang``, from its description's first sentence in that language
    when it reads as an action (``发送一封邮件`` / ``send an e-mail``); else ''."""
    for m in _SENTENCE.finditer(description[:600]):
        sentence = re.sub(r"\s*[(（][^()（）]*[)）]", "", m.group(0)).strip(" 。.!！?？")
        if not sentence or has_cjk(sentence) != (lang == "zh"):
            continue
        if len(sentence) > (20 if lang == "zh" else 60) or _NOT_AN_ACTION.match(sentence):
            return ""
        return sentence if lang == "zh" else sentence[0].lower() + sentence[1:]
    return ""


def facts(value: Any, lang: str, said: frozenset[str] | set[str] = frozenset(), depth: int = 0,
          labels: Labels | None = None, tool: str = "", noun: str = "") -> str:
    """The fields of a result (less those repeating what was asked) as a phrase in ``lang``."""
    labels = labels or Labels(None)

    def tell(template: str, **values: Any) -> str:
        return say(lang, template, **values)

    if isinstance(value, dict):
        def fact(k: str, v: Any) -> str:
            key, shown = labels.field(tool, k, lang, noun), _field(v, lang, depth)
            if isinstance(v, bool):   # a flag as the tool names it: "available is true", "is_dst is false"
                return tell("{key} is {value}", key=k if lang != "zh" else key, value=shown)
            if name_tokens(k)[-1:] in (["at"], ["on"]):   # "updated at 2026-09-18…"
                return tell("{key} {value}", key=key, value=shown)
            if re.search(r"[^su]s$", key):                # "the terminals are 2"
                return tell("the {key} are {value}", key=key, value=shown)
            return tell("the {key} is {value}", key=key, value=shown)

        parts = [fact(k, v) for k, v in list(value.items())[:MAX_FIELDS]
                 if json.dumps(v, ensure_ascii=False, sort_keys=True, default=str) not in said]
        if len(value) > MAX_FIELDS:
            parts.append(tell("{n} more fields", n=len(value) - MAX_FIELDS))
        if not parts:
            return tell("nothing more than what was asked")
        if len(parts) == 1:
            return parts[0]
        return tell("{items} and {last}", items=tell(", ").join(parts[:-1]), last=parts[-1])
    if isinstance(value, list):
        if not value:
            return tell("no results")
        items = [facts(x, lang, said, depth + 1, labels, tool) if isinstance(x, (dict, list)) and depth < 1
                 else _short(x) for x in value[:MAX_ITEMS]]
        head = tell("{n} result(s)", n=len(value))
        more = tell("and {n} more", n=len(value) - MAX_ITEMS) if len(value) > MAX_ITEMS else ""
        return tell("{head}: {items}", head=head, items=tell("; ").join(items + ([more] if more else [])))
    text = str(value)
    return text if len(text) <= 200 else tell("{start}… ({n} characters)", start=text[:200], n=len(text))


def _field(v: Any, lang: str, depth: int) -> str:
    if isinstance(v, (dict, list)) and depth < 1 and v:
        return say(lang, N_("({facts})"), facts=facts(v, lang, set(), depth + 1))
    return _short(v)


def _short(v: Any, limit: int = MAX_VALUE) -> str:
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def compose(results: list[Result], lang: str, labels: Labels | None = None) -> str:
    """A text written from the results (an e-mail's body the question did not dictate)."""
    good = [r for r in results if r.error is None]
    return "\n".join(describe(r, lang, labels) for r in good)
