"""``agentdbg init``: a new project's ``tools.yaml`` and handler module, commented, ready to run
offline; or, from a tools JSON an app already has, the same with one handler to fill per tool.

Nothing is overwritten: when either file exists, one line and exit 2. Names and texts from a
tools JSON are data: function names and parameters are made identifiers, descriptions are written
as Python string literals (``repr``), so nothing in the JSON becomes code.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdbg.errors import AgentdbgError
from agentdbg.i18n import N_, Msg

MODULE = "handlers"

TOOLS_YAML = '''\
# The tools your model may call (agentdbg tools file, format version 1).
#   agentdbg tools                      lint this file
#   agentdbg run "QUESTION"             run the loop with it (./tools.yaml is the default)
#   agentdbg run --step "QUESTION"      the same, one phase at a time
version: 1

defaults:
  timeout: 5              # seconds per call; a call that takes longer is a timeout result
  max_result_chars: 4000  # longer results are cut, with a marker the model can see

tools:
  - name: get_weather     # ^[a-zA-Z0-9_-]{1,64}$
    # What the tool does and WHEN to use it: the model chooses tools from this text.
    description: >-
      Current weather for a city. Use when the user asks about the temperature,
      rain or what to wear in a city.
    # The arguments as JSON Schema: every call is checked against it before your code runs.
    parameters:
      type: object
      properties:
        city:
          type: string
          description: the city's name, e.g. Paris
          examples: [Paris, London, Tokyo]
      required: [city]
    # module:function, imported from this file's folder and called with the arguments as
    # keyword arguments. Or {fixture: {...}} (a canned result), or
    # {command: [python, my_tool.py]} (arguments as JSON on stdin, the result as JSON on stdout).
    handler: {python: "handlers:get_weather"}
    side_effects: false   # true for a write (an e-mail, a payment): never run in parallel
    approval: never       # always: runs only when approved (--approve all, or in --step)
'''

HANDLERS_PY = '''\
"""Handlers for tools.yaml. Each is called with the call's arguments as keyword arguments and
returns JSON-serialisable data: what the model reads as the tool's result.

A clean failure the model can act on: raise ToolError(type, message). Anything else it raises
becomes an internal_error for the model, while agentdbg shows you the exception and its line.
"""

from agentdbg.tool_api import ToolError

# canned data: replace it with your real lookup
WEATHER = {
    "Paris": {"temperature_c": 18, "condition": "cloudy"},
    "London": {"temperature_c": 14, "condition": "rain"},
    "Tokyo": {"temperature_c": 22, "condition": "sunny"},
}


def get_weather(city: str) -> dict:
    """Current weather for ``city``."""
    if city not in WEATHER:
        raise ToolError("not_found", f"no weather for {city!r}")
    return {"city": city, **WEATHER[city]}
'''


@dataclass
class Written:
    tools: Path
    module: Path
    names: list[str]


def init_project(folder: Path, source: Path | None = None) -> Written:
    """Write ``tools.yaml`` and ``handlers.py`` into ``folder`` (from the tools JSON ``source``
    when given); refuses when either exists."""
    tools_path, module_path = folder / "tools.yaml", folder / f"{MODULE}.py"
    for path in (tools_path, module_path):
        if path.exists() or path.is_symlink():
            raise AgentdbgError(Msg(N_("{path} already exists; init never overwrites a file: move "
                                       "it away or run init in another folder"), {"path": path}))
    if source is None:
        tools_text, module_text, names = TOOLS_YAML, HANDLERS_PY, ["get_weather"]
    else:
        tools_text, module_text, names = from_definitions(source)
    folder.mkdir(parents=True, exist_ok=True)
    _create(module_path, module_text)
    _create(tools_path, tools_text)
    # trust (issue 21): once the safety branch is merged, what init wrote is trusted here:
    # record_trust(tools_path)
    return Written(tools_path, module_path, names)


def _create(path: Path, text: str) -> None:
    try:
        with open(path, "x", encoding="utf-8") as f:   # "x": never over a file made meanwhile
            f.write(text)
    except OSError as exc:
        raise AgentdbgError(Msg(N_("{path}: cannot write: {reason}"),
                                {"path": path, "reason": exc.strerror or exc})) from None


# -- from a tools JSON -------------------------------------------------------------------------

def from_definitions(source: Path) -> tuple[str, str, list[str]]:
    """``tools.yaml`` and ``handlers.py`` texts for the tools of a tools JSON: each tool keeps its
    definition and gets a handler that says it is not written yet."""
    import yaml

    from agentdbg.toolspec import load_tools

    toolset = load_tools(source, resolve=False)
    if toolset.tools and toolset.tools[0].handler_kind != "none":
        raise AgentdbgError(Msg(N_("{path}: --from reads a tools JSON (an OpenAI 'tools' array); "
                                   "this is already a tools.yaml"), {"path": source}))
    functions = _function_names([t.name for t in toolset.tools])
    entries, defs = [], []
    for spec in toolset.tools:
        described = spec.description or f"{spec.name} (say what it does and when to use it)"
        entry: dict[str, Any] = {"name": spec.name, "description": described,
                 "parameters": spec.parameters,
                 "handler": {"python": f"{MODULE}:{functions[spec.name]}"}}
        if spec.strict:
            entry["strict"] = True
        entries.append(entry)
        defs.append(_stub(functions[spec.name], spec.name, spec.description, spec.parameters))
    name = _literal_text(source.name)
    header = (f"# The tools of {name}, with a handler each in {MODULE}.py (agentdbg tools file,\n"
              "# format version 1). Fill in the handlers, then: agentdbg tools; agentdbg run \"QUESTION\"\n")
    body = yaml.safe_dump({"version": 1, "tools": entries}, allow_unicode=True, sort_keys=False,
                          width=100)
    module = (f'"""Handlers for the tools of {_literal_text(source.name)}: each is called with the '
              'call\'s arguments\nas keyword arguments and returns JSON-serialisable data."""\n\n'
              "from agentdbg.tool_api import ToolError\n" + "".join(defs))
    return header + body, module, [t.name for t in toolset.tools]


def _function_names(names: list[str]) -> dict[str, str]:
    """A Python identifier per tool name, unique (``get-weather`` → ``get_weather``)."""
    out: dict[str, str] = {}
    for name in names:
        base = re.sub(r"\W", "_", name, flags=re.ASCII) or "tool"
        if base[0].isdigit() or keyword.iskeyword(base) or base == "ToolError":
            base = f"tool_{base}"
        candidate, n = base, 2
        while candidate in out.values():
            candidate, n = f"{base}_{n}", n + 1
        out[name] = candidate
    return out


def _stub(function: str, tool: str, description: str, schema: dict) -> str:
    props: dict = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    usable = [p for p in props if isinstance(p, str) and p.isidentifier() and not keyword.iskeyword(p)]
    params = [p for p in usable if p in required] + [f"{p}=None" for p in usable if p not in required]
    if len(usable) < len(props):   # names Python cannot spell as parameters arrive in **rest
        rest = next(n for n in (f"rest{'_' * i}" for i in range(len(props) + 1)) if n not in props)
        params.append(f"**{rest}")
    signature = f"*, {', '.join(params)}" if params else ""
    doc = repr(" ".join(description.split())[:500] or tool)
    message = repr(f"{tool} is not written yet: fill in {function}() in {MODULE}.py")
    return (f"\n\ndef {function}({signature}):\n    {doc}\n"
            f"    raise ToolError(\"not_implemented\", {message})\n")


def _literal_text(text: str) -> str:
    """``text`` safe inside a triple-quoted docstring."""
    return repr(text)[1:-1].replace('"', "'")
