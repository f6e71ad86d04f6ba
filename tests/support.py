"""Helpers shared by tests in several folders.

They live here, not in ``conftest.py``: there are several ``conftest.py``
files under ``tests/`` and ``from support import ...`` picks whichever was
imported first, so a whole-tree run would break.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def scripted(*turns):
    """A scripted model that answers with ``turns`` in order."""
    from agentdbg.providers.scripted import ScriptedModel, parse_turns

    return ScriptedModel(parse_turns(list(turns), "<test>"), "<test>")
