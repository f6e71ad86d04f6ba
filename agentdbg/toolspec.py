"""tools.yaml -> validated ``ToolSpec`` objects and the MCP servers it names.

Errors name the file, line and column (from the YAML node marks), the tool and
the field. Handlers are resolved only from this file, never from a name the
model produced. ``mcp_servers:`` entries become ``McpServerConfig``s here; their
tools join the set (as ``mcp`` handlers) only once the servers are started
(``agentdbg.mcp.servers``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdbg.errors import ConfigError, where
from agentdbg.i18n import N_, Msg
from agentdbg.messages import TOOL_NAME_RE
from agentdbg.yamlfile import parse as parse_yaml
from agentdbg.yamlfile import read_text

if TYPE_CHECKING:   # loaded where a tools file names servers (a replay reads none)
    from agentdbg.mcp.config import McpServerConfig

MAX_FILE_BYTES = 5_000_000  # a tools file larger than this is a mistake, not a tools file
SUPPORTED_VERSIONS = (1,)
POLICY_DEFAULTS = {
    "side_effects": False,
    "approval": "never",
    "timeout": 10.0,
    "max_result_chars": 4000,
}
TOOL_KEYS = {"name", "description", "parameters", "handler", "strict", "env", *POLICY_DEFAULTS}
HANDLER_KINDS = ("python", "fixture", "command")
TOP_KEYS = ("version", "defaults", "tools", "mcp_servers")


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict
    handler_kind: str            # python | fixture | command | mcp | none (tools JSON) | recorded (replay)
    handler: Any                 # "pkg.mod:func" | JSON value | [argv...] | McpToolDef
    side_effects: bool = False
    approval: str = "never"      # never | always
    timeout: float = 10.0
    max_result_chars: int = 4000
    strict: bool = False
    base_dir: Path = field(default_factory=Path.cwd)
    line: int | None = None      # where the tool starts in its file (1-based)
    env: tuple[str, ...] = ()    # command tools: variables passed although they look secret
    blocked: str | None = None   # why it may not run (a found tools file not trusted: ``trust``)

    @property
    def server(self) -> str | None:
        """The MCP server this tool comes from (None: a local tool)."""
        return self.handler.server if self.handler_kind == "mcp" else None

    def openai_tool(self) -> dict:
        """The definition as sent in the request's ``tools`` array."""
        fn: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.strict:
            fn["strict"] = True
        return {"type": "function", "function": fn}


@dataclass
class ToolSet:
    path: Path
    tools: list[ToolSpec]
    parallel: int = 8                   # read-only calls of one turn running at once
    problems: list[tuple[Any, int | None, str]] = field(default_factory=list)  # lenient load
    servers: list[McpServerConfig] = field(default_factory=list)  # MCP servers to start
    max_result_chars: int = 4000        # the file's default, for MCP tools
    mcp: Any = None                     # the started servers (``agentdbg.mcp.servers.McpServers``)
    trust: str = "named"                # named | sample | trusted | harmless | untrusted (``trust``)
    skipped: list[Any] = field(default_factory=list)   # untrusted: what was skipped (i18n.Msg)

    def get(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def openai_tools(self) -> list[dict]:
        return [t.openai_tool() for t in self.tools]

    @classmethod
    def from_openai(cls, tools: list, path: str = "<recording>") -> ToolSet:
        """Definitions only (from a recording): calls get their results from the recording."""
        specs = []
        for t in tools or []:
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                specs.append(ToolSpec(
                    name=fn["name"], description=str(fn.get("description") or ""),
                    parameters=fn.get("parameters") or {"type": "object", "properties": {}},
                    handler_kind="recorded", handler=None,
                    strict=bool(fn.get("strict"))))
        return cls(path=Path(path), tools=specs, trust="recording")


def start_servers(toolset: ToolSet, *, lenient: bool = False,
                  environ: Mapping[str, str] | None = None) -> Any:
    """Start the MCP servers ``toolset`` names and add their tools after the local ones, as
    ``mcp`` handlers; returns the started ``McpServers`` (also ``toolset.mcp``), None without any."""
    if not toolset.servers:
        return None
    from agentdbg.mcp.servers import McpServers

    taken = {t.name: f"the local tool {t.name!r} ({toolset.path})" for t in toolset.tools}
    servers = McpServers(toolset.servers, environ=environ).start(taken, lenient=lenient)
    for started in servers.started.values():
        cfg = started.client.config
        toolset.tools.extend(
            ToolSpec(name=d.name, description=d.description, parameters=d.parameters,
                     handler_kind="mcp", handler=d, side_effects=d.side_effects, approval=d.approval,
                     timeout=cfg.timeout, max_result_chars=toolset.max_result_chars,
                     base_dir=cfg.base_dir or Path.cwd(), line=started.line)
            for d in started.tools)
    toolset.mcp = servers
    return servers


@contextmanager
def running(toolset: ToolSet, **kw: Any) -> Iterator[ToolSet]:
    """``toolset`` with its MCP servers started, stopped on leaving (e.g. ``assert_replays``)."""
    servers = start_servers(toolset, **kw)
    try:
        yield toolset
    finally:
        if servers is not None:
            servers.close()


def bundled_tools_path() -> Path:
    """The bundled sample, the one place that names it: ``tools.yaml`` + ``sample_tools/`` at the
    root of a source checkout, or the copy a build put inside the package with the same layout
    (``agentdbg/_sample/``, see setup.py)."""
    installed = Path(__file__).with_name("_sample") / "tools.yaml"
    return installed if installed.is_file() else Path(__file__).resolve().parent.parent / "tools.yaml"


def default_tools_path() -> Path:
    """``./tools.yaml`` when present, else the bundled sample."""
    local = Path("tools.yaml")
    return local if local.is_file() else bundled_tools_path()


class _Doc:
    """The parsed YAML plus its node tree, to turn a data path into line:col."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lenient = False
        self.problems: list[tuple[Any, int | None, str]] = []   # (str or Msg, line, text)
        self.data, self.node = parse_yaml(path, text)

    def _node_at(self, keys: tuple) -> Any:
        import yaml  # loaded with a tools file only (a replay of a transcript reads none)

        node = self.node
        for key in keys:
            if isinstance(node, yaml.MappingNode):
                nxt = next((v for k, v in node.value if k.value == key), None)
                if nxt is None:
                    # point at the mapping itself when the key is missing
                    return node
                node = nxt
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
                if key >= len(node.value):
                    return node
                node = node.value[key]
            else:
                return node
        return node

    def error(self, keys: tuple, message: object) -> ConfigError:
        """``FILE:LINE:COL: message`` (``message`` a ``Msg``: shown in the chosen language)."""
        node = self._node_at(keys)
        at = where(self.path, None, None) if node is None else \
            where(self.path, node.start_mark.line + 1, node.start_mark.column + 1)
        return ConfigError(Msg(N_("{where}: {problem}"), {"where": at, "problem": message}))

    def soft(self, keys: tuple, message: object) -> None:
        """An error the linter reports and the loader raises."""
        if not self.lenient:
            raise self.error(keys, message)
        self.problems.append((message, self.line_of(keys), self.error(keys, message).message))

    def line_of(self, keys: tuple) -> int | None:
        node = self._node_at(keys)
        return node.start_mark.line + 1 if node is not None else None


def load_tools(path: str | os.PathLike | None = None, *, resolve: bool = True,
               lenient: bool = False) -> ToolSet:
    """Load and validate a tools file. ``resolve`` imports python handlers now.

    ``lenient`` (for the linter): a bad name, a duplicate name or an invalid
    parameters schema is recorded in ``ToolSet.problems`` instead of raised.
    """
    p = Path(path) if path is not None else default_tools_path()
    text = read_text(p, "tools file")
    doc = _Doc(p, text)
    doc.lenient = lenient
    toolset = _parse(doc)
    toolset.problems = doc.problems
    if resolve:
        for i, spec in enumerate(toolset.tools):
            if spec.handler_kind == "python":
                try:
                    resolve_python_handler(spec)
                except ConfigError as exc:
                    raise doc.error(("tools", i, "handler"), exc.shown) from None
    return toolset


def _parse(doc: _Doc) -> ToolSet:
    data = doc.data
    if _is_definitions(data):
        return _parse_definitions(doc, data)
    if not isinstance(data, dict):
        raise doc.error((), Msg(N_("expected a mapping with 'version' and 'tools'")))
    version = data.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise doc.error(("version",), Msg(N_("unsupported version {version}; expected version: 1"),
                                          {"version": repr(version)}))
    unknown = set(data) - set(TOP_KEYS)
    if unknown:
        key = sorted(map(str, unknown))[0]
        raise doc.error((key,), Msg(N_("unknown top-level key {key} (expected {keys})"),
                                    {"key": repr(key), "keys": ", ".join(TOP_KEYS)}))
    defaults = dict(POLICY_DEFAULTS)
    raw_defaults = data.get("defaults") or {}
    if not isinstance(raw_defaults, dict):
        raise doc.error(("defaults",), Msg(N_("'defaults' must be a mapping")))
    raw_defaults = dict(raw_defaults)
    parallel = raw_defaults.pop("parallel", 8)
    if not isinstance(parallel, int) or isinstance(parallel, bool) or parallel < 1:
        raise doc.error(("defaults", "parallel"), Msg(N_("defaults.parallel must be a positive "
                                                         "integer")))
    for key, value in raw_defaults.items():
        if key not in POLICY_DEFAULTS:
            raise doc.error(("defaults", key), Msg(N_("unknown key {key} in defaults"),
                                                   {"key": repr(key)}))
        _check_policy(doc, ("defaults", key), "defaults", key, value)
        defaults[key] = value
    servers = _parse_servers(doc, data.get("mcp_servers"))
    tools = data.get("tools")
    if tools is None and servers:  # `tools:` may be left out (or empty) next to MCP servers
        tools = []
    if not isinstance(tools, list) or not (tools or servers):
        raise doc.error(("tools",), Msg(N_("'tools' must be a non-empty list (or name MCP "
                                           "servers under 'mcp_servers')")))
    specs: list[ToolSpec] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(tools):
        spec = _parse_tool(doc, i, raw, defaults)
        if spec.name in seen:
            doc.soft(("tools", i, "name"), Msg(N_("{who}: duplicate name (first defined as "
                                                  "tools[{first}])"),
                                               {"who": _tool(spec.name), "first": seen[spec.name]}))
        seen[spec.name] = i
        specs.append(spec)
    return ToolSet(path=doc.path, tools=specs, parallel=parallel, servers=servers,
                   max_result_chars=int(defaults["max_result_chars"]))  # type: ignore[call-overload]


def _is_definitions(data: Any) -> bool:
    """A tools JSON: a list of tool objects, or ``{"tools": [...]}`` with no ``version``."""
    if isinstance(data, dict) and "version" not in data and isinstance(data.get("tools"), list):
        data = data["tools"]
    elif not isinstance(data, list):
        return False
    return bool(data) and all(isinstance(t, dict) and ("function" in t or "type" in t) for t in data)


def _parse_definitions(doc: _Doc, data: Any) -> ToolSet:
    """A tools JSON as apps already keep it: an OpenAI ``tools`` array (or ``{"tools": [...]}``)
    of ``{"type": "function", "function": {...}}`` (or the Responses API's flat form). Its tools
    are listed, linted and checked like any other; having no handler, a call of one is answered
    with a ``no_handler`` error result (``agentdbg init --from FILE`` writes handlers for them)."""
    items, root = (data, ()) if isinstance(data, list) else (data["tools"], ("tools",))
    if not items:
        raise doc.error(root, Msg(N_("the tools array is empty")))
    specs: list[ToolSpec] = []
    for i, raw in enumerate(items):
        at = (*root, i)
        fn = raw.get("function", raw) if isinstance(raw, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise doc.error(at, Msg(N_("tools[{i}] must be a function tool: {shape}"), {
                "i": i, "shape": '{"type": "function", "function": {"name": ..., "parameters": ...}}'}))
        keys = (*at, "function") if fn is not raw else at
        who = _tool(fn["name"])
        if not TOOL_NAME_RE.match(fn["name"]):
            doc.soft((*keys, "name"), _name_must_match(who))
        if any(s.name == fn["name"] for s in specs):
            doc.soft((*keys, "name"), Msg(N_("{who}: duplicate name"), {"who": who}))
        params = fn.get("parameters", {"type": "object", "properties": {}})
        _check_parameters(doc, (*keys, "parameters"), who, params)
        specs.append(ToolSpec(
            name=fn["name"], description=str(fn.get("description") or ""), parameters=params,
            handler_kind="none", handler=None, strict=fn.get("strict") is True,
            base_dir=doc.path.resolve().parent, line=doc.line_of(at)))
    return ToolSet(path=doc.path, tools=specs)


def _parse_servers(doc: _Doc, raw: Any) -> list[McpServerConfig]:
    """``mcp_servers:``: each server remembers where it is defined (``tools.yaml:12``)."""
    if raw is None:
        return []
    from agentdbg.mcp.config import parse_server_configs

    configs = parse_server_configs(raw, base_dir=doc.path.resolve().parent, source=str(doc.path),
                                   error=lambda keys, message: doc.error(("mcp_servers", *keys), message))
    return [replace(c, source=f"{doc.path}:{doc.line_of(('mcp_servers', i))}")
            for i, c in enumerate(configs)]


def _check_policy(doc: _Doc, keys: tuple, who: object, key: str, value: Any) -> None:
    ok = {
        "side_effects": isinstance(value, bool),
        "approval": value in ("never", "always"),
        "timeout": isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0,
        "max_result_chars": isinstance(value, int) and not isinstance(value, bool) and value >= 100,
    }[key]
    if not ok:
        expected = {
            "side_effects": N_("true or false"),
            "approval": N_("'never' or 'always'"),
            "timeout": N_("a positive number of seconds"),
            "max_result_chars": N_("an integer >= 100"),
        }[key]
        raise doc.error(keys, Msg(N_("{who}: field '{key}' must be {expected}, got {value}"),
                                  {"who": who, "key": key, "expected": Msg(expected),
                                   "value": repr(value)}))


def _parse_tool(doc: _Doc, i: int, raw: Any, defaults: dict) -> ToolSpec:
    at = ("tools", i)
    if not isinstance(raw, dict):
        raise doc.error(at, Msg(N_("tools[{i}] must be a mapping"), {"i": i}))
    name = raw.get("name")
    who: object = _tool(name) if isinstance(name, str) else f"tools[{i}]"
    if not isinstance(name, str) or not name:
        raise doc.error(at + ("name",), _must_be(who, "name", N_("a non-empty string")))
    if not TOOL_NAME_RE.match(name):
        doc.soft(at + ("name",), _name_must_match(who))
    for key in raw:
        if key not in TOOL_KEYS:
            raise doc.error(at + (key,), Msg(N_("{who}: unknown field {key}"),
                                             {"who": who, "key": repr(key)}))
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise doc.error(at + ("description",), _must_be(who, "description", N_("a non-empty string")))
    params = raw.get("parameters", {"type": "object", "properties": {}})
    _check_parameters(doc, at + ("parameters",), who, params)
    _unfold_descriptions(doc, at + ("parameters",), params)
    kind, handler = _parse_handler(doc, at + ("handler",), who, raw.get("handler"))
    policy = dict(defaults)
    for key in POLICY_DEFAULTS:
        if key in raw:
            _check_policy(doc, at + (key,), who, key, raw[key])
            policy[key] = raw[key]
    strict = raw.get("strict", False)
    if not isinstance(strict, bool):
        raise doc.error(at + ("strict",), _must_be(who, "strict", N_("true or false")))
    env = raw.get("env", [])
    if not (isinstance(env, list) and all(isinstance(v, str) and v for v in env)):
        raise doc.error(at + ("env",), _must_be(who, "env", N_(
            "a list of environment variable names passed to the command")))
    return ToolSpec(
        name=name, description=_unfold_cjk(doc._node_at(at + ("description",)), description).strip(),
        parameters=params,
        handler_kind=kind, handler=handler, strict=strict,
        side_effects=policy["side_effects"], approval=policy["approval"],
        timeout=float(policy["timeout"]), max_result_chars=policy["max_result_chars"],
        base_dir=doc.path.resolve().parent, line=doc.line_of(at), env=tuple(env),
    )


#: ideographs, kana, CJK and fullwidth punctuation: text written without spaces between words
#: (Hangul is left out: Korean puts spaces between words)
CJK_CHARS = (r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
             r"\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003134f]")


def _cjk(char: str) -> bool:
    """``char`` is one of ``CJK_CHARS`` (compiled where a folded YAML value needs it: the
    character set takes milliseconds to compile, at every start otherwise)."""
    return re.match(CJK_CHARS, char) is not None


def _unfold_cjk(node: Any, value: str) -> str:
    """``value`` without the spaces YAML folding put between two CJK characters.

    A folded (``>``), plain or quoted scalar written over several lines gets one space at
    each line join; between two Chinese characters that space is a typo the author never
    wrote (``的状态、 是否发货``). Exactly those spaces are removed: each source line is found
    in the value in order and only a join between two CJK characters is touched. When the
    value cannot be matched to its source lines (escapes), it is returned unchanged."""
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.style == "|" or \
            not isinstance(getattr(node.start_mark, "buffer", None), str) or \
            node.start_mark.line == node.end_mark.line:   # one source line: nothing folded
        return value
    mark = node.start_mark
    lines = [line.strip() for line in mark.buffer[mark.index:node.end_mark.index].splitlines()]
    if node.style == ">":
        lines = lines[1:]                      # the ">" indicator line
    elif node.style in ("'", '"') and lines:
        lines[0], lines[-1] = lines[0][1:], lines[-1][:-1]
    joins, cursor = [], 0
    for line, following in zip(lines, lines[1:] + [""]):
        if not line:
            continue
        at = value.find(line, cursor)
        if at < 0:
            return value
        cursor = at + len(line)
        if following and value[cursor:cursor + 1] == " " and _cjk(line[-1]) \
                and _cjk(following[0]):
            joins.append(cursor)
    for at in reversed(joins):
        value = value[:at] + value[at + 1:]
    return value


def _unfold_descriptions(doc: _Doc, keys: tuple, node: Any, depth: int = 0) -> None:
    """The parameters' own ``description`` strings, unfolded as the tool's is."""
    if depth > 64:
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) \
        else ()
    for key, value in list(items):
        if key == "description" and isinstance(value, str) and isinstance(node, dict):
            node[key] = _unfold_cjk(doc._node_at(keys + (key,)), value)
        elif isinstance(value, (dict, list)):
            _unfold_descriptions(doc, keys + (key,), value, depth + 1)


def _tool(name: object) -> Msg:
    """``tool 'get_weather'``: who an error is about."""
    return Msg(N_("tool {name}"), {"name": repr(name)})


def _must_be(who: object, key: str, what: str) -> Msg:
    return Msg(N_("{who}: field '{key}' must be {what}"), {"who": who, "key": key, "what": Msg(what)})


def _name_must_match(who: object) -> Msg:
    return Msg(N_("{who}: field 'name' must match {pattern}"),
               {"who": who, "pattern": "^[a-zA-Z0-9_-]{1,64}$"})


def _check_parameters(doc: _Doc, keys: tuple, who: object, params: Any) -> None:
    from agentdbg.schemas import schema_error

    if not isinstance(params, dict):
        raise doc.error(keys, _must_be(who, "parameters", N_("a JSON Schema object")))
    if params.get("type") != "object":
        raise doc.error(keys, Msg(N_("{who}: field 'parameters' must have type: object"), {"who": who}))
    problem = schema_error(params)  # never retrieves a $ref; patterns parsed by RE2
    if problem is not None:
        path, message = problem
        at = "/".join(str(p) for p in path) or "(root)"
        doc.soft(keys + path, Msg(N_("{who}: field 'parameters' is not a valid JSON Schema at "
                                     "{where}: {problem}"),
                                  {"who": who, "where": at, "problem": message}))


def _parse_handler(doc: _Doc, keys: tuple, who: object, raw: Any) -> tuple[str, Any]:
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in HANDLER_KINDS:
        raise doc.error(keys, Msg(N_("{who}: field 'handler' must be one of {kinds}"), {
            "who": who,
            "kinds": "{python: 'pkg.module:function'}, {fixture: <JSON>}, {command: [argv...]}"}))
    kind, value = next(iter(raw.items()))
    if kind == "python" and not (isinstance(value, str)
                                 and re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", value)):
        raise doc.error(keys + (kind,), Msg(N_("{who}: handler.python must look like "
                                               "'package.module:function'"), {"who": who}))
    if kind == "command" and not (isinstance(value, list) and value
                                  and all(isinstance(a, str) for a in value)):
        raise doc.error(keys + (kind,), Msg(N_("{who}: handler.command must be a non-empty list "
                                               "of strings"), {"who": who}))
    return kind, value


def resolve_python_handler(spec: ToolSpec) -> Callable[..., Any]:
    """Import ``package.module:function`` named in the tools file.

    The tools file's folder is put on ``sys.path`` so modules next to it import.
    """
    import importlib
    import sys

    module_name, func_name = spec.handler.split(":")
    base = str(spec.base_dir)
    if base not in sys.path:
        sys.path.insert(0, base)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user module may raise anything at import
        raise ConfigError(Msg(N_("{who}: cannot import handler module {module}: {error}"),
                              {"who": _tool(spec.name), "module": repr(module_name),
                               "error": f"{type(exc).__name__}: {exc}"})) from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigError(Msg(N_("{who}: handler {handler}: module has no function {function}"),
                              {"who": _tool(spec.name), "handler": repr(spec.handler),
                               "function": repr(func_name)}))
    return func
