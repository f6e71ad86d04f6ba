"""Does the question ask for a tool's side effect? ("reserve", "book", "send", "删除" …)

A side-effecting tool is called only when the question asks for its action: the
action's verb (or a synonym) is in the question, not negated ("don't reserve"), and
not under a condition the offline model cannot judge ("if it is available, reserve
it"). When several side-effecting tools share a verb (``set_light``,
``set_thermostat``), the question must also name the tool's object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentdbg.providers.offline_schema import SIDE_EFFECT_VERBS, ToolDef
from agentdbg.providers.offline_text import cjk_bigrams, name_tokens, stem, words

#: verbs that ask for the same action, with the Chinese words that ask for it
_GROUPS: list[tuple[frozenset[str], tuple[str, ...]]] = [
    (frozenset({"reserve"}), ("预订", "预定", "预约", "预留")),
    (frozenset({"book"}), ("预订", "预定", "预约", "订票", "订机票")),
    (frozenset({"send", "email", "mail"}), ("发送", "发给", "发邮件", "发一封")),
    (frozenset({"create", "add"}), ("创建", "新建", "添加", "安排")),
    (frozenset({"delete", "remove", "erase"}), ("删除", "删掉", "移除", "去掉")),
    (frozenset({"update", "modify", "edit", "rename", "move", "reschedule"}),
     ("修改", "更改", "更新", "改成", "改为", "改到")),
    (frozenset({"set", "turn", "switch", "adjust", "dim"}),
     ("设置", "设为", "设成", "调到", "调高", "调低", "打开", "关闭", "开灯", "关灯", "关掉", "关上")),
    (frozenset({"cancel"}), ("取消",)),
    (frozenset({"pay"}), ("支付", "付款")),
    (frozenset({"transfer"}), ("转账",)),
    (frozenset({"buy", "purchase"}), ("购买", "下单")),
    (frozenset({"borrow", "checkout"}), ("借阅",)),
    (frozenset({"renew"}), ("续借",)),
    (frozenset({"lock", "unlock"}), ("锁上", "解锁")),
]
#: words that ask for an action only as a command ("email Bob", "can you email"), since
#: they are also nouns ("the email address")
_COMMAND_ONLY = frozenset({"email", "mail"})
#: a verb after these is a noun or a state, not a request: "the book", "is it set?"
_NOT_ACTION_BEFORE = frozenset({"is", "are", "was", "were", "been", "be", "being", "already", "the",
                                "my", "a", "an", "your", "our", "their", "his", "her", "its", "this",
                                "that", "which", "whose"})
_COMMAND_BEFORE = frozenset({"please", "you", "to", "and", "then", "also", "pls"})
_NEGATIONS = ("don't", "dont", "not", "never", "without", "no", "nor")
_ZH_NEGATIONS = ("不要", "别", "不用", "无需", "不必", "不需要", "先不", "请勿", "勿")
_CONDITIONS = ("if", "unless", "provided", "whether", "in case", "once")
_ZH_CONDITIONS = ("如果", "要是", "假如", "若", "的话")
_SENTENCE = re.compile(r"[^.?!。？！\n]+")
#: a question about how an action is done ("how do I reserve", "how to book", "怎么预约")
_HOW_TO = re.compile(r"\bhow\s+(?:do|can|could|should|would|does|might|may)\s+(?:i|we|you|one|"
                     r"someone|people|a user|users)\b|\bhow\s+to\b|\bwhat(?:'s| is) the way to\b|"
                     r"\bsteps? (?:to|for)\b|\bprocess (?:to|for)\b")
_ZH_HOW_TO = ("怎么", "怎样", "如何", "怎么样才能", "该怎么", "要怎么")


@dataclass
class Intent:
    asked: bool
    verb: str               # the action's verb, for explanations
    word: str = ""          # what in the question asked for it
    negated: bool = False
    conditional: bool = False
    how_to: bool = False    # "how do I reserve …?": asks how the action is done, not for it


def action_verb(tool: ToolDef) -> str:
    tokens = name_tokens(tool.name)
    if tokens and tokens[0] in SIDE_EFFECT_VERBS:
        return tokens[0]
    verb = next((t for t in tokens if t in SIDE_EFFECT_VERBS), None)
    if verb:
        return verb
    first = words(tool.description[:40])[:1]
    if first and (first[0] in SIDE_EFFECT_VERBS or first[0][:-1] in SIDE_EFFECT_VERBS):
        return first[0] if first[0] in SIDE_EFFECT_VERBS else first[0][:-1]
    return tokens[0] if tokens else tool.name


def synonyms(verb: str) -> tuple[set[str], tuple[str, ...]]:
    english: set[str] = {verb}
    chinese: tuple[str, ...] = ()
    for group, zh in _GROUPS:
        if verb in group:
            english |= group
            chinese += zh
    return english, chinese


def intent(tool: ToolDef, question: str, rivals: list[ToolDef]) -> Intent:
    """Whether ``question`` asks for ``tool``'s action. ``rivals``: the other side-effecting tools."""
    verb = action_verb(tool)
    english, chinese = synonyms(verb)
    hit = _find_verb(question, english, chinese)
    if hit is None:
        return Intent(False, verb)
    where, word = hit
    shared = [r for r in rivals if r.name != tool.name and synonyms(action_verb(r))[0] & english]
    if shared and not _names_object(tool, question, shared):
        return Intent(False, verb, word)
    return Intent(True, verb, word, negated=_negated(question, where),
                  conditional=_conditional(question, where), how_to=_how_to(question, where))


def _find_verb(question: str, english: set[str], chinese: tuple[str, ...]) -> tuple[int, str] | None:
    """The first place the question uses one of the verbs as a request: the plain form only
    ("reserve", "book"; not "booking", "my reservation", "is it booked?")."""
    low = question.lower()
    hits = []
    for m in re.finditer(r"[a-z][a-z']*", low):
        w = m.group(0)
        if w not in english:
            continue
        before = words(low[max(0, m.start() - 30):m.start()])[-1:]
        if before and before[0] in _NOT_ACTION_BEFORE:
            continue
        if w in _COMMAND_ONLY and before and before[0] not in _COMMAND_BEFORE:
            continue
        hits.append((m.start(), w))
        break
    for z in chinese:
        i = low.find(z)
        while i >= 0 and i > 0 and low[i - 1] == "的":  # 我的预订: a noun
            i = low.find(z, i + 1)
        if i >= 0:
            hits.append((i, z))
    return min(hits) if hits else None


def _names_object(tool: ToolDef, question: str, rivals: list[ToolDef]) -> bool:
    """The question names this tool's object (``light`` of ``set_light``), or its description
    fits the question better than every rival's."""
    verb = action_verb(tool)
    objects = {stem(t) for t in name_tokens(tool.name) if t != verb and len(t) >= 3}
    q_stems = {stem(w) for w in words(question)}
    if objects & q_stems:
        return True
    if any({stem(t) for t in name_tokens(r.name) if len(t) >= 3} & q_stems - {stem(verb)}
           for r in rivals):
        return False
    mine = len(cjk_bigrams(tool.description) & cjk_bigrams(question))
    return mine > 0 and all(len(cjk_bigrams(r.description) & cjk_bigrams(question)) < mine
                            for r in rivals)


def _negated(question: str, where: int) -> bool:
    before = question[max(0, where - 40):where].lower()
    near = words(before)[-3:]
    if any(n in near for n in _NEGATIONS) or before.rstrip().endswith("no need to"):
        return True
    return any(before[-6:].endswith(z) or z in before[-4:] for z in _ZH_NEGATIONS)


def _how_to(question: str, where: int) -> bool:
    """The verb sits in a clause that asks how the action is done, not for it."""
    for m in _SENTENCE.finditer(question):
        if m.start() <= where < m.end():
            clause = question[m.start():where]
            return bool(_HOW_TO.search(clause.lower())) or any(z in clause for z in _ZH_HOW_TO)
    return False


def _conditional(question: str, where: int) -> bool:
    for m in _SENTENCE.finditer(question):
        if m.start() <= where < m.end():
            clause = question[m.start():where].lower()
            return any(c in words(clause) for c in _CONDITIONS if " " not in c) or \
                "in case" in clause or any(z in clause for z in _ZH_CONDITIONS)
    return False
