"""A lesson prepared once: a YAML file with the question, the options, the breakpoints, the
faults, the steps (each with an optional teacher's note and pause) and the exercises.

    title: 订单在哪里
    question: 订单 ORD-2026-001 到哪里了?
    options: {lang: zh, explain: true, present: true}
    breakpoints:
      - tool: query_logistics
        note: 第二个调用用上了第一个结果里的 tracking_no
    injections:
      - fail: query_logistics
        kind: timeout
        note: 超时是可重试的错误
    steps:
      - next
      - do: next
        note: 看 tool_call_id 怎样把结果和调用配对
        pause: true
      - drop 1
    exercises:
      - 为什么 drop 1 之后 API 返回 400？

A lesson is data: it never names code to load (a tools file is passed with ``--tools``), and
every error is one line naming the file and, where it can, the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdbg.errors import ConfigError, where
from agentdbg.i18n import N_, Msg

OPTIONS = {"lang": str, "explain": bool, "present": bool, "profile": str, "approve": str,
           "max_turns": int, "system": str, "full": bool}
MAX_ITEMS = 1000


#: the error for a key of the lesson file: ``bad(key, what is wrong, *where)``, where ``where``
#: leads into the key's value (an item's index, a nested key) to name the line of what is wrong
Bad = Callable[..., ConfigError]


@dataclass
class Step:
    command: str
    note: str = ""
    pause: bool = False


@dataclass
class Lesson:
    question: str | None = None
    title: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    breakpoints: list[tuple[str, str | None, str]] = field(default_factory=list)  # kind, value, note
    injections: list[dict] = field(default_factory=list)  # tool, kind, sticky, note, pause
    steps: list[Step] = field(default_factory=list)
    exercises: list[str] = field(default_factory=list)
    tools: str | None = None         # what the lesson was prepared with (passed with --tools)
    path: Path | None = None
    lines: dict[tuple[str, int], int] = field(default_factory=dict)  # (key, item) -> its line

    def check_tools(self, names: set[str]) -> None:
        """A ``ConfigError`` naming the file and line of the first fault or breakpoint on a tool
        that is not among ``names`` (checked before the run starts, not when it is hit)."""
        used = [("injections", i, inj["tool"]) for i, inj in enumerate(self.injections)]
        used += [("breakpoints", i, value) for i, (kind, value, _n) in enumerate(self.breakpoints)
                 if kind == "tool"]
        for key, i, tool in used:
            if tool not in names:
                raise ConfigError(Msg(N_("{where}: {key}: no tool {tool}; the tools are {tools}"),
                                      {"where": where(self.path, self.lines.get((key, i)), None),
                                       "key": key, "tool": repr(tool),
                                       "tools": ", ".join(sorted(names)) or "-"}))


def load_lesson(path: Path, speak: Callable[[str], None] | None = None) -> Lesson:
    """The lesson in ``path``; ``speak`` is first told the language its options name (``options:
    {lang: zh}``), read before anything else is checked, so the file's own errors are said in
    it, even when other parts of the file (or its YAML) are wrong."""
    from agentdbg.yamlfile import parse, read_text

    text = read_text(path, "lesson file")
    try:
        data, node = parse(path, text)
    except ConfigError:
        if speak is not None:
            _speak(speak, _options_alone(path, text))
        raise
    if speak is not None:
        _speak(speak, data)
    if not isinstance(data, dict):
        raise ConfigError(Msg(N_("{path}: a lesson file is a YAML mapping (question:, steps: …)"),
                              {"path": path}))
    def bad(key: str, what: Msg, *inside: str | int) -> ConfigError:
        return ConfigError(Msg(N_("{where}: {key}: {problem}"),
                               {"where": where(path, line_of(node, key, *inside), None), "key": key,
                                "problem": what}))

    known = {"title", "question", "options", "breakpoints", "injections", "steps", "exercises",
             "tools"}
    for key in data:
        if key not in known:
            raise bad(str(key), Msg(N_("not a lesson key; the keys are {keys}"),
                                    {"keys": ", ".join(sorted(known))}))
    lesson = Lesson(path=path)
    for key in ("breakpoints", "injections", "steps"):
        for i in range(len(_items(data, key, bad))):
            lesson.lines[(key, i)] = line_of(node, key, i) or 0
    lesson.question = _text(data.get("question"), "question", bad, optional=True)
    lesson.title = _text(data.get("title"), "title", bad, optional=True) or ""
    lesson.tools = _text(data.get("tools"), "tools", bad, optional=True)
    lesson.options = _options(data.get("options"), bad)
    lesson.breakpoints = [_breakpoint(b, _at(bad, i)) for i, b in enumerate(_items(data, "breakpoints", bad))]
    lesson.injections = [_injection(v, _at(bad, i)) for i, v in enumerate(_items(data, "injections", bad))]
    lesson.steps = [_step(s, _at(bad, i)) for i, s in enumerate(_items(data, "steps", bad))]
    lesson.exercises = [_text(e, "exercises", bad) or "" for e in _items(data, "exercises", bad)]
    return lesson


def _speak(speak: Callable[[str], None], data: Any) -> None:
    """Tell ``speak`` the language ``data``'s options name, if they name one."""
    options = data.get("options") if isinstance(data, dict) else None
    lang = options.get("lang") if isinstance(options, dict) else None
    if isinstance(lang, str):
        speak(lang)


def _options_alone(path: Path, text: str) -> Any:
    """The top-level ``options:`` key of a file whose YAML is broken elsewhere, parsed on its
    own (its line and the indented lines under it); None when that is broken too."""
    from agentdbg.yamlfile import parse

    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if re.match(r"options\s*:", line)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\t", "#") or not lines[end].strip()):
        end += 1
    try:
        return parse(path, "\n".join(lines[start:end]))[0]
    except ConfigError:
        return None


def line_of(node: Any, *path: str | int) -> int | None:
    """The line (1-based) of what ``path`` leads to in the YAML ``node``: a key of a mapping
    (its key's line), an item of a list; as deep as the path can be followed."""
    import yaml

    line = None
    for step in path:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if str(k.value) == str(step)), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _at(bad: Bad, index: int) -> Bad:
    """``bad`` for item ``index`` of the key's list (a nested key after it)."""
    return lambda key, what, *inside: bad(key, what, index, *inside)


def _items(data: dict, key: str, bad: Bad) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(key, Msg(N_("expected a list")))
    if len(value) > MAX_ITEMS:
        raise bad(key, Msg(N_("{n} items; at most {limit}"), {"n": len(value), "limit": MAX_ITEMS}))
    return value


def _text(value: Any, key: str, bad: Bad, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise bad(key, Msg(N_("expected text, got {type}"), {"type": type(value).__name__}))
    return value


def _options(value: Any, bad: Bad) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad("options", Msg(N_("expected a mapping (lang: zh, explain: true …)")))
    out = {}
    for key, v in value.items():
        kind = OPTIONS.get(str(key))
        if kind is None:
            raise bad("options", Msg(N_("{key} is not a lesson option; one of {options}"),
                                     {"key": repr(key), "options": ", ".join(OPTIONS)}), str(key))
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise bad("options", Msg(N_("{key} must be {kind}, got {type}"),
                                     {"key": key, "kind": kind.__name__, "type": type(v).__name__}),
                      str(key))
        out[str(key)] = v
    return out


def _breakpoint(value: Any, bad: Bad) -> tuple[str, str | None, str]:
    from agentdbg.repl.breakpoints import KINDS

    note = ""
    if isinstance(value, dict):
        value = dict(value)
        note = _text(value.pop("note", ""), "breakpoints", bad) or ""
        if len(value) != 1:
            raise bad("breakpoints", Msg(N_("each is one of: tool: NAME, turn: N, error, finding "
                                            "(with an optional note:)")))
        (kind, arg), = value.items()
        if kind not in KINDS or (kind in ("tool", "turn") and arg is None):
            raise bad("breakpoints", Msg(N_("{value}: expected tool: NAME, turn: N, error or finding"),
                                         {"value": repr(kind)}))
        return str(kind), (str(arg) if kind in ("tool", "turn") else None), note
    if value in ("error", "finding"):
        return str(value), None, note
    raise bad("breakpoints", Msg(N_("{value}: expected tool: NAME, turn: N, error or finding"),
                                 {"value": repr(value)}))


def _injection(value: Any, bad: Bad) -> dict:
    from agentdbg.engine.faults import KINDS

    if not isinstance(value, dict) or not isinstance(value.get("fail"), str):
        raise bad("injections", Msg(N_("each is a mapping: fail: TOOL, kind: KIND (sticky:, note:, "
                                       "pause:)")))
    kind = value.get("kind")
    if kind not in KINDS:
        raise bad("injections", Msg(N_("kind {kind}: one of {kinds}"),
                                    {"kind": repr(kind), "kinds": ", ".join(KINDS)}))
    extra = set(value) - {"fail", "kind", "sticky", "note", "pause"}
    if extra:
        raise bad("injections", Msg(N_("unknown key(s) {keys}"),
                                    {"keys": ", ".join(sorted(map(str, extra)))}))
    return {"tool": value["fail"], "kind": kind, "sticky": _flag(value, "sticky", "injections", bad),
            "note": _text(value.get("note", ""), "injections", bad) or "",
            "pause": _flag(value, "pause", "injections", bad)}


def _flag(value: dict, name: str, key: str, bad: Bad) -> bool:
    """``pause:`` or ``sticky:`` of an item: true or false (absent: false), nothing else."""
    flag = value.get(name, False)
    if not isinstance(flag, bool):
        raise bad(key, Msg(N_("{name}: must be true or false, got {value}"),
                           {"name": name, "value": repr(flag)}), name)
    return flag


def _step(value: Any, bad: Bad) -> Step:
    if isinstance(value, str):
        return Step(_command(value, bad))
    if not isinstance(value, dict) or not isinstance(value.get("do", "next"), str):
        raise bad("steps", Msg(N_("each is a command, or a mapping: do: COMMAND (note:, pause:)")))
    extra = set(value) - {"do", "note", "pause"}
    if extra:
        raise bad("steps", Msg(N_("unknown key(s) {keys}"), {"keys": ", ".join(sorted(map(str, extra)))}))
    return Step(_command(value.get("do", "next"), bad, "do"),
                _text(value.get("note", ""), "steps", bad) or "", _flag(value, "pause", "steps", bad))


def _command(text: str, bad: Bad, *inside: str) -> str:
    """A step's command, its first word checked against step mode's commands up front."""
    from agentdbg.repl.commands import CommandError, lookup

    text = text.strip()
    try:
        lookup(text.partition(" ")[0] or "next")
    except CommandError as exc:
        raise bad("steps", exc.args[0], *inside) from None
    return text


def dump_lesson(lesson: Lesson) -> str:
    """The lesson as YAML (``lesson PATH`` in step mode writes it)."""
    import yaml

    data: dict[str, Any] = {}
    if lesson.title:
        data["title"] = lesson.title
    data["question"] = lesson.question
    if lesson.tools:
        data["tools"] = lesson.tools
    if lesson.options:
        data["options"] = lesson.options
    if lesson.breakpoints:
        data["breakpoints"] = [{kind: value if value is not None else True, "note": note} if note
                               else {kind: value} if value is not None else kind
                               for kind, value, note in lesson.breakpoints]
    if lesson.injections:
        data["injections"] = [{"fail": i["tool"], "kind": i["kind"], "sticky": i["sticky"]}
                              for i in lesson.injections]
    data["steps"] = [s.command if not (s.note or s.pause) else
                     {"do": s.command, **({"note": s.note} if s.note else {}),
                      **({"pause": True} if s.pause else {})} for s in lesson.steps]
    if lesson.exercises:
        data["exercises"] = lesson.exercises
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
