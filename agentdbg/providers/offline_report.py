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
MAX_SALVAGED = 200_000   # characters of a cut result read for its complete fields

#: unit words a result may state, as they are written next to a number
_UNIT_WORDS = {"celsius": "°C", "centigrade": "°C", "fahrenheit": "°F", "kelvin": "K",
               "摄氏度": "°C", "华氏度": "°F"}
_TIGHT_UNITS = ("°", "℃", "℉", "%", "‰")
#: the marker a cut result ends with (agentdbg's, and the like: "…[truncated …]")
_JSON_START = re.compile(r'\s*(?:\{\s*(?:"|\}|$)|\[\s*(?:[{\["]|$|-?\d+(?:\.\d+)?\s*,|'
                         r'(?:true|false|null)\s*,))')
_CUT_MARKER = re.compile(r"\s*…?\[(?:truncated|cut)\b[^\]\n]{0,200}\]\s*$", re.I)


def units(record: dict) -> dict[str, str]:
    """The units a result states for its numbers, by field: a ``<field>_unit`` next to the
    field, a ``units`` object by field (Open-Meteo's ``current_units``), or one ``unit``
    (``units``) for the result's only number (OpenAI's weather example: ``"unit": "celsius"``)."""
    numeric = [k for k, v in list(record.items())[:MAX_FIELDS * 4] if _is_number(v)]
    out: dict[str, str] = {}
    by_field = record.get("units")
    for k in numeric:
        stated = next((record[u] for u in (f"{k}_unit", f"{k}Unit") if isinstance(record.get(u), str)),
                      by_field.get(k) if isinstance(by_field, dict) else None)
        if isinstance(stated, str):
            out[k] = stated
    one = next((record[u] for u in ("unit", "units") if isinstance(record.get(u), str)), None)
    if one is not None and len(numeric) == 1:
        out.setdefault(numeric[0], one)
    return {k: _UNIT_WORDS.get(u.strip().lower(), u.strip()) for k, u in out.items()
            if u.strip() and len(u) <= 16 and "\n" not in u}


def _unit_keys(record: dict, shown: dict[str, str]) -> set[str]:
    """The fields that only state a unit now written next to its number."""
    keys = {u for k in shown for u in (f"{k}_unit", f"{k}Unit") if u in record}
    if shown and any(isinstance(record.get(u), (str, dict)) for u in ("unit", "units")):
        keys |= {"unit", "units"} & set(record)
    return keys


def with_unit(value: Any, unit: str) -> str:
    """``29°C``, ``45%``, ``12 km``."""
    if not unit:
        return _short(value)
    return f"{_short(value)}{unit}" if unit.startswith(_TIGHT_UNITS) else f"{_short(value)} {unit}"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def unreadable(r: Result) -> bool:
    """A result that should be JSON and is not: text that opens a JSON object or list
    (``{"``, ``[{``, ``[1,``; not a log line's ``[warn]``) and does not parse (cut short, or broken)."""
    return r.error is None and isinstance(r.value, str) and bool(_JSON_START.match(r.value[:200]))


def salvage(text: str) -> tuple[bool, dict]:
    """Whether ``text`` (an unreadable result) is JSON cut short — a marker at its end, or its
    text is a start of JSON that stops mid-way — and the complete top-level fields before the cut."""
    body = _CUT_MARKER.sub("", text[:MAX_SALVAGED]).strip()
    decoder = json.JSONDecoder()
    cut = body != text.strip() or _open_at_end(body)
    fields: dict = {}
    i = 1 if body.startswith("{") else len(body)
    while i < len(body):
        try:
            i = _skip(body, i)
            key, i = decoder.raw_decode(body, i)
            i = _skip(body, i)
            if not isinstance(key, str) or body[i:i + 1] != ":":
                break
            value, i = decoder.raw_decode(body, _skip(body, i + 1))
            i = _skip(body, i)
        except (ValueError, RecursionError):
            break
        if body[i:i + 1] not in (",", "}"):
            break
        fields[key] = value
        i += 1
    return cut, {k: v for k, v in fields.items() if not isinstance(v, (dict, list))}


def _open_at_end(text: str) -> bool:
    """Whether ``text`` stops inside a string or with a bracket still open: JSON cut short,
    not JSON written wrong (a closing bracket that closes nothing, or text after the end)."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False
    return in_string or depth > 0


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def cut_off(r: Result, lang: str, subject: str, labels: Labels | None = None) -> str:
    """An unreadable result as a careful model reports it: cut off (with the fields it could
    still read) or broken, never pasted."""
    cut, fields = salvage(r.value)
    args = json_object(r.arguments) or {}
    said = {json.dumps(v, ensure_ascii=False, sort_keys=True) for v in args.values()}
    read = facts(fields, lang, said, labels=labels, tool=r.name) if \
        any(json.dumps(v, ensure_ascii=False, sort_keys=True) not in said for v in fields.values()) else ""
    if not cut:
        return say(lang, N_("The result of {tool} for {subject} is not valid JSON, so I cannot read "
                            "it."), subject=subject, tool=r.name)
    if read:
        return say(lang, N_("The result of {tool} for {subject} was cut off and is not complete JSON, "
                            "so I cannot read all of it; the part I can read says {facts}."),
                   subject=subject, tool=r.name, facts=read)
    return say(lang, N_("The result of {tool} for {subject} was cut off and is not complete JSON, so "
                        "I cannot read it."), subject=subject, tool=r.name)


def subject_of(r: Result) -> str:
    """What the call was about: its arguments' values (``北京``, ``ORD-2026-001``), else the
    tool's name."""
    args = json_object(r.arguments) or {}
    shown = [v if isinstance(v, str) else _short(v, 40) for v in args.values()
             if v not in (None, "", [], {}) and not (isinstance(v, str) and (len(v) > 40 or "\n" in v))]
    return "/".join(shown[:2]) or r.name


def describe(r: Result, lang: str, labels: Labels | None = None) -> str:
    """One result as a sentence in ``lang``: ``订单 ORD-2026-001 的状态是已发货，物流单号是
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
        stated = units(value)
        skip = _unit_keys(value, stated)

        def fact(k: str, v: Any) -> str:
            key = labels.field(tool, k, lang, noun)
            shown = with_unit(v, stated[k]) if k in stated else \
                labels.value(tool, k, v, lang) or _field(v, lang, depth)
            if isinstance(v, bool):   # a flag as the tool names it: "available is true", "is_dst is false"
                return tell("{key} is {value}", key=k if lang != "zh" else key, value=shown)
            if name_tokens(k)[-1:] in (["at"], ["on"]):   # "updated at 2026-09-18…"
                return tell("{key} {value}", key=key, value=shown)
            if re.search(r"[^su]s$", key):                # "the terminals are 2"
                return tell("the {key} are {value}", key=key, value=shown)
            return tell("the {key} is {value}", key=key, value=shown)

        parts = [fact(k, v) for k, v in list(value.items())[:MAX_FIELDS] if k not in skip
                 and json.dumps(v, ensure_ascii=False, sort_keys=True, default=str) not in said]
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
