"""A console made when first used: ``replay --json`` writes its document to stdout itself
and may never print through the console, whose making imports Rich (45 ms of a 1,000-turn
replay's second)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class DeferredConsole:
    """Stands for the console ``make`` returns, made at the first use of anything but
    ``hide``; the secrets ``hide`` was told before are hidden by it then."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._console: Any = None
        self._hidden: list[str] | None = None

    def hide(self, secrets: list[str]) -> None:
        if self._console is None:
            self._hidden = list(secrets)
        else:
            self._console.hide(secrets)

    def made(self) -> Any:
        if self._console is None:
            self._console = self._make()
            if self._hidden is not None:
                self._console.hide(self._hidden)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)
