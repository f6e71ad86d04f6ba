"""Tool definitions as the offline model reads them: parameters, value checks, side effects.

Definitions come from outside (a user's tools file, a framework's request), so
everything here is bounded: only local ``#/...`` references are followed (never a
URL or a file), nesting is cut at ``MAX_DEPTH``, and ``pattern`` runs through
``offline_patterns`` (linear time). ``fits`` checks the JSON Schema keywords that
matter for one scalar value; ``jsonschema`` is not used (it would fetch remote refs
and backtrack on hostile patterns).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import Join, Msg
from agentdbg.providers import offline_patterns, offline_prose
from agentdbg.providers.offline_text import name_tokens, words, wordset

MAX_DEPTH = 12
FITS_STEPS = 2_000   # schemas looked at to tell whether one value fits (see ``fits``)
MAX_TOOLS = 256
MAX_PARAMS = 64
MAX_CHOICES = 200    # enum values (or titled const branches) read of one parameter

#: verbs whose tools change something outside (first name token, or the description's first word)
SIDE_EFFECT_VERBS = wordset("""
reserve book send create add insert delete remove update modify edit change set cancel pay
transfer purchase buy post publish submit write upload register subscribe unsubscribe
approve reject refund charge deploy restart stop start kill lock unlock open close enable
disable assign invite share archive rename reply forward move schedule reschedule turn switch
dim renew borrow checkout drop erase clear reset save put patch upsert notify mark rebook
apply grant revoke ban block unblock
""")
#: first words of read-only descriptions that look like verbs above ("Returns the weather")
_DESCRIPTION_NOT_VERBS = frozenset({"return", "returns", "set", "sets", "open", "opens"})
#: verbs that are side-effecting wherever they appear in a name (``calendar_delete_event``)
STRONG_VERBS = wordset("""
reserve send create delete remove update modify cancel pay transfer purchase publish submit
refund charge deploy upsert insert rebook revoke
""")
_ZH_VERBS = ("预订", "预定", "预约", "发送", "删除", "移除", "创建", "新建", "添加", "修改", "更新",
             "取消", "支付", "付款", "转账", "购买", "下单", "设置", "打开", "关闭", "提交", "发布")
_SIDE_EFFECT_PHRASES = ("side effect", "side-effect", "副作用", "写操作", "irreversible",
                        "cannot be undone", "destructive", "permanently", "needs approval")
_READ_ONLY_PHRASES = ("read-only", "read only", "no side effect", "只读", "无副作用", "不会修改")


@dataclass
class Param:
    name: str
    schema: dict                      # the property's schema, local refs resolved
    required: bool
    root: dict = field(repr=False, default_factory=dict)
    nullable: bool = False            # null is a valid value (strict schemas' optional fields)
    from_prose: frozenset[str] = frozenset()  # schema keys read from the description's words

    @property
    def prose(self) -> offline_prose.Prose:
        return offline_prose.read(self.description)

    @property
    def type(self) -> str:
        t = self.schema.get("type")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        if isinstance(t, str):
            return t
        opts = self.choices
        if opts:
            return "string" if all(isinstance(o, str) for o in opts) else "any"
        return "string" if self.schema.get("pattern") or self.schema.get("format") else "any"

    @property
    def closed(self) -> bool:
        """An enum/const is the user's choice: never taken from a tool result."""
        return "enum" in self.schema or "const" in self.schema or bool(self.titled_choices)

    @property
    def titled_choices(self) -> list[tuple[Any, str]]:
        """``oneOf``/``anyOf`` of ``const`` branches, each with its ``title``/``description``
        (the JSON Schema way to give an enum value its words; MCP's titled enums):
        ``[("shipped", "已发货"), …]``; [] when any branch is not a const."""
        for key in ("oneOf", "anyOf"):
            branches = self.schema.get(key)
            if isinstance(branches, list) and branches and \
                    all(isinstance(b, dict) and "const" in b for b in branches[:MAX_CHOICES]):
                return [(b["const"], " / ".join(t for t in (b.get("title"), b.get("description"))
                                                 if isinstance(t, str) and t))
                        for b in branches[:MAX_CHOICES]]
        return []

    @property
    def choices(self) -> list[Any]:
        """The values a closed parameter takes: its ``enum``, ``const`` or titled consts."""
        if isinstance(self.schema.get("enum"), list):
            return list(self.schema["enum"][:MAX_CHOICES])
        if "const" in self.schema:
            return [self.schema["const"]]
        return [v for v, _words in self.titled_choices]

    @property
    def description(self) -> str:
        d = self.schema.get("description") or self.schema.get("title") or ""
        return d if isinstance(d, str) else ""

    def describe(self) -> Join:
        """What a value must look like, for the user: ``integer, 1–9`` / ``pattern ^…$``."""
        s = self.schema
        parts: list[Any] = [self.type if self.type != "any" else Msg("a value")]
        if isinstance(s.get("enum"), list) or self.titled_choices:
            parts.append(Msg("one of {values}", {"values": ", ".join(str(o) for o in self.choices[:8])}))
        if isinstance(s.get("examples"), list) and s["examples"]:
            parts.append(Msg("e.g. {values}", {"values": ", ".join(str(o) for o in s["examples"][:4])}))
        if "pattern" in self.from_prose:
            parts.append(Msg("format {format} (its description)", {"format": self.prose.format_label}))
        elif isinstance(s.get("pattern"), str):
            parts.append(Msg("pattern {pattern}", {"pattern": s["pattern"][:60]}))
        if isinstance(s.get("format"), str):
            parts.append(Msg("format {format}", {"format": s["format"][:20]}))
        lo, hi = _bound(s, "minimum", "exclusiveMinimum"), _bound(s, "maximum", "exclusiveMaximum")
        if lo is not None or hi is not None:
            parts.append(f"{'' if lo is None else _num(lo)}–{'' if hi is None else _num(hi)}")
        return Join(tuple(parts))


@dataclass
class ToolDef:
    name: str
    description: str
    params: list[Param]
    side_effects: bool
    why_side_effects: str = ""

    @property
    def required(self) -> list[Param]:
        return [p for p in self.params if p.required]

    @property
    def needs(self) -> list[Param]:
        """Required parameters that need a real value (a nullable one can be sent as null)."""
        return [p for p in self.params if p.required and not p.nullable]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def read_tools(tools: Any, declared: frozenset[str] = frozenset()) -> list[ToolDef]:
    """The request's function tools (custom tools and malformed entries are skipped)."""
    out: list[ToolDef] = []
    for t in (tools if isinstance(tools, list) else [])[:MAX_TOOLS]:
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        params, description = fn.get("parameters"), fn.get("description")
        root: dict = params if isinstance(params, dict) else {}
        desc: str = description if isinstance(description, str) else ""
        side, why = side_effects(fn["name"], desc, _hints(t, fn), fn["name"] in declared)
        out.append(ToolDef(fn["name"], desc, _params(root), side, why))
    return out


def _params(root: dict) -> list[Param]:
    props = root.get("properties")
    props = props if isinstance(props, dict) else {}
    listed = root.get("required")
    required: list = listed if isinstance(listed, list) else []
    out = []
    for name, schema in list(props.items())[:MAX_PARAMS]:
        if isinstance(name, str):
            plain, prose = with_prose(effective(schema, root))
            out.append(Param(name, plain, name in required, root,
                             nullable=_accepts_null(schema, root), from_prose=prose))
    return out


def with_prose(schema: dict) -> tuple[dict, frozenset[str]]:
    """The schema with what its description says in words (``offline_prose``) where the
    schema itself says nothing: examples after "e.g.", a stated format as a pattern."""
    d = schema.get("description")
    t = schema.get("type")
    stringy = t in (None, "string") or (isinstance(t, list) and "string" in t)
    if not isinstance(d, str) or not d or not stringy or any(k in schema for k in ("enum", "const")):
        return schema, frozenset()
    prose = offline_prose.read(d)
    added: dict[str, Any] = {}
    if prose.examples and not isinstance(schema.get("examples"), list):
        added["examples"] = list(prose.examples)
    if prose.pattern and not any(k in schema for k in ("pattern", "format")):
        added["pattern"] = prose.pattern
    return ({**schema, **added}, frozenset(added)) if added else (schema, frozenset())


def _hints(tool: dict, fn: dict) -> dict:
    for holder in (fn, tool):
        for key in ("annotations", "x-annotations", "x-mcp-annotations"):
            value = holder.get(key)
            if isinstance(value, dict):
                return value
    return {}


def side_effects(name: str, description: str, hints: dict, declared: bool) -> tuple[bool, str]:
    """Whether calling the tool changes something, and why the model thinks so (conservative:
    any sign of a side effect counts, unless the definition says it is read-only)."""
    if declared:
        return True, "the engine says so"
    if hints.get("destructiveHint") is True or hints.get("readOnlyHint") is False:
        return True, "its annotations say it is not read-only"
    if hints.get("readOnlyHint") is True:
        return False, ""
    tokens = name_tokens(name)
    if tokens and tokens[0] in SIDE_EFFECT_VERBS:
        return True, f"its name starts with the verb {tokens[0]!r}"
    strong = next((t for t in tokens if t in STRONG_VERBS), None)
    if strong:
        return True, f"its name contains the verb {strong!r}"
    low = description.lower()
    if any(p in low for p in _READ_ONLY_PHRASES):
        return False, ""
    first = words(description[:40])[:1]
    if first and first[0] not in _DESCRIPTION_NOT_VERBS and \
            (first[0] in SIDE_EFFECT_VERBS or first[0][:-1] in SIDE_EFFECT_VERBS):
        return True, f"its description starts with the verb {first[0]!r}"
    zh = next((v for v in _ZH_VERBS if v in description[:12]), None)
    if zh:
        return True, f"its description starts with {zh!r}"
    phrase = next((p for p in _SIDE_EFFECT_PHRASES if p in low), None)
    if phrase:
        return True, f"its description says {phrase!r}"
    return False, ""


# -- schemas -------------------------------------------------------------------

def resolve(schema: Any, root: dict, depth: int = 0) -> Any:
    """Follow a local ``$ref`` (``#/$defs/X``); anything else (a URL, a file) is not fetched
    and counts as an unknown schema (``None``)."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < MAX_DEPTH:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return None
        target: Any = root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        if target is None:
            return None
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **extra} if isinstance(target, dict) else target
        depth += 1
    return schema


def effective(schema: Any, root: dict, depth: int = 0) -> dict:
    """The schema a value is read against: refs resolved, ``anyOf: [X, null]`` unwrapped."""
    s = resolve(schema, root)
    if depth > MAX_DEPTH:
        return {"$unknown": True}
    if not isinstance(s, dict):
        return {"$unknown": True} if s is None or s is not True else {}
    for key in ("anyOf", "oneOf"):
        branches = s.get(key)
        if isinstance(branches, list):
            real = [b for b in (resolve(x, root) for x in branches[:16])
                    if isinstance(b, dict) and b.get("type") != "null"]
            if len(real) == 1:
                merged = {**real[0], **{k: v for k, v in s.items() if k != key}}
                return effective(merged, root, depth + 1) if "$ref" in merged else merged
    all_of = s.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        inner = resolve(all_of[0], root)
        if isinstance(inner, dict):
            return {**inner, **{k: v for k, v in s.items() if k != "allOf"}}
    return s


def _accepts_null(schema: Any, root: dict) -> bool:
    s = resolve(schema, root)
    if not isinstance(s, dict):
        return False
    t = s.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    branches = [b for key in ("anyOf", "oneOf") if isinstance(s.get(key), list) for b in s[key][:16]]
    return any(resolve(b, root) == {"type": "null"} for b in branches)


def fits(value: Any, schema: Any, root: dict) -> bool:
    """Whether a scalar ``value`` satisfies ``schema``. Unknown or uncheckable -> False.

    At most ``FITS_STEPS`` schemas are looked at for one value: ``allOf``/``anyOf``/``oneOf``
    of references that lead to more of them would otherwise multiply the work at every
    level (16 branches over 7 levels: 16^7); past the budget the value does not fit."""
    return _fits(value, schema, root, 0, [FITS_STEPS])


def _fits(value: Any, schema: Any, root: dict, depth: int, left: list[int]) -> bool:
    left[0] -= 1
    if left[0] < 0:
        return False
    s = resolve(schema, root)
    if s is True or s == {}:
        return True
    if not isinstance(s, dict) or depth > MAX_DEPTH or "$unknown" in s:
        return False
    if not _type_ok(value, s.get("type")):
        return False
    if isinstance(s.get("enum"), list) and not any(_same(value, o) for o in s["enum"]):
        return False
    if "const" in s and not _same(value, s["const"]):
        return False
    if isinstance(value, str) and not _string_ok(value, s):
        return False
    if _is_number(value) and not _number_ok(value, s):
        return False
    for key in ("anyOf", "oneOf"):
        if isinstance(s.get(key), list) and \
                not any(_fits(value, b, root, depth + 1, left) for b in s[key][:16]):
            return False
    return not (isinstance(s.get("allOf"), list)
                and not all(_fits(value, b, root, depth + 1, left) for b in s["allOf"][:16]))


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (_is_number(a) and _is_number(b) and a == b)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _type_ok(value: Any, t: Any) -> bool:
    if t is None:
        return True
    types = t if isinstance(t, list) else [t]
    checks = {"string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "integer": lambda v: _is_number(v) and float(v).is_integer(),
              "number": _is_number, "null": lambda v: v is None,
              "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict)}
    return any(checks.get(x, lambda v: False)(value) for x in types if isinstance(x, str))


def _string_ok(value: str, s: dict) -> bool:
    if isinstance(s.get("minLength"), int) and len(value) < s["minLength"]:
        return False
    if isinstance(s.get("maxLength"), int) and len(value) > s["maxLength"]:
        return False
    if isinstance(s.get("pattern"), str) and offline_patterns.search(s["pattern"], value) is not True:
        return False
    return format_ok(value, s.get("format"))


_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{1,63}$")
_TIME = re.compile(r"^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$")


def format_ok(value: str, fmt: Any) -> bool:
    if fmt == "date":
        try:
            dt.date.fromisoformat(value)
            return len(value) == 10
        except ValueError:
            return False
    if fmt == "email":
        return bool(_EMAIL.match(value))
    if fmt == "time":
        return bool(_TIME.match(value))
    if fmt == "date-time":
        try:
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return "T" in value or " " in value
        except ValueError:
            return False
    return True


def _bound(s: dict, key: str, exclusive: str) -> float | None:
    for k in (key, exclusive):
        if _is_number(s.get(k)):
            return float(s[k])
    return None


def _number_ok(value: float, s: dict) -> bool:
    if not math.isfinite(value):
        return False
    checks = [("minimum", lambda b: value >= b), ("maximum", lambda b: value <= b),
              ("exclusiveMinimum", lambda b: value > b), ("exclusiveMaximum", lambda b: value < b)]
    for key, ok in checks:
        if _is_number(s.get(key)) and not ok(s[key]):
            return False
    m = s.get("multipleOf")
    return not (isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0
                and not float(value / m).is_integer())


def out_of_range(value: float, s: dict) -> Msg | str:
    """Why a number does not fit the schema's bounds ('' when it does)."""
    lo, hi = _bound(s, "minimum", "exclusiveMinimum"), _bound(s, "maximum", "exclusiveMaximum")
    if lo is not None and value < lo:
        return Msg("{value} is below the minimum {bound}", {"value": _num(value), "bound": _num(lo)})
    if hi is not None and value > hi:
        return Msg("{value} is above the maximum {bound}", {"value": _num(value), "bound": _num(hi)})
    return ""


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
