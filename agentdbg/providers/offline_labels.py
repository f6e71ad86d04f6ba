"""What to call a result's fields and a call's arguments in the answer, from the tool schemas.

No dictionary of field names: a field is named by the description of a parameter of the
same name, of the tool that returned it, of a tool about the same thing
(``search_orders.status`` "订单状态" names ``query_order``'s ``status``, not
``query_logistics``'s) or, for a name of several words, of any tool (``tracking_no`` ->
``物流单号``); in English by its own name in words (``tracking_no`` -> "tracking
number"). A field nothing names stays as the tool wrote it: it is data. ``say`` fills a
template in a language, spacing Chinese from Latin letters and digits where the two meet at
a placeholder (``订单 ORD-2026-001 的状态是 shipped``), never inside a value.
"""

from __future__ import annotations

import re
from typing import Any

from agentdbg.i18n import Msg, in_language, tr
from agentdbg.providers.offline_schema import Param, ToolDef
from agentdbg.providers.offline_text import has_cjk, name_tokens, stem
from agentdbg.providers.offline_values import choice_words

MAX_LABEL = 10                       # Chinese characters a description's head may have to name a field
_HEAD_END = re.compile(r"[，,。.;；:：（(\n]|例如|比如|如")
_ABBREVIATIONS = {"no": "number", "num": "number", "qty": "quantity", "msg": "message",
                  "addr": "address", "desc": "description", "dt": "date"}
_ACRONYMS = frozenset({"id", "isbn", "url", "sku", "iata", "api", "ip", "utc", "eta"})
_CJK_EDGE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_EDGE = re.compile(r"[A-Za-z0-9]")
_PLACEHOLDER = re.compile(r"(\{\w+\})")


def say(lang: str, template: str, **values: Any) -> str:
    """``template`` in ``lang`` filled with ``values``; in Chinese a space where a Chinese
    character of the template meets a Latin letter or digit of a value (or the reverse)."""
    text = in_language(lang).gettext(template)
    if lang != "zh":
        return Msg(template, values).tr(lang)
    out = ""
    for i, piece in enumerate(_PLACEHOLDER.split(text)):
        piece = tr(values[piece[1:-1]], lang) if i % 2 else piece.replace("{{", "{").replace("}}", "}")
        if out and piece and _meet(out[-1], piece[0]):
            out += " "
        out += piece
    return out


def _meet(a: str, b: str) -> bool:
    return bool((_CJK_EDGE.match(a) and _LATIN_EDGE.match(b))
                or (_LATIN_EDGE.match(a) and _CJK_EDGE.match(b)))


def head(description: str) -> str:
    """A description's naming words: ``订单号，例如 ORD-2026-001`` -> ``订单号``."""
    return _HEAD_END.split(description[:200], maxsplit=1)[0].strip()


def _zh_name(p: Param | None) -> str:
    h = head(p.description) if p is not None else ""
    return h if h and has_cjk(h) and len(h) <= MAX_LABEL and not re.search(r"[A-Za-z]", h) else ""


def words_of(name: str) -> str:
    """``tracking_no`` -> ``tracking number``; ``message_id`` -> ``message ID``."""
    tokens = [_ABBREVIATIONS.get(t, t) for t in name_tokens(name)]
    return " ".join(t.upper() if t in _ACRONYMS else t for t in tokens) or name


def _topic(tool: str) -> set[str]:
    """What a tool is about: its name's words after the verb (``query_order`` -> {order})."""
    tokens = name_tokens(tool)
    return {stem(t) for t in (tokens[1:] if len(tokens) > 1 else tokens)}


class Labels:
    """Names for fields and arguments, read from the request's tools."""

    def __init__(self, tools: list[ToolDef] | None):
        self.tools = {t.name: t for t in tools or []}

    def param(self, tool: str, key: str) -> Param | None:
        t = self.tools.get(tool)
        return t.param(key) if t is not None else None

    def field(self, tool: str, key: str, lang: str, subject_noun: str = "") -> str:
        """What to call field ``key`` of a result of ``tool``."""
        if lang != "zh":
            return words_of(key)
        own = _zh_name(self.param(tool, key))
        topic = _topic(tool)
        specific = len(name_tokens(key)) > 1     # tracking_no names one thing wherever it is
        kin = [t for t in self.tools.values() if t.name != tool and (specific or _topic(t.name) & topic)]
        label = own or next((n for n in (_zh_name(t.param(key)) for t in kin) if n), "")
        if label and subject_noun and label.startswith(subject_noun) and len(label) > len(subject_noun):
            label = label[len(subject_noun):]        # 订单 ORD-2026-001 的状态, not 的订单状态
        return label or key

    def value(self, tool: str, key: str, value: Any, lang: str) -> str:
        """A Chinese answer's words for a closed value of field ``key`` (``shipped`` ->
        ``已发货``), from the parameter that names the field; '' when no schema gives any."""
        if lang != "zh" or not isinstance(value, str):
            return ""
        topic, specific = _topic(tool), len(name_tokens(key)) > 1
        kin = [t for t in self.tools.values() if t.name != tool and (specific or _topic(t.name) & topic)]
        params = [self.param(tool, key)] + [t.param(key) for t in kin]
        return next((w for p in params if p is not None for v, ws in choice_words(p) if v == value
                     for w in ws[:1] if has_cjk(w)), "")

    def argument(self, tool: str, key: str, value: str, lang: str) -> tuple[str, str]:
        """(noun, subject) for an argument: ("订单", "订单 ORD-2026-001"), ("", "北京");
        an identifier (a value with a digit) is named by its parameter, a name is itself."""
        p = self.param(tool, key)
        words = next((w for v, ws in (choice_words(p) if p is not None else []) if v == value
                      for w in ws if has_cjk(w) == (lang == "zh")), "")
        if words:                   # a closed value in the words its schema gives it: 已发货
            return "", words
        if p is not None and lang != "zh" and value in p.choices and re.fullmatch(r"[a-z][a-z0-9_-]*", value):
            # a code chosen from a list is named with its parameter: "status shipped"
            return "", f"{words_of(key)} {value}"
        if not re.search(r"\d", value) or has_cjk(value):
            return "", value
        if lang == "zh":
            name = _zh_name(self.param(tool, key))
            noun = re.sub(r"(?:编号|号码|号|名称|名)$", "", name) if name else ""
            return noun, say(lang, "{noun}{value}", noun=noun, value=value) if noun else value
        tokens = name_tokens(key)
        if len(tokens) > 1 and tokens[-1] in ("id", "code", "key"):
            tokens = tokens[:-1]
        noun = words_of("_".join(tokens))
        return noun, f"{noun} {value}"


__all__ = ["Labels", "head", "say", "words_of"]
