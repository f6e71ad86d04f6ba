"""``agentdbg trust``: say which found tools files may run code (see ``agentdbg.trust``), and
the (y/N) question an interactive run asks about one."""


import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from agentdbg.cli.app import command
from agentdbg.cli.options import DebugOpt, Lang, OwnLangOpt
from agentdbg.errors import AgentdbgError


@command(name="trust", epilog="Exit status: 0 done; 2 no such file or bad usage.")
def trust_cmd(
    file: Annotated[Path | None, typer.Argument(
        help="The tools file (default ./tools.yaml).", show_default=False)] = None,
    list_: Annotated[bool, typer.Option(
        "--list", help="List the trusted files and whether each changed since.")] = False,
    revoke: Annotated[bool, typer.Option(
        "--revoke", help="Forget FILE's trust: it runs nothing again until trusted.")] = False,
    lang: OwnLangOpt = Lang.en,  # type: ignore[attr-defined]
    debug: DebugOpt = False,
) -> int:
    """Trust a tools file agentdbg finds by itself (./tools.yaml): its python handlers may be
    imported, its commands run and its MCP servers started. Its content is recorded (the file
    and the handler modules and scripts it names): a change asks again. A file you name with
    --tools is trusted anyway."""
    from agentdbg import trust
    from agentdbg.i18n import N_, Msg, _
    from agentdbg.textsafe import one_line

    if list_:
        if file is not None or revoke:
            raise AgentdbgError(Msg(N_("--list takes no FILE and no --revoke")))
        entries = trust.recorded()
        for name, state in entries:
            print(f"{_(state):<14} {one_line(name)}")   # trusted, changed since, missing
        if not entries:
            print(_("no trusted tools files ({path})").format(path=one_line(trust.store_path())))
        return 0
    path = file if file is not None else Path("tools.yaml")
    if revoke:
        done = trust.revoke(path)
        said = _("no longer trusted: {path}") if done else _("was not trusted: {path}")
        print(said.format(path=one_line(path)))
        return 0
    value = trust.record_trust(path)
    print(_("trusted: {path} ({digest}…): it {runs}").format(
        path=one_line(path), digest=value[:19], runs=one_line(trust.runs(path).phrase())))
    return 0


def interactive(json_out: bool = False) -> bool:
    """A person at a terminal can be asked (not with --json, not when piped)."""
    return not json_out and sys.stdin.isatty() and sys.stderr.isatty()


def ask(path: Any, runs: Any) -> bool:
    """Ask once, on the terminal, whether to trust a found tools file (default no)."""
    from agentdbg.i18n import _
    from agentdbg.textsafe import one_line

    print("agentdbg: " + _("{path} was found here, not named with --tools; it {runs}.").format(
        path=one_line(path), runs=one_line(runs.phrase())), file=sys.stderr)
    print(_("Trust it and run its code? (agentdbg trust records it; a change asks again) [y/N] "),
          end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")
