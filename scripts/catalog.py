"""Keep the message catalogs in step with the code (Babel, the standard gettext tooling).

    python scripts/catalog.py            # extract, then update every agentdbg/locale/*.po
    python scripts/catalog.py --check    # exit 1 when a catalog lacks a text the code prints,
                                         # or a marked text cannot be extracted (an f-string)
    python scripts/catalog.py --new fr   # start agentdbg/locale/fr.po (a third language)

The texts are what the code marks: ``_("…")``, ``N_("…")``, ``Msg("…")``, ``pgettext(ctx, "…")``,
plus the help of every step-mode command (its docstring's usage, summary and details), the
``--help`` of every command line command (docstrings, options' help, epilogs) and what each
checker rule and provider profile means (``check --rules``, ``check --profiles``).
Translators edit the ``.po`` files with any PO editor; agentdbg reads them as they are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "agentdbg" / "locale"
#: ``tell`` is the offline model's own: a sentence of its answer, in the question's language
KEYWORDS = {"_": None, "N_": None, "Msg": (1,), "tell": (1,), "pgettext": ((1, "c"), 2),
            "ngettext": (1, 2)}


def marked(folder: Path, catalog, problems: list[str]) -> None:
    """Add to ``catalog`` every text the Python code under ``folder`` marks; each marked call
    holding an f-string with substitutions (never translated: its text is not known until it
    runs) is added to ``problems`` as Babel says it (``file:line: warning: Skipping f-string``)."""
    import contextlib
    import io

    from babel.messages.extract import extract_from_dir

    said = io.StringIO()
    with contextlib.redirect_stderr(said):     # Babel writes its warnings to sys.stderr
        for filename, lineno, message, _comments, context in extract_from_dir(
                str(folder), method_map=[("**.py", "python")], keywords=KEYWORDS,
                comment_tags=("i18n:",), strip_comment_tags=True):
            if message:
                catalog.add(message, locations=[(f"{folder.name}/{filename}", lineno)],
                            context=context)
    for line in said.getvalue().splitlines():
        if line.strip():
            problems.append(line.replace(f"{ROOT}/", "", 1))


def template(problems: list[str] | None = None):
    """A catalog of every text the code marks (Babel's ``Catalog``). What cannot be extracted
    goes to ``problems``, or to stderr when no list is given."""
    from babel.messages.catalog import Catalog

    sys.path.insert(0, str(ROOT))
    catalog = Catalog(project="agentdbg", charset="utf-8")
    found: list[str] = []
    marked(ROOT / "agentdbg", catalog, found)
    if problems is None:
        for line in found:
            print(line, file=sys.stderr)
    else:
        problems.extend(found)
    from agentdbg.repl.commands import COMMANDS

    for cmd in COMMANDS.values():
        where = [(f"agentdbg/repl/{cmd.fn.__module__.rsplit('.', 1)[-1]}.py",
                  cmd.fn.__code__.co_firstlineno)]
        for text in (cmd.usage, cmd.summary, cmd.help):
            if text:
                catalog.add(text, locations=where)
    _command_line(catalog)
    from agentdbg.checker.findings import RULES

    for rule in RULES.values():
        catalog.add(rule.summary, locations=[("agentdbg/checker/findings.py", 0)],
                    auto_comments=[f"check --rules: {rule.id}"])
    from agentdbg.checker.profiles import PROFILES

    for profile in PROFILES.values():
        catalog.add(profile.description, locations=[("agentdbg/checker/profiles.py", 0)],
                    auto_comments=[f"check --profiles: {profile.name}"])
    return catalog


def _command_line(catalog) -> None:
    """The ``--help`` texts of every command (as typer hands them to click)."""
    import typer.main

    from agentdbg.cli import app
    from agentdbg.cli.helptext import texts

    group = typer.main.get_command(app)
    for text in texts(group):
        catalog.add(text, locations=[("agentdbg/cli/__init__.py", 0)])


def read(path: Path):
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        return read_po(fh, charset="utf-8")


def write(path: Path, catalog) -> None:
    from babel.messages.pofile import write_po

    with path.open("wb") as fh:
        write_po(fh, catalog, width=100, omit_header=False, sort_output=False,
                 ignore_obsolete=True, include_previous=False)


def missing(pot, po) -> list[str]:
    """The texts of ``pot`` that ``po`` does not translate."""
    out = []
    for message in pot:
        if not message.id:
            continue
        found = po.get(message.id, context=message.context)
        if found is None or not found.string or found.fuzzy:
            out.append(message.id if isinstance(message.id, str) else message.id[0])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--new", metavar="LANG")
    args = parser.parse_args()
    problems: list[str] = []
    pot = template(problems)
    for line in problems:
        print(line, file=sys.stderr)
    if args.new:
        from babel.messages.catalog import Catalog

        path = LOCALE / f"{args.new}.po"
        if path.exists():
            print(f"{path} exists", file=sys.stderr)
            return 1
        fresh = Catalog(locale=args.new, project="agentdbg", charset="utf-8")
        fresh.update(pot, no_fuzzy_matching=True)
        write(path, fresh)
        print(f"wrote {path}: {len(pot)} texts to translate")
        return 0
    status = int(bool(problems)) if args.check else 0
    for path in sorted(LOCALE.glob("*.po")):
        po = read(path)
        if args.check:
            lacking = missing(pot, po)
            for text in lacking:
                print(f"{path.name}: not translated: {text[:100]!r}")
            status = status or int(bool(lacking))
            continue
        po.update(pot, no_fuzzy_matching=True)
        write(path, po)
        print(f"updated {path}: {len(missing(pot, po))} of {len(pot)} texts untranslated")
    return status


if __name__ == "__main__":
    sys.exit(main())
