"""Edit JSON in $VISUAL/$EDITOR, or in an inline prompt: step mode's 'edit' and the proxy's intercept."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from agentdbg.i18n import _, json_problem, tr


def edit_json(value: Any, io: dict, what: str) -> Any:
    """Edit ``value`` as pretty JSON; the parsed result. ValueError names what stays unchanged."""
    text = edit_text(json.dumps(value, ensure_ascii=False, indent=2), io)
    if text is None:
        raise ValueError(_("edit cancelled; {what} unchanged").format(what=what))
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(_("not valid JSON ({error}); {what} unchanged").format(error=tr(json_problem(exc)),
                                                                          what=what)) \
            from None


def edit_text(text: str, io: dict) -> str | None:
    """Edit ``text`` in $VISUAL/$EDITOR, else in an inline multi-line prompt; None if cancelled."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
            fh.write(text)
        try:
            if subprocess.call([*shlex.split(editor), fh.name]) != 0:
                return None
            return Path(fh.name).read_text(encoding="utf-8")
        finally:
            os.unlink(fh.name)
    from prompt_toolkit import PromptSession

    try:
        return PromptSession(**io).prompt("", default=text, multiline=True)
    except (KeyboardInterrupt, EOFError):
        return None
