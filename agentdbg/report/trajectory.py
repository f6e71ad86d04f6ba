"""Trajectory assertions: what a run did, checked in your own tests.

    from agentdbg.report.trajectory import (assert_tool_used, assert_tool_sequence,
                                            assert_tool_args, assert_stop_reason)

    def test_order_lookup(tmp_path):
        run = "transcripts/order.jsonl"            # a path, a loaded Transcript, or a Trajectory
        assert_tool_used(run, "query_order")
        assert_tool_sequence(run, ["query_order", "query_logistics"])   # others may come between
        assert_tool_args(run, "query_order", {"order_id": "ORD-2026-001"})
        assert_tool_not_used(run, "send_email")
        assert_max_turns(run, 3)
        assert_no_findings(run, above="warning")   # warnings allowed, no error
        assert_stop_reason(run, "completed")

A failure raises ``TrajectoryError`` (an ``AssertionError``) whose message says what was
expected, what the run did, and shows the messages concerned as the terminal view
renders them (80 columns, no colour).

"Used" means the model asked for the call (it appears in a reply's ``tool_calls``),
whether or not it then ran; ``assert_tool_args`` can require that it ran without error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Union

from agentdbg.report import adapter
from agentdbg.report.timeline import SEVERITY_ORDER, Call, Run, read_run
from agentdbg.transcript.events import JSON, JSONObject
from agentdbg.transcript.reader import Transcript

#: what the assertions take: a path, what ``agentdbg runs`` shows (a #, a name, ``last``), a
#: loaded ``Transcript`` or ``Run``, or a ``Trajectory``
Source = Union[str, "os.PathLike[str]", Transcript, Run, "Trajectory"]

VIEW_WIDTH = 80
MAX_SHOWN = 12   # messages shown in a failure at most


class TrajectoryError(AssertionError):
    """A trajectory assertion failed; ``str()`` includes the relevant part of the view."""

    def __init__(self, message: str, view: str = ""):
        super().__init__(message + (f"\n\n{view}" if view else ""))
        self.summary = message
        self.view = view


class Trajectory:
    """A run as seen by the assertions (load once, assert many times)."""

    def __init__(self, run: Run):
        self.run = run
        self.calls: list[Call] = run.calls()

    @classmethod
    def load(cls, source: Source, *, profile: str = "openai") -> Trajectory:
        """A path, what ``agentdbg runs`` shows (a #, a name, ``last``), a loaded
        ``Transcript`` or ``Run``, or a Trajectory (returned as is)."""
        if isinstance(source, Trajectory):
            return source
        if isinstance(source, (str, os.PathLike)):
            from agentdbg.transcript.runs import resolve_run

            source = resolve_run(source)
        return cls(read_run(source, profile=profile))

    @property
    def tool_names(self) -> list[str]:
        return [c.name or "?" for c in self.calls]

    # -- the view of a failure ------------------------------------------------------------------
    def view_of(self, calls: Iterable[Call] = (), indices: Iterable[tuple[int, int]] = (),
                findings: Sequence[Any] = ()) -> str:
        """The messages concerned (by call or by (history, index)), rendered as text."""
        wanted: dict[int, set[int]] = {}
        for c in calls:
            if c.message_index is not None:
                wanted.setdefault(c.history, set()).add(c.message_index)
            if c.result_index is not None:
                wanted.setdefault(c.history, set()).add(c.result_index)
        for h, i in indices:
            wanted.setdefault(h, set()).add(i)
        parts = []
        for h_no in sorted(wanted):
            history = self.run.histories[h_no]
            shown = sorted(wanted[h_no])[:MAX_SHOWN]
            more = len(wanted[h_no]) - len(shown)
            own = [f for f in (findings or history.findings)]
            text = adapter.render_view_text(history.messages, findings=own, indices=shown,
                                            width=VIEW_WIDTH)
            head = f"messages{f' (history {h_no + 1})' if len(self.run.histories) > 1 else ''}:"
            parts.append(head + "\n" + text + (f"… and {more} more message(s)\n" if more else ""))
        return "".join(parts).rstrip()

    def _fail(self, message: str, view: str = "") -> TrajectoryError:
        return TrajectoryError(f"{self.run.path.name}: {adapter.safe(message)}", view)

    def _all_calls_view(self) -> str:
        return self.view_of(self.calls) or self._tail_view()

    def _tail_view(self, n: int = 4) -> str:
        if not self.run.histories:
            return ""
        h_no = len(self.run.histories) - 1
        count = len(self.run.histories[h_no].messages)
        return self.view_of(indices=[(h_no, i) for i in range(max(0, count - n), count)])

    # -- assertions -----------------------------------------------------------------------------
    def tool_used(self, name: str, *, times: int | None = None, at_least: int = 1) -> list[Call]:
        __tracebackhide__ = True   # pytest shows the caller's line
        found = [c for c in self.calls if c.name == name]
        if times is not None and len(found) != times:
            raise self._fail(f"expected {name} to be called {times} time(s), it was called "
                             f"{len(found)} time(s); calls: {_names(self.calls)}", self._all_calls_view())
        if times is None and len(found) < at_least:
            raise self._fail(f"expected {name} to be called"
                             f"{'' if at_least == 1 else f' at least {at_least} times'}; "
                             f"calls: {_names(self.calls)}", self._all_calls_view())
        return found

    def tool_not_used(self, name: str) -> None:
        __tracebackhide__ = True   # pytest shows the caller's line
        found = [c for c in self.calls if c.name == name]
        if found:
            raise self._fail(f"expected {name} not to be called; it was called {len(found)} "
                             f"time(s)", self.view_of(found))

    def tool_sequence(self, names: Sequence[str], *, others_between: bool = True) -> list[Call]:
        """``names`` called in this order; with ``others_between=False``, one after another."""
        __tracebackhide__ = True   # pytest shows the caller's line
        if not names:
            return []
        got = self.calls
        if others_between:
            matched, k = [], 0
            for c in got:
                if k < len(names) and c.name == names[k]:
                    matched.append(c)
                    k += 1
            if k == len(names):
                return matched
            why = (f"found {_names(matched) or 'none of it'}, then no {names[k]} after that")
        else:
            for start in range(len(got) - len(names) + 1):
                window = got[start:start + len(names)]
                if [c.name for c in window] == list(names):
                    return window
            why = "they never come one right after another"
        raise self._fail(f"expected the calls {' → '.join(names)} in this order"
                         f"{'' if others_between else ' with nothing between'}; {why}; calls: "
                         f"{_names(got)}", self._all_calls_view())

    def tool_args(self, name: str, expected: JSON = None, *, schema: JSONObject | None = None,
                  exact: bool = False, which: str = "any", succeeded: bool = False) -> list[Call]:
        """Calls of ``name`` whose arguments match ``expected`` (a subset unless ``exact``)
        and/or validate against a JSON ``schema``. ``which``: any | all | first | last."""
        __tracebackhide__ = True   # pytest shows the caller's line
        if which not in ("any", "all", "first", "last"):
            raise ValueError("which must be 'any', 'all', 'first' or 'last'")
        calls = self.tool_used(name)
        chosen = {"first": calls[:1], "last": calls[-1:]}.get(which, calls)
        problems = [(c, self._arg_problem(c, expected, schema, exact, succeeded)) for c in chosen]
        bad = [(c, p) for c, p in problems if p]
        good = [c for c, p in problems if not p]
        if (which == "any" and good) or (which != "any" and not bad):
            return good
        lines = "; ".join(f"{c.id or '?'}: {p}" for c, p in bad[:5])
        want = "every call" if which == "all" else f"the {which} call" if which != "any" else "a call"
        raise self._fail(f"expected {want} of {name} to have matching arguments; {lines}",
                         self.view_of([c for c, _ in bad]))

    def _arg_problem(self, c: Call, expected: Any, schema: dict | None, exact: bool,
                     succeeded: bool) -> str | None:
        args = c.parsed_arguments
        if hasattr(args, "text"):
            return f"arguments are not valid JSON: {adapter.safe(args.text)[:80]}"
        if expected is not None:
            missing = _mismatch(expected, args, exact)
            if missing:
                return missing
        if schema is not None:
            error = _schema_error(args, schema)
            if error:
                return f"arguments fail the schema: {error}"
        if succeeded and c.ok is not True:
            return f"the call did not succeed ({c.error_type or 'no result'})"
        return None

    def max_turns(self, n: int) -> None:
        __tracebackhide__ = True   # pytest shows the caller's line
        turns = len(self.run.turns)
        if turns > n:
            raise self._fail(f"expected at most {n} turn(s) (model requests); the run made {turns}",
                             self._tail_view())

    def max_tool_calls(self, n: int) -> None:
        __tracebackhide__ = True   # pytest shows the caller's line
        if len(self.calls) > n:
            raise self._fail(f"expected at most {n} tool call(s); the model asked for "
                             f"{len(self.calls)}: {_names(self.calls)}", self.view_of(self.calls[n:]))

    def no_findings(self, *, above: str | None = None) -> None:
        """No checker finding; with ``above="warning"``, warnings are allowed (errors fail)."""
        __tracebackhide__ = True   # pytest shows the caller's line
        if above is not None and above not in SEVERITY_ORDER:
            raise ValueError(f"above must be one of {', '.join(SEVERITY_ORDER)} or None")
        limit = SEVERITY_ORDER.get(above, 0) if above else 0
        bad = [f for f in self.run.findings() if SEVERITY_ORDER.get(f.severity, 2) > limit]
        if not bad:
            return
        where = []
        for h_no, h in enumerate(self.run.histories):
            for f in h.findings:
                if f in bad and isinstance(f.index, int):
                    where.append((h_no, min(f.index, len(h.messages) - 1)))
        text = "; ".join(f"{f.severity} {f.rule} at {_where(f)}" for f in bad[:8])
        raise self._fail(f"expected no finding{' above ' + above if above else ''}; found {len(bad)}: "
                         f"{text}", self.view_of(indices=where, findings=bad))

    def stop_reason(self, reason: str) -> None:
        __tracebackhide__ = True   # pytest shows the caller's line
        got = self.run.stop_reason
        if got != reason:
            detail = f" ({self.run.stop_detail})" if self.run.stop_detail else ""
            raise self._fail(f"expected the run to stop with {reason}; it stopped with {got}{detail}",
                             self._tail_view())


def _where(f: Any) -> str:
    return f"[{f.index}]" if f.index is not None else "request"


def _names(calls: Sequence[Call]) -> str:
    return " → ".join(c.name or "?" for c in calls) or "(none)"


def _mismatch(expected: Any, actual: Any, exact: bool, path: str = "$") -> str | None:
    """Why ``actual`` does not match ``expected`` (None: it does)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if exact and set(actual) - set(expected):
            return f"{path} has unexpected keys {sorted(set(actual) - set(expected))}"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}.{key} is missing"
            why = _mismatch(value, actual[key], exact, f"{path}.{key}")
            if why:
                return why
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path} has {len(actual)} item(s), expected {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            why = _mismatch(e, a, exact, f"{path}[{i}]")
            if why:
                return why
        return None
    if _same_scalar(expected, actual):
        return None
    return f"{path} is {_short(actual)}, expected {_short(expected)}"


def _same_scalar(expected: Any, actual: Any) -> bool:
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and \
            not isinstance(expected, bool) and not isinstance(actual, bool):
        return expected == actual   # 1 and 1.0 are the same JSON number
    return type(expected) is type(actual) and expected == actual


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=str)
    return adapter.safe(text if len(text) <= 60 else text[:60] + "…")


def _schema_error(value: Any, schema: dict) -> str | None:
    """The best-matching way ``value`` fails ``schema``, checked as the executor checks
    arguments: no reference is ever retrieved and patterns match on RE2."""
    from jsonschema.exceptions import best_match

    from agentdbg import schemas

    costly = schemas.over_budget(schema)
    if costly is not None:
        raise ValueError(f"the schema given to tool_args cannot be checked: {costly}")
    bad = schemas.schema_error(schema)
    if bad is not None:
        where = "/".join(str(p) for p in bad[0]) or "(root)"
        raise ValueError(f"the schema given to tool_args is not a valid JSON Schema at {where}: {bad[1]}")
    try:
        error = best_match(schemas.errors(schemas.validator(schema), value))
    except (schemas.Uncheckable, RecursionError):
        return "$: nested too deeply to check against the schema"
    except schemas.TooCostly as exc:
        raise ValueError(f"tool_args: {exc}") from None
    if error is None:
        return None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where}: {adapter.safe(error.message)[:120]}"


# -- functions on any transcript (path, loaded Transcript, Run or Trajectory) ------------------

def assert_tool_used(source: Source, name: str, *, times: int | None = None, at_least: int = 1) -> list[Call]:
    __tracebackhide__ = True   # pytest shows the caller's line
    return Trajectory.load(source).tool_used(name, times=times, at_least=at_least)


def assert_tool_not_used(source: Source, name: str) -> None:
    __tracebackhide__ = True   # pytest shows the caller's line
    Trajectory.load(source).tool_not_used(name)


def assert_tool_sequence(source: Source, names: Sequence[str], *, others_between: bool = True) -> list[Call]:
    __tracebackhide__ = True   # pytest shows the caller's line
    return Trajectory.load(source).tool_sequence(names, others_between=others_between)


def assert_tool_args(source: Source, name: str, expected: JSON = None, *,
                     schema: JSONObject | None = None,
                     exact: bool = False, which: str = "any", succeeded: bool = False) -> list[Call]:
    __tracebackhide__ = True   # pytest shows the caller's line
    return Trajectory.load(source).tool_args(name, expected, schema=schema, exact=exact,
                                             which=which, succeeded=succeeded)


def assert_max_turns(source: Source, n: int) -> None:
    __tracebackhide__ = True   # pytest shows the caller's line
    Trajectory.load(source).max_turns(n)


def assert_max_tool_calls(source: Source, n: int) -> None:
    __tracebackhide__ = True   # pytest shows the caller's line
    Trajectory.load(source).max_tool_calls(n)


def assert_no_findings(source: Source, *, above: str | None = None, profile: str = "openai") -> None:
    __tracebackhide__ = True   # pytest shows the caller's line
    Trajectory.load(source, profile=profile).no_findings(above=above)


def assert_stop_reason(source: Source, reason: str) -> None:
    __tracebackhide__ = True   # pytest shows the caller's line
    Trajectory.load(source).stop_reason(reason)


__all__ = [
    "Trajectory",
    "TrajectoryError",
    "assert_max_tool_calls",
    "assert_max_turns",
    "assert_no_findings",
    "assert_stop_reason",
    "assert_tool_args",
    "assert_tool_not_used",
    "assert_tool_sequence",
    "assert_tool_used",
]
