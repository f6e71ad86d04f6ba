"""Click's own usage errors (``No such option``, ``Missing argument``, ``Invalid value for …``)
in the chosen language.

Click (typer's copy of it) writes these in English, from pieces: the kind of error, the
option or argument it names, and a sentence of the parameter type (``'abc' is not a valid
integer.``). Each piece is matched against its English template here and said again from the
catalog; what the user typed, option names and choices stay as they are, and a sentence no
template matches is shown as click wrote it. Imported only when a usage error happens. Where
click writes ``Error:``, the line begins ``agentdbg: error:`` as every error of agentdbg does
(English in every language: scripts grep for it).
"""


from typing import IO, Any

try:
    from typer import _click as click_core  # typer's own click (newer typer vendors it)
except ImportError:  # pragma: no cover - older typer runs on click itself
    import click as click_core  # type: ignore[no-redef]

from agentdbg import i18n
from agentdbg.i18n import N_, Msg, _

#: what click says about a value (a parameter type's sentence, or ctx.fail's), as click writes
#: it; the first that matches is said in the chosen language
SENTENCES = (
    N_("{value} is not one of {choices}."),
    N_("{value} is not a valid integer range."),
    N_("{value} is not a valid int range."),
    N_("{value} is not a valid integer."),
    N_("{value} is not a valid int."),
    N_("{value} is not a valid float range."),
    N_("{value} is not a valid float."),
    N_("{value} is not a valid boolean. Recognized values: {states}"),
    N_("{value} is not a valid UUID."),
    N_("{value} is not in the range {range}."),
    N_("{value} does not match the formats {formats}."),
    N_("{count} values are required, but {given} given."),
    N_("Takes {count} values but {given} given."),
    N_("Option {option} requires an argument."),
    N_("Option {option} requires {count} arguments."),
    N_("Option {option} does not take a value."),
    N_("Argument {argument} takes {count} values."),
    N_("Got unexpected extra argument(s) ({args})"),
    N_("No such command {name}. Did you mean {names}?"),
    N_("No such command {name}."),
    N_("No such option: {option}"),
    N_("Missing command."),
)


def said(text: str) -> str:
    """Click's English ``text`` in the chosen language (as it is when no template matches)."""
    for template in SENTENCES:
        found = Msg.parse(template, text)
        if found is not None:
            return found.tr()
    return text


def _hint(exc: Any) -> str:
    """The option or argument an error names, as click names it (``'--lang'`` or
    ``'--lang' / '-l'``), with its environment variable in the chosen language."""
    hint = exc.param_hint
    if hint is None and exc.param is not None:
        hint = exc.param.get_error_hint(exc.ctx)
    if hint is not None and not isinstance(hint, str):
        hint = " / ".join(repr(x) for x in hint)
    if hint and " (env var: " in hint:
        hint, envvar = hint.split(" (env var: ", 1)
        hint += _(" (env var: {name})").format(name=envvar.rstrip(")"))
    return hint or ""


def message(exc: Any) -> str:
    """What follows ``Error:`` for ``exc``, in the chosen language."""
    if isinstance(exc, click_core.exceptions.MissingParameter):
        kind = exc.param_type or (exc.param.param_type_name if exc.param is not None else "")
        template = {"argument": N_("Missing argument {name}."),
                    "option": N_("Missing option {name}.")}.get(kind, N_("Missing parameter {name}."))
        hint = _hint(exc)
        return _closed(_(template).format(name=hint).replace("  ", " "), hint)
    if isinstance(exc, click_core.exceptions.NoSuchOption):
        text = said(exc.message)
        if exc.possibilities:
            text += _(" (did you mean: {options})").format(options=", ".join(sorted(exc.possibilities)))
        return text
    if isinstance(exc, click_core.exceptions.BadParameter):
        hint = _hint(exc)
        if not hint:
            return _("Invalid value: {problem}").format(problem=said(exc.message))
        return _closed(_("Invalid value for {name}: {problem}").format(name=hint, problem=said(exc.message)),
                       hint)
    return said(exc.format_message())


def _closed(text: str, hint: str) -> str:
    """``text`` without the space a template puts after ``hint`` where ``hint`` ends on a
    full-width bracket (``'--lang'（环境变量 'AGENTDBG_LANG'）的值无效``)."""
    return text.replace(hint + " ", hint, 1) if hint.endswith("）") else text


def show(exc: Any, file: IO[Any] | None = None) -> None:
    """``exc`` printed as click prints it (the usage, a hint), then one ``agentdbg: error:``
    line as every other error of agentdbg, in the chosen language."""
    echo = click_core.utils.echo
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        hint = ""
        if ctx.command.get_help_option(ctx) is not None:
            hint = _("Try '{command}' for help.").format(
                command=f"{ctx.command_path} {ctx.help_option_names[0]}") + "\n"
        echo(f"{ctx.get_usage()}\n{hint}", file=file, err=True, color=ctx.color)
    said = message(exc) if i18n.language() != i18n.DEFAULT else exc.format_message()
    echo(f"agentdbg: error: {said}", file=file, err=True, color=ctx.color if ctx else None)


def localise(exc: BaseException) -> None:
    """Make ``exc`` (a click error: a usage error, a file click could not open) show itself as
    agentdbg's errors do, in the chosen language."""
    if isinstance(exc, click_core.exceptions.ClickException) and \
            not isinstance(exc, click_core.exceptions.NoArgsIsHelpError):
        exc.show = lambda file=None: show(exc, file)   # type: ignore[method-assign]
