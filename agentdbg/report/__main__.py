"""``python -m agentdbg.report report|diff|export ...``: the package's commands before (and
besides) their typer wiring; the benchmark uses it. One line on stderr for bad input."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    from agentdbg.errors import AgentdbgError
    from agentdbg.render.console import make_console
    from agentdbg.report import commands

    parser = argparse.ArgumentParser(prog="python -m agentdbg.report")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("report", help="write the HTML report of a transcript")
    p.add_argument("transcript")
    p.add_argument("-o", "--output")
    p.add_argument("--diff", dest="diff_with")
    p = sub.add_parser("diff", help="compare two transcripts")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("export", help="OpenTelemetry export of a transcript")
    p.add_argument("transcript")
    p.add_argument("--otlp")
    p.add_argument("--format", dest="fmt")
    p.add_argument("-o", "--output")
    p.add_argument("--content", action="store_true")
    args = parser.parse_args(argv)
    console = make_console()
    try:
        if args.command == "report":
            return int(commands.run_report(args.transcript, args.output, console,
                                           diff_with=args.diff_with))
        if args.command == "diff":
            return int(commands.run_diff(args.a, args.b, args.json, console))
        return int(commands.run_export(args.transcript, args.otlp, args.fmt, args.output,
                                       args.content, console))
    except AgentdbgError as exc:
        from agentdbg.render.safe import safe

        print(f"agentdbg: error: {' '.join(safe(exc.message).split())}", file=sys.stderr)
        return int(exc.exit_status)


if __name__ == "__main__":
    sys.exit(main())
