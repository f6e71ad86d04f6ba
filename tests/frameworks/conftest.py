"""Fixtures of the framework compatibility suite: the frameworks' environments (created once,
cached across sessions) and each app's correct run (run once per session, read by many tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fw_envs
from fw_apps import App
from fw_stack import Run, run_app

_ENVS: dict[str, fw_envs.Env] = {}


class Envs:
    """The framework environments this session used, built on first use."""

    def python(self, name: str) -> Path:
        if name not in _ENVS:
            _ENVS[name] = fw_envs.ensure(name)
        return _ENVS[name].python


class Runs:
    """Each app's correct run, made on first use and shared by the tests that read it."""

    def __init__(self, envs: Envs, factory: pytest.TempPathFactory):
        self.envs, self.factory = envs, factory
        self.done: dict[str, Run] = {}

    def get(self, app: App) -> Run:
        if app.id not in self.done:
            self.done[app.id] = self.run(app)
        return self.done[app.id]

    def run(self, app: App, *flags: str, times: int = 1) -> Run:
        label = "-".join([app.id, *(f.strip("-") for f in flags), *(["x2"] if times > 1 else [])])
        python = self.envs.python(app.env) if app.env else None     # a Node app: none
        return run_app(app, python, self.factory.mktemp(label), *flags, times=times)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each app's test names the environment it runs in, or the npm packages a Node app
    imports (``tests/provision.py`` prepares the selected ones before the first test, saying
    so), and is slow (``-m "not slow"`` leaves it out)."""
    for item in items:
        app = getattr(getattr(item, "callspec", None), "params", {}).get("app")
        if isinstance(app, App):
            if app.env:
                item.add_marker(pytest.mark.framework_env(app.env))
            if app.npm:
                item.add_marker(pytest.mark.npm_packages(app.npm))
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def envs() -> Envs:
    return Envs()


@pytest.fixture(scope="session")
def runs(envs: Envs, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(envs, tmp_path_factory)


def pytest_terminal_summary(terminalreporter):
    if not _ENVS:
        return
    created = [e for e in _ENVS.values() if e.created]
    line = ", ".join(f"{e.name} {e.seconds:.1f} s{'' if e.created else ' (cached)'}"
                     for e in sorted(_ENVS.values(), key=lambda e: e.name))
    terminalreporter.write_line(f"framework environments ({fw_envs.cache_root()}): {line}; "
                                f"created now: {sum(e.seconds for e in created):.1f} s")
