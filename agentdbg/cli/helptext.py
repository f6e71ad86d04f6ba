"""``--help`` in the chosen language: the commands' own texts (docstrings, options' help,
epilogs) from the message catalog, and the help layout's words (Usage, Options, [default: …]).

Imported only when a language other than English is chosen, so ``agentdbg --help`` in
English costs nothing more. ``scripts/catalog.py`` extracts the texts with ``texts()``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

try:
    from typer import _click as click_core  # typer's own click (newer typer vendors it)
except ImportError:  # pragma: no cover - older typer runs on click itself
    import click as click_core  # type: ignore[no-redef]

from agentdbg.i18n import _, pgettext


def texts(command: Any) -> Iterator[str]:
    """Every help text of ``command`` and its subcommands, in --help order."""
    for text in (command.help, command.short_help, command.epilog):
        if text:
            yield text
    for param in command.params:
        if getattr(param, "help", None):
            yield param.help
    for sub in getattr(command, "commands", {}).values():
        yield from texts(sub)


def translate(command: Any) -> None:
    """Put ``command``'s help texts (and its subcommands') in the chosen language, and lay its
    help out with translated headings."""
    for attr in ("help", "short_help", "epilog"):
        if getattr(command, attr, None):
            setattr(command, attr, _(getattr(command, attr)))
    if command.help and not command.short_help:   # click would cut it at a space
        command.short_help = first_sentence(command.help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = _(param.help)
        if getattr(param, "param_type_name", "") == "argument" and param.metavar:
            param.metavar = pgettext("metavar", param.metavar)   # QUESTION: 问题, as the text says
    if getattr(command, "options_metavar", None) == "[OPTIONS]":
        command.options_metavar = pgettext("metavar", "[OPTIONS]")
    if getattr(command, "subcommand_metavar", None) == "COMMAND [ARGS]...":
        command.subcommand_metavar = pgettext("metavar", "COMMAND [ARGS]...")
    command.context_class = Context
    for sub in getattr(command, "commands", {}).values():
        translate(sub)


def first_sentence(text: str) -> str:
    """A command's line in the list of commands: its help up to the first full stop (and
    before a colon or a comma when that is still long)."""
    first = re.split(r"[。\n]", text.strip(), maxsplit=1)[0]
    if len(first) <= 30:
        return first
    depth = 0
    for i, ch in enumerate(first):       # a colon or comma outside brackets
        depth += (ch in "（(") - (ch in "）)")
        if depth == 0 and ch in "：，" and i >= 6:
            return first[:i]
    return first


def heading(name: str) -> str:
    """A heading of the help layout, with its colon, in the chosen language."""
    words = {"Usage:": pgettext("help", "Usage:"), "Options": pgettext("help", "Options:"),
             "Arguments": pgettext("help", "Arguments:"),
             "Commands": pgettext("help", "Commands:")}
    return words.get(name, f"{name}:")


#: the notes typer appends to an option's help, in brackets and joined by "; "
_NOTE = re.compile(r"^(.*?)(\s*)\[([^\[\]]*)\]$", re.DOTALL)


def notes(help_text: str) -> str:
    """An option's help with typer's bracketed notes ([default: …; env var: …; required]) in
    the chosen language."""
    if help_text == "Show this message and exit.":   # click's own --help
        return pgettext("help", "Show this message and exit.")
    m = _NOTE.match(help_text)
    if not m:
        return help_text
    said = []
    for part in m.group(3).split("; "):
        label, colon, value = part.partition(": ")
        if colon and label == "default":
            said.append(pgettext("help", "default: {value}").format(value=value))
        elif colon and label == "env var":
            said.append(pgettext("help", "env var: {value}").format(value=value))
        elif part == "required":
            said.append(pgettext("help", "required"))
        else:
            said.append(part)
    sep = pgettext("help", "; ")
    return f"{m.group(1)}{m.group(2)}[{sep.join(said)}]"


def _paragraphs(text: str) -> list[str]:
    """The paragraphs of a help text, each on one line (a docstring's line breaks undone)."""
    return [" ".join(line.strip() for line in block.splitlines() if line.strip())
            for block in re.split(r"\n\s*\n", text.strip())]


class Formatter(click_core.HelpFormatter):
    """Click's help layout with its own words in the chosen language, and lines folded as
    Chinese needs (between characters, counting screen cells; click counts characters and
    breaks only at spaces)."""

    def write_text(self, text: str) -> None:
        from agentdbg.render.linebreak import wrap_plain  # only when help is shown

        indent = " " * self.current_indent
        self.write("\n\n".join(wrap_plain(p, self.width, indent) for p in _paragraphs(text)))
        self.write("\n")

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        if prefix is None:
            prefix = heading("Usage:")
            prefix += "" if prefix.endswith("：") else " "
        super().write_usage(prog, args, prefix)

    def write_heading(self, heading_text: str) -> None:
        self.write(f"{'':>{self.current_indent}}{heading(heading_text)}\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30,
                 col_spacing: int = 2) -> None:
        from agentdbg.render.linebreak import wrap_plain

        rows = list(rows)
        if not rows:
            return
        first_col = min(max(len(term) for term, _text in rows), col_max) + col_spacing
        margin = " " * self.current_indent
        for term, text in rows:
            self.write(f"{margin}{term}")
            if not text:
                self.write("\n")
                continue
            if len(term) <= first_col - col_spacing:
                self.write(" " * (first_col - len(term)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            width = max(self.width - first_col - self.current_indent, 10)
            lines = wrap_plain(" ".join(_paragraphs(notes(text))), width).splitlines()
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write(" " * (first_col + self.current_indent) + line + "\n")


class Context(click_core.Context):
    formatter_class = Formatter
