"""Execute the tool calls of one assistant turn.

Every failure becomes a result, never a crash: the model sees a stable,
sanitized ``{"ok": false, "error": {"type", "retryable", "message"}}`` object;
the user keeps the full exception in ``ToolOutcome.detail`` and, for a handler that raised,
its type, message and file:line in ``ToolOutcome.cause`` (shown in the view, ``show``, replay
and the report).

Read-only calls run concurrently in a bounded pool; side-effecting calls run
one at a time in the order the model gave. Results come back in the order of
``tool_calls`` and each carries its own ``tool_call_id``.

An ``mcp`` tool is a ``tools/call`` on its server's client (``ToolSet.mcp``): a result
with ``isError``, a JSON-RPC error, a timeout or a server that died becomes the same
structured error as a local tool's; the call's JSON-RPC exchange stays on the outcome.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentdbg import schemas
from agentdbg.engine.commands import CommandFailed, Processes, run_command, tool_environment
from agentdbg.engine.faults import spoils
from agentdbg.engine.results import ERROR_TYPES, error_content
from agentdbg.messages import call_arguments, call_name, utf8_json
from agentdbg.tool_api import ToolError
from agentdbg.toolspec import ToolSet, ToolSpec, resolve_python_handler

if TYPE_CHECKING:
    from agentdbg.engine.faults import CallOverride



@dataclass
class ToolOutcome:
    call_id: str
    name: str
    arguments: Any              # as the model sent them (normally a string)
    content: str                # the tool message content the model will see
    ok: bool
    error_type: str | None = None
    retryable: bool = False
    detail: str | None = None   # full error for the user; never sent to the model
    cause: str | None = None    # a handler's exception in one line: type, message, file:line
    started: float = 0.0        # seconds since the executor's epoch
    ended: float = 0.0
    truncated_chars: int = 0
    stubbed: bool = False       # a fixture answered, not real code
    injected: bool = False      # a fault the user injected
    note: str | None = None
    mcp: dict | None = None     # an MCP call: {"server", "tool", "exchange", "dropped"}
    unchecked: bool = False     # its arguments were not checked against the schema (the note
                                # says why: over the work budget)
    spoiled: bool = False       # a fault spoiled the result (invalid_json, oversized) rather
                                # than replacing it: not in the transcript (its note says so)

    @property
    def duration_ms(self) -> float:
        return round((self.ended - self.started) * 1000, 3)

    def to_dict(self) -> dict:
        return {
            "tool_call_id": self.call_id, "name": self.name, "arguments": self.arguments,
            "ok": self.ok, "error_type": self.error_type, "retryable": self.retryable,
            "content": self.content, "detail": self.detail, "duration_ms": self.duration_ms,
            "started_ms": round(self.started * 1000, 3), "ended_ms": round(self.ended * 1000, 3),
            "truncated_chars": self.truncated_chars, "stubbed": self.stubbed,
            "injected": self.injected, "note": self.note,
        } | ({"cause": self.cause} if self.cause is not None else {}) \
          | ({"mcp": self.mcp} if self.mcp is not None else {})


class _Failure(Exception):
    """Internal: a failure already shaped for the model."""

    def __init__(self, type: str, message: str, detail: str | None = None,
                 retryable: bool | None = None, cause: str | None = None):
        super().__init__(message)
        self.type, self.message, self.detail, self.cause = type, message, detail, cause
        self.retryable = ERROR_TYPES.get(type, False) if retryable is None else retryable


def _repeated(spec: ToolSpec, raw: str) -> str | None:
    """Arguments that repeat a key (``{"to": "alice@…", "to": "attacker@…"}``): a read-only
    call runs with the last value, as every JSON parser reads it, and says so; a call with
    side effects is refused — its approval, or whoever read the call, may have seen the first."""
    from agentdbg.messages import duplicate_keys

    keys = duplicate_keys(raw)
    if not keys:
        return None
    if spec.side_effects:
        raise _Failure("invalid_arguments", f"arguments repeat the key {keys[0]!r}; a call with "
                       "side effects is not run with one of two values: send each key once")
    return f"arguments repeat the key {keys[0]!r}: the last value was used"


class ToolExecutor:
    def __init__(self, toolset: ToolSet, *, parallel: int | None = None,
                 clock: Callable[[], float] = time.perf_counter, secrets: Iterable[str] = ()):
        self.toolset = toolset
        self.secrets = tuple(secrets)             # values no command tool's environment holds
        self.parallel = parallel or toolset.parallel
        self.clock = clock
        self.epoch = clock()
        self._validators: dict[str, Any] = {}
        self._funcs: dict[str, Callable] = {}
        self.processes = Processes()              # command tools running now
        self._cancel = threading.Event()          # set on Ctrl-C / SIGTERM: checks stop

    # -- public -----------------------------------------------------------
    def run(self, calls: list[dict], approved: Callable[[dict], bool],
            override: Callable[[dict], CallOverride | None] | None = None) -> list[ToolOutcome]:
        """Execute ``calls``; ``approved(call)`` decides approval-needing ones.

        ``override(call)`` may return a ``Fault`` to answer that call without running it.
        """
        faults = [override(c) if override else None for c in calls]
        if self._cancel.is_set():   # a new run is not cancelled (an unset one is as good as new)
            self._cancel = threading.Event()
        if len(calls) == 1:  # nothing to overlap with: no extra thread
            try:
                return [self.run_one(calls[0], approved, faults[0])]
            except KeyboardInterrupt:
                self.kill_running()
                raise
        outcomes: list[ToolOutcome | None] = [None] * len(calls)
        concurrent = [i for i, c in enumerate(calls) if not self._has_side_effects(c)]
        sequential = [i for i in range(len(calls)) if i not in concurrent]
        slots = threading.BoundedSemaphore(self.parallel)

        def work(i: int) -> None:
            with slots:
                outcomes[i] = self.run_one(calls[i], approved, faults[i])

        # daemon threads, not a pool: an interrupted run must not wait for hung tools at exit
        threads = [threading.Thread(target=work, args=(i,), daemon=True,
                                    name=f"agentdbg-tool-{i}") for i in concurrent]
        try:
            for t in threads:
                t.start()
            for i in sequential:
                outcomes[i] = self.run_one(calls[i], approved, faults[i])
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            self.kill_running()
            raise
        return [o for o in outcomes if o is not None]

    def kill_running(self) -> None:
        """Kill every command tool still running, with its children, and cancel every MCP
        call in flight (the server is sent ``notifications/cancelled``), on Ctrl-C / SIGTERM.
        Argument checks still running in the tool threads stop at their next step (their
        calls never run), so they do not hold the interpreter while the run stops."""
        self._cancel.set()
        self.processes.kill_all()
        if self.toolset.mcp is not None:
            self.toolset.mcp.cancel_all()

    def run_one(self, call: dict, approved: Callable[[dict], bool] = lambda c: False,
                fault: CallOverride | None = None) -> ToolOutcome:
        call_id = call.get("id") if isinstance(call, dict) else None
        name = call_name(call) or ""
        raw_args = call_arguments(call)
        start = self.clock() - self.epoch
        # an id is data of any JSON type: the outcome carries it as the text its tool message
        # does (session: str(id)); a missing or empty one as ""
        outcome = ToolOutcome(call_id=call_id if isinstance(call_id, str) else str(call_id) if call_id
                              else "", name=name,
                              arguments=raw_args if isinstance(raw_args, str) else None,
                              content="", ok=False, started=start)
        if fault is not None:  # injected by the user, or replayed: the tool does not run
            outcome.content = fault.content(name, self._sample(call, fault, approved))
            outcome.spoiled = spoils(fault)
            outcome.error_type = fault.error_type
            outcome.ok = fault.error_type is None
            outcome.injected = fault.injected
            outcome.retryable = ERROR_TYPES.get(fault.error_type or "", False)
            outcome.note = fault.note
            outcome.cause = fault.cause
            recorded = fault.duration_ms
            outcome.ended = self.clock() - self.epoch if recorded is None else start + recorded / 1000
            return outcome
        try:
            spec = self._lookup(name)
            args, unchecked = self._parse_arguments(spec, raw_args)
            repeated = _repeated(spec, raw_args)
            if spec.blocked is not None:   # a found tools file not trusted: nothing of it runs
                raise _Failure("denied", spec.blocked)
            if spec.approval == "always" and not approved(call):
                raise _Failure("denied", f"the user did not approve this call of {name!r}")
            result, outcome.stubbed, outcome.note = self._invoke(spec, args, outcome)
            if unchecked is not None:
                outcome.unchecked = True
            outcome.note = "; ".join(filter(None, [
                f"arguments not checked: {unchecked}" if unchecked is not None else None,
                repeated, outcome.note])) or None
            outcome.content, outcome.truncated_chars = self._encode(spec, result)
            outcome.ok = True
        except _Failure as f:
            outcome.error_type, outcome.retryable, outcome.detail = f.type, f.retryable, f.detail
            outcome.cause = f.cause
            outcome.content = error_content(f.type, f.message, f.retryable)
        outcome.ended = self.clock() - self.epoch
        return outcome

    def _sample(self, call: dict, fault: CallOverride, approved: Callable[[dict], bool]) -> str | None:
        """What a fault made from the tool's own result starts from: the real result of a
        read-only tool (run for it), else the call's arguments."""
        if not getattr(fault, "needs_result", False):
            return None
        spec = self.toolset.get(call_name(call) or "")
        if spec is not None and not spec.side_effects:
            real = self.run_one(call, approved)
            if real.ok:
                return real.content
        args = call_arguments(call)
        return args if isinstance(args, str) else None

    # -- steps ------------------------------------------------------------
    def _has_side_effects(self, call: Any) -> bool:
        spec = self.toolset.get(call_name(call) or "")
        return bool(spec and spec.side_effects)

    def _lookup(self, name: str) -> ToolSpec:
        spec = self.toolset.get(name)
        if spec is None:
            allowed = ", ".join(self.toolset.names())
            raise _Failure("unknown_tool", f"unknown tool {name!r}; available tools: {allowed}")
        return spec

    def _parse_arguments(self, spec: ToolSpec, raw: Any) -> tuple[dict, str | None]:
        """The arguments, checked against the schema; and why they were not checked, when
        the schema or this check is over the work budget (``schemas``): they are run
        unchecked, as the model sent them, rather than refused for what was not found."""
        if not isinstance(raw, str):
            raise _Failure("invalid_json", "arguments must be a JSON string")
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise _Failure("invalid_json", f"arguments are not valid JSON: {exc}") from None
        except RecursionError:
            raise _Failure("invalid_json", "arguments are not valid JSON: nested too deeply") from None
        if not isinstance(args, dict):
            raise _Failure("invalid_arguments",
                           f"arguments must be a JSON object, got {type(args).__name__}")
        validator, skipped = self._validator(spec)
        try:
            problems = schemas.problems(validator, args, self._cancel) if validator is not None else []
        except schemas.Uncheckable as exc:
            raise _Failure("invalid_arguments", str(exc)) from None
        except schemas.TooCostly as exc:
            if self._cancel.is_set():   # the run is stopping: this call never runs
                raise _Failure("internal_error", "the call was cancelled before it ran") from None
            return args, str(exc)
        if problems:
            raise _Failure("invalid_arguments", "; ".join(problems))
        return args, skipped

    def _validator(self, spec: ToolSpec) -> tuple[Any, str | None]:
        """The arguments' validator (never retrieves, patterns on RE2), or None and why not:
        the schema is over the work budget; (None, None) when it is not valid (the tools
        loader reports it), so nothing can be checked."""
        if spec.name not in self._validators:
            self._validators[spec.name] = schemas.checkable(spec.parameters)
        return self._validators[spec.name]

    def _invoke(self, spec: ToolSpec, args: dict,
                outcome: ToolOutcome) -> tuple[Any, bool, str | None]:
        if spec.handler_kind == "mcp":
            return self._call_mcp(spec, args, outcome), False, None
        if spec.handler_kind == "none":
            raise _Failure("no_handler", f"the tool {spec.name!r} has no implementation here",
                           detail=f"{spec.name!r} comes from a tools JSON without a handler; give "
                                  "it one in a tools.yaml (agentdbg init --from FILE writes them)")
        if spec.handler_kind == "recorded":
            raise _Failure("internal_error", f"no recorded result for this call of {spec.name!r}",
                           detail="replay: the recording has no tool event for this call")
        if spec.handler_kind == "fixture":
            return copy.deepcopy(spec.handler), True, None
        if spec.handler_kind == "command":
            return _run_command(spec, args, self.processes, self.secrets), False, None
        func = self._funcs.get(spec.name) or resolve_python_handler(spec)
        self._funcs[spec.name] = func
        return _run_python(spec, func, args)

    def _call_mcp(self, spec: ToolSpec, args: dict, outcome: ToolOutcome) -> Any:
        binding = spec.handler
        servers = self.toolset.mcp
        client = servers.client(binding.server) if servers is not None else None
        if client is None:
            raise _Failure("internal_error", f"the tool {spec.name!r} is not available",
                           detail=f"MCP server {binding.server!r} is not running")
        result = client.call_tool(binding.remote_name, args, spec.timeout)
        outcome.mcp = {"server": binding.server, "tool": binding.remote_name,
                       "exchange": result.exchange, "dropped": result.exchange_dropped}
        if not result.ok:
            raise _Failure(result.error_type or "internal_error", result.message or "",
                           detail=result.detail, retryable=result.retryable)
        return result.value

    def _encode(self, spec: ToolSpec, result: Any) -> tuple[str, int]:
        if result is None or result == "":
            raise _Failure("empty_result", f"the tool {spec.name!r} returned no data; "
                           "treat this as a failure, not as an answer")
        if isinstance(result, str):
            text = result
        else:
            try:
                text = json.dumps(result, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise _Failure("internal_error", f"the tool {spec.name!r} returned data that "
                               "cannot be encoded as JSON",
                               detail=f"{type(exc).__name__}: {exc}") from None
        return truncate(text, spec.max_result_chars)


def truncate(text: str, limit: int) -> tuple[str, int]:
    """Cut ``text`` to ``limit`` characters with an explicit marker; returns (text, cut)."""
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    marker = (f"\n…[truncated by agentdbg: {cut} of {len(text)} characters cut; "
              f"max_result_chars={limit}]")
    return text[:limit] + marker, cut


def _run_python(spec: ToolSpec, func: Callable, args: dict) -> tuple[Any, bool, str | None]:
    box: dict[str, Any] = {}
    abandoned = threading.Event()

    def target() -> None:
        try:
            if inspect.iscoroutinefunction(func):
                import asyncio  # only for an async handler: a replay never loads it

                box["value"] = asyncio.run(func(**args))
            else:
                box["value"] = func(**args)
        except BaseException as exc:  # noqa: BLE001 - everything becomes a result
            box["error"] = exc
            box["tb"] = traceback.format_exc()
        if abandoned.is_set():
            box["late"] = True

    worker = threading.Thread(target=target, name=f"agentdbg-{spec.name}", daemon=True)
    worker.start()
    worker.join(spec.timeout)
    if worker.is_alive():
        abandoned.set()
        raise _Failure("timeout", f"the tool {spec.name!r} did not answer within {spec.timeout:g}s",
                       detail=f"python handler {spec.handler} still running after "
                              f"{spec.timeout:g}s; abandoned, its late result will be discarded")
    if "error" in box:
        _raise_from(spec, box["error"], box.get("tb"), func)
    return box.get("value"), False, None


def _raise_from(spec: ToolSpec, exc: BaseException, tb: str | None, func: Callable) -> None:
    if isinstance(exc, ToolError):
        raise _Failure(exc.type, exc.message, retryable=exc.retryable, detail=tb)
    cause = handler_cause(exc, func, spec)
    if isinstance(exc, TimeoutError):
        raise _Failure("timeout", f"the tool {spec.name!r} timed out", detail=tb, cause=cause)
    raise _Failure("internal_error", f"the tool {spec.name!r} failed with an internal error",
                   detail=tb or repr(exc), cause=cause)


def handler_cause(exc: BaseException, func: Callable, spec: ToolSpec) -> str:
    """The exception in one line for the developer: ``TypeError: … (weather.py:12)``, at the
    deepest frame in the handler's own file, else where the handler is defined (a call its
    signature could not take fails before its first line)."""
    code = getattr(inspect.unwrap(func), "__code__", None)
    source = code.co_filename if code is not None else None
    where = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == source:
            where = (source, line)
    if where is None and code is not None:
        where = (code.co_filename, code.co_firstlineno)
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if len(text) > 300:
        text = text[:299] + "…"
    return f"{text} ({_shown_path(where[0], spec)}:{where[1]})" if where else text


def _shown_path(filename: str, spec: ToolSpec) -> str:
    """A handler's file relative to the tools file's folder when it is inside it."""
    try:
        rel = os.path.relpath(filename, spec.base_dir)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def _command_argv(spec: ToolSpec) -> list[str]:
    argv = list(spec.handler)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable  # the interpreter running agentdbg
    return argv


def _run_command(spec: ToolSpec, args: dict, processes: Processes, secrets: tuple = ()) -> Any:
    argv = _command_argv(spec)
    payload = utf8_json(args).encode("utf-8")
    try:
        status, stdout, stderr = run_command(argv, payload, cwd=str(spec.base_dir),
                                             timeout=spec.timeout, env=tool_environment(spec.env, secrets),
                                             processes=processes)
    except CommandFailed as exc:
        if exc.kind == "timeout":
            raise _Failure("timeout", f"the tool {spec.name!r} did not answer within "
                           f"{spec.timeout:g}s", detail=exc.detail) from None
        if exc.kind == "output":
            raise _Failure("internal_error", f"the tool {spec.name!r} printed too much output",
                           detail=exc.detail) from None
        raise _Failure("internal_error", f"the tool {spec.name!r} could not be started",
                       detail=exc.detail) from None
    if status != 0:
        raise _Failure("internal_error", f"the tool {spec.name!r} failed with an internal error",
                       detail=f"command {argv!r} exited with status {status}; stderr: {stderr}")
    out = stdout.decode("utf-8", "replace").strip()
    if not out:
        return None
    try:
        value = json.loads(out)
    except RecursionError:
        raise _Failure("internal_error", f"the tool {spec.name!r} printed JSON nested too deeply",
                       detail=f"command {argv!r}: stdout starts {out[:200]!r}") from None
    except ValueError as exc:
        raise _Failure("internal_error", f"the tool {spec.name!r} printed output that is not JSON",
                       detail=f"command {argv!r}: {exc}; stdout starts {out[:200]!r}") from None
    if isinstance(value, dict) and value.get("ok") is False and isinstance(value.get("error"), dict):
        err = value["error"]
        raise _Failure(str(err.get("type") or "internal_error"), str(err.get("message") or ""),
                       retryable=bool(err.get("retryable", False)))
    return value
