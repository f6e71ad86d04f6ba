"""Faults a user can inject in place of a tool result (``inject``, ``fail``).

Each kind provokes one of the seed articles' pitfalls; ``empty`` is the
"failure disguised as success" (an empty ``{}`` that a model may fill with
invented data), ``invalid_json`` a tool that printed broken JSON, ``oversized``
a result that blows up the context. Both have the shape of the tool they answer: its
own result (the real one of a read-only tool, run for the purpose, or the result being
replaced), cut short or repeated, so the fault fits the lesson (a weather tool's broken
JSON is weather, not an order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from agentdbg.engine.results import error_content
from agentdbg.i18n import N_, Msg, json_problem

#: the kinds made from the tool's own result, spoiling it (the others replace it)
SPOILERS = ("invalid_json", "oversized")
KINDS = ("timeout", "invalid_json", "invalid_arguments", "internal_error", "not_found", "empty",
         "oversized", "rate_limited", "denied")
OVERSIZED_ROWS = 2000


class CallOverride(Protocol):
    """What answers a call instead of running its tool: an injected fault or a recorded result."""

    @property
    def error_type(self) -> str | None: ...
    @property
    def injected(self) -> bool: ...        # the user's doing (marked in the view)
    @property
    def note(self) -> str: ...
    @property
    def cause(self) -> str | None: ...     # a recorded handler exception, in one line
    @property
    def duration_ms(self) -> float | None: ...  # a recorded result's measured time, else None

    def content(self, tool: str, sample: str | None = None) -> str: ...


@dataclass(frozen=True)
class Fault:
    kind: str             # one of KINDS, or "custom"
    custom: str = ""      # the JSON text for "custom"

    @property
    def needs_result(self) -> bool:
        """The fault is made from the tool's own result (see ``content``'s ``sample``)."""
        return self.kind in SPOILERS

    @property
    def spoils(self) -> bool:
        """The model reads a result spoiled (cut short, repeated), not one the fault replaced."""
        return self.needs_result

    def content(self, tool: str, sample: str | None = None) -> str:
        """The tool message's content. ``sample``: the tool's own result (or the call's
        arguments when there is none), which ``invalid_json`` cuts and ``oversized`` repeats."""
        k = self.kind
        if k == "custom":
            return self.custom
        if k == "empty":
            return "{}"
        if k == "invalid_json":
            return broken_json(sample or "{}")
        if k == "oversized":
            return oversized(sample)
        message = {
            "timeout": f"the tool {tool!r} did not answer in time",
            "invalid_arguments": f"the arguments for {tool!r} were rejected",
            "internal_error": f"the tool {tool!r} failed with an internal error",
            "not_found": f"{tool!r} found nothing for these arguments",
            "rate_limited": f"the tool {tool!r} is rate limited; try again later",
            "denied": f"the user did not approve this call of {tool!r}",
        }[k]
        return error_content(k, message)

    @property
    def error_type(self) -> str | None:
        return None if self.kind in ("empty", "invalid_json", "oversized", "custom") else self.kind

    @property
    def injected(self) -> bool:
        return True

    @property
    def note(self) -> str:
        return f"injected fault: {self.describe()}"

    @property
    def cause(self) -> str | None:
        return None   # no handler ran

    @property
    def duration_ms(self) -> float | None:
        return None   # an injected fault takes the time it takes

    def describe(self) -> str:
        return f"custom {self.custom[:40]}" if self.kind == "custom" else self.kind


@dataclass(frozen=True)
class InPlaceOf:
    """A fault answering a call whose result is known without running it (a replay's recorded
    result): ``invalid_json`` and ``oversized`` are made from that result; nothing runs."""
    fault: CallOverride
    result: str

    needs_result = False

    @property
    def error_type(self) -> str | None:
        return self.fault.error_type

    @property
    def spoils(self) -> bool:
        return spoils(self.fault)

    @property
    def injected(self) -> bool:
        return True

    @property
    def note(self) -> str:
        return self.fault.note

    @property
    def cause(self) -> str | None:
        return None

    @property
    def duration_ms(self) -> float | None:
        return None

    def content(self, tool: str, sample: str | None = None) -> str:
        return self.fault.content(tool, self.result)


#: what a fault made from a result starts from (``effect``): the tool's real result (a
#: read-only tool runs for it), the call's arguments (a tool with side effects never runs for
#: a fault), a replay's recorded result, or the result a finished tool message already holds
SOURCES = ("tool", "arguments", "recorded", "held")

_EFFECTS = {
    ("invalid_json", "tool"): N_("the tool runs, and the model reads its real result cut short "
                                 "(no longer valid JSON)"),
    ("oversized", "tool"): N_("the tool runs, and the model reads its real result repeated "
                              "{rows} times"),
    ("invalid_json", "arguments"): N_("the tool does not run (it has side effects); the model "
                                      "reads the call's arguments, cut short, as its result"),
    ("oversized", "arguments"): N_("the tool does not run (it has side effects); the model reads "
                                   "the call's arguments, repeated {rows} times, as its result"),
    ("invalid_json", "recorded"): N_("nothing runs in a replay; the model reads the recorded "
                                     "result cut short (no longer valid JSON)"),
    ("oversized", "recorded"): N_("nothing runs in a replay; the model reads the recorded result "
                                  "repeated {rows} times"),
    ("invalid_json", "held"): N_("the result it held, cut short (no longer valid JSON)"),
    ("oversized", "held"): N_("the result it held, repeated {rows} times"),
}
REPLACES = N_("the tool does not run; the fault is the whole result the model reads")
REPLACES_HELD = N_("the model reads it in place of the tool's result")


def effect(fault: Fault, source: str) -> Msg:
    """What ``fault`` does to the call it answers, said where it is set (``inject``, ``fail``):
    ``invalid_json`` and ``oversized`` spoil a result (``source``: whose), the others replace it."""
    template = _EFFECTS.get((fault.kind, source)) if fault.needs_result else None
    if template is None:
        replaces = REPLACES_HELD if source == "held" else REPLACES
        return Msg(replaces)
    return Msg(template, {"rows": OVERSIZED_ROWS})


def spoils(answer: object) -> bool:
    """``answer`` (a ``CallOverride``) spoils the call's result rather than replacing it: a
    spoiling fault, or a recorded result that was one (its note is ``Fault.note``, recorded)."""
    if hasattr(answer, "spoils"):
        return bool(answer.spoils)
    note = getattr(answer, "recorded_note", None)
    return bool(getattr(answer, "injected", False)) and \
        note in {f"injected fault: {kind}" for kind in SPOILERS}


def broken_json(sample: str) -> str:
    """``sample`` cut short inside its text, so it no longer parses (``{"city": "北京", "tem``)."""
    text = sample.strip() or "{}"
    cut = max(2, (len(text) * 3) // 5)
    while cut > 1:
        piece = text[:cut]
        try:
            json.loads(piece)
        except ValueError:
            return piece
        cut -= 1
    return text[:1] or "{"


def oversized(sample: str | None) -> str:
    """A result far too large for the context: the tool's own result, ``OVERSIZED_ROWS`` times."""
    try:
        row = json.loads(sample) if sample else None
    except ValueError:
        row = sample
    if row in (None, {}, []):
        row = {"value": "x" * 40}
    return json.dumps({"results": [row] * OVERSIZED_ROWS}, ensure_ascii=False)


def parse_fault(text: str) -> Fault:
    """A kind name, or inline JSON used verbatim as the tool message content."""
    text = text.strip()
    if text in KINDS:
        return Fault(text)
    if text[:1] in "{[\"":
        try:
            json.loads(text)
        except ValueError as exc:
            raise ValueError(Msg("custom fault is not valid JSON: {error}",
                                 {"error": json_problem(exc)})) from None
        return Fault("custom", text)
    raise ValueError(Msg("unknown fault {text}; one of {kinds} or inline JSON",
                         {"text": repr(text), "kinds": ", ".join(KINDS)}))
