"""``agentdbg tools``: what only MCP tools need checking for, on top of the common lint.

The common lint (descriptions that say when, described parameters, ``required``, enums, the
tool count) runs on MCP tools like on local ones. Here: a tool the API would reject (a name
over 64 characters or with other characters, an ``inputSchema`` that is not a JSON Schema
object, two tools with one name), a schema strict mode would reject (frameworks that send MCP
tools with ``strict: true`` fail on it), no description at all, and a tool with no
``readOnlyHint``, whose policy then comes from the server's ``unhinted`` setting.
"""

from __future__ import annotations

from agentdbg.checker.lint_finding import LintFinding
from agentdbg.checker.rule import ERROR, WARNING, declare, rule
from agentdbg.checker.rules import _strict_problem
from agentdbg.i18n import N_, Msg
from agentdbg.toolspec import ToolSet, ToolSpec

DECLARED = declare(
    __name__,
    rule("mcp-tool-invalid", ERROR, "an MCP server lists a tool the API would reject (its name, "
         "its inputSchema, a name two tools share)", scope="tools"),
    rule("mcp-tool-undescribed", WARNING, "an MCP tool with no description", scope="tools"),
    rule("mcp-no-read-only-hint", WARNING, "an MCP tool without readOnlyHint: its policy comes "
         "from the server's unhinted setting", scope="tools"),
    rule("mcp-strict-schema-invalid", WARNING, "an MCP server's inputSchemas break strict mode",
         scope="tools"),
)


def lint_mcp(toolset: ToolSet) -> list[LintFinding]:
    servers = toolset.mcp
    if servers is None:
        return []
    out = [LintFinding(rule="mcp-tool-invalid", severity="error", tool=p.tool, line=p.line,
                       message=f"MCP server {p.server!r}: {p.message}") for p in servers.problems]
    mcp_tools = [t for t in toolset.tools if t.handler_kind == "mcp"]
    for spec in mcp_tools:
        out.extend(_lint_tool(spec))
    for name in servers.started:
        out.extend(_strict(name, [t for t in mcp_tools if t.handler.server == name]))
    return out


def _lint_tool(spec: ToolSpec) -> list[LintFinding]:
    found: list[LintFinding] = []
    d = spec.handler

    def warn(rule: str, message: Msg) -> None:
        said = Msg(N_("MCP server {server}: {message}"), {"server": repr(d.server), "message": message})
        found.append(LintFinding(rule=rule, severity="warning", tool=spec.name, line=spec.line,
                                 message=str(said), shown=said))

    if not spec.description:
        warn("mcp-tool-undescribed", Msg(N_("the tool has no description: the model has only its "
                                            "name to go on")))
    if "readOnlyHint" not in d.annotations and not spec.side_effects:
        warn("mcp-no-read-only-hint", Msg(N_(
            "no readOnlyHint annotation: it runs like a read-only tool, in parallel and without "
            "approval (unhinted: trust); 'unhinted: safe' on the server asks for approval first")))
    return found


def _strict(server: str, tools: list) -> list[LintFinding]:
    """One finding per server: most servers' schemas break strict mode in the same way."""
    broken = [(t, p) for t in tools if (p := _strict_problem(t.parameters, ()))]
    if not broken:
        return []
    first, problem = broken[0]
    names = ", ".join(t.name for t, _ in broken[:5]) + (" …" if len(broken) > 5 else "")
    said = Msg(N_("MCP server {server}: strict mode would reject the inputSchema of {k} of its "
                  "{n} tool(s) ({names}; {first}: {problem}); a client that sends MCP tools with "
                  "strict: true fails on them"),
               {"server": repr(server), "k": len(broken), "n": len(tools), "names": names,
                "first": first.name, "problem": problem[1]})
    return [LintFinding(rule="mcp-strict-schema-invalid", severity="warning", tool=None,
                        line=first.line, message=str(said), shown=said)]
