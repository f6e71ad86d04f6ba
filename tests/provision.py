"""What the suite needs from outside Python, prepared by the test command itself (a pytest plugin,
loaded by ``tests/conftest.py``), each with a line saying what is being prepared and why, so that
``pip install -e '.[test]' && python -m pytest -q`` is all the set-up a fresh machine needs:

* **Debian's chromium and CJK fonts**, when a selected test opens the HTML report in a real browser
  (marker ``browser``): ``apt-get install chromium fonts-noto-cjk`` (as root, as CI runs). When that
  cannot be done, the browser tests end in one failure saying how to install it, the rest skipped
  with a pointer to it — never an error per test. ``AGENTDBG_CHROMIUM`` names another browser
  binary (default ``/usr/bin/chromium``).
* **The framework virtualenvs** (``tests/frameworks``), when a selected test runs a framework:
  built once from their pinned requirements and cached (``tests/frameworks/fw_envs.py``).
* **The npm packages a Node app imports** (marker ``npm_packages``: the OpenAI Agents SDK for
  JavaScript in ``tests/frameworks``), installed once at their pinned versions and cached
  (``tests/oneclick/npm_clients.py``).

It runs after collection, in the process that collected (each ``pytest-xdist`` worker too, under a
lock, so two workers never run apt-get or pip on the same thing at once).
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
PACKAGES = ["chromium", "fonts-noto-cjk"]
BUILDERS = 3   # framework virtualenvs built at once
HERE = Path(__file__).resolve().parent

def chromium_path() -> str:
    return os.environ.get("AGENTDBG_CHROMIUM") or CHROMIUM


def how_to_install() -> str:
    return f"install it with: apt-get update && apt-get install -y {' '.join(PACKAGES)}"


def apt_commands() -> list[list[str]]:
    """The commands that install the browser (``AGENTDBG_TEST_APT`` replaces apt-get, e.g. to
    exercise a failing install)."""
    apt = shlex.split(os.environ.get("AGENTDBG_TEST_APT") or "apt-get")
    return [[*apt, "update", "-qq"], [*apt, "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]]


def install_chromium(say: Callable[[str], None]) -> str | None:
    """Install the browser when it is missing; returns why it is still missing (None: ready)."""
    path = chromium_path()
    if Path(path).exists():
        return None
    if shutil.which(shlex.split(os.environ.get("AGENTDBG_TEST_APT") or "apt-get")[0]) is None:
        return f"{path} is missing and this system has no apt-get; {how_to_install()} (or set AGENTDBG_CHROMIUM)"
    if os.geteuid() != 0 and "AGENTDBG_TEST_APT" not in os.environ:
        return f"{path} is missing and installing it needs root; {how_to_install()} (as root)"
    say(f"preparing the HTML report's browser tests: {path} is missing, installing Debian's "
        f"{' and '.join(PACKAGES)} with apt-get (a minute or two) …")
    start = time.perf_counter()
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in apt_commands():
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-1:])[:200]
            return (f"{path} is missing and '{' '.join(command[:2])}' failed ({tail or 'exit ' + str(done.returncode)}); "
                    f"{how_to_install()}")
    if not Path(path).exists():
        return f"{path} is still missing after installing {' '.join(PACKAGES)}; set AGENTDBG_CHROMIUM to the browser"
    say(f"installed {' and '.join(PACKAGES)} in {time.perf_counter() - start:.0f} s")
    return None


def prepare_frameworks(names: list[str], say: Callable[[str], None]) -> str | None:
    """Build the framework environments ``names`` that are not cached yet; returns why one could
    not be built (None: all ready)."""
    sys.path.insert(0, str(HERE / "frameworks"))
    import fw_envs

    missing = [n for n in names if not (fw_envs.REQUIREMENTS / f"{n}.txt").is_file() or not fw_envs.ready(n)]
    if not missing:
        return None
    say(f"preparing the real-framework tests (tests/frameworks): building {len(missing)} cached "
        f"virtualenv(s) from pinned requirements in {fw_envs.cache_root()}, {BUILDERS} at a time "
        f"(1-4 min each, 2.5 GB in all, once) …")
    with ThreadPoolExecutor(max_workers=BUILDERS) as pool:  # pip is mostly waiting on the network
        futures = {pool.submit(fw_envs.ensure, name): name for name in missing}
        failed = None
        for future in as_completed(futures):
            name = futures[future]
            try:
                env = future.result()
            except (RuntimeError, OSError) as exc:  # pip failed; no such requirements file
                failed = failed or f"{name}: " + " ".join(str(exc).split())[:400]
                continue
            say(f"  {name}: {'built' if env.created else 'ready'} in {env.seconds:.0f} s")
    return failed


def prepare_npm(names: list[str], say: Callable[[str], None]) -> str | None:
    """Install the npm package sets ``names`` that are not cached yet; returns why one could
    not be installed (None: all ready)."""
    sys.path.insert(0, str(HERE))
    from oneclick import npm_clients

    for name in names:
        specs = " ".join(f"{p}@{v}" for p, v in npm_clients.PINNED[name])
        if npm_clients.ready(name):
            continue
        say(f"preparing the Node apps' tests: installing {specs} with npm into "
            f"{npm_clients.cache_root()} (once, about a minute) …")
        start = time.perf_counter()
        try:
            npm_clients.ensure(name)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:   # no npm; npm failed
            return f"{name}: " + " ".join(str(exc).split())[:400]
        say(f"  {specs}: installed in {time.perf_counter() - start:.0f} s")
    return None


class Unprovisioned(pytest.Item):
    """Stands for the tests that need what could not be prepared: one failure with one line,
    instead of an error in each of them."""

    def __init__(self, *, why: str, count: int, **kw):
        super().__init__(**kw)
        self.why, self.count = why, count

    def runtest(self) -> None:
        raise Unavailable(self.why)

    def repr_failure(self, excinfo, style=None) -> str:
        if isinstance(excinfo.value, Unavailable):
            return f"{excinfo.value} ({self.count} test(s) not run)"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name


class Unavailable(Exception):
    pass


@contextmanager
def _locked(name: str):
    """One preparer at a time across processes (pytest-xdist workers, parallel sessions)."""
    with open(Path(tempfile.gettempdir()) / f"agentdbg-tests-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _once(config: pytest.Config, name: str, prepare: Callable[[], str | None]) -> str | None:
    """``prepare()`` under a lock; pytest-xdist workers of one run share its verdict, so they all
    collect the same tests."""
    run = getattr(config, "workerinput", {}).get("testrunuid")
    verdict = Path(tempfile.gettempdir()) / f"agentdbg-tests-{name}-{run}.verdict" if run else None
    with _locked(name):
        if verdict is not None and verdict.is_file():
            return verdict.read_text(encoding="utf-8") or None
        why = prepare()
        if verdict is not None:
            verdict.write_text(why or "", encoding="utf-8")
        return why


def _sayer(config: pytest.Config) -> Callable[[str], None]:
    """Print a line on the terminal now, also from a pytest-xdist worker (stderr, not captured)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        text = f"agentdbg tests: {line}"
        if reporter is not None and not hasattr(config, "workerinput"):
            reporter.ensure_newline()
            reporter.write_line(text)
            return
        if capman is not None:
            with capman.global_and_fixture_disabled():
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
        else:
            sys.stderr.write(text + "\n")
    return say


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: opens a page in Debian's chromium (provisioned "
                                       "by the test command; AGENTDBG_CHROMIUM overrides the path)")
    config.addinivalue_line("markers", "framework_env(name): runs in the cached virtualenv of "
                                       "tests/frameworks/requirements/NAME.txt (built by the test command)")
    config.addinivalue_line("markers", "npm_packages(name): imports the npm packages "
                                       "tests/oneclick/npm_clients.PINNED[NAME] (installed by the test command)")


def _replace(session: pytest.Session, needs: list[pytest.Item], what: str, why: str) -> None:
    """Deselect ``needs`` and put one failing item in their place."""
    first = session.items.index(needs[0])
    session.config.hook.pytest_deselected(items=needs)
    kept = [item for item in session.items if item not in set(needs)]
    stand_in = Unprovisioned.from_parent(needs[0].parent, name=f"[no {what}]", why=f"no {what}: {why}",
                                         count=len(needs))
    kept.insert(min(first, len(kept)), stand_in)
    session.items[:] = kept


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    say = _sayer(config)
    browser = [item for item in items if item.get_closest_marker("browser")]
    if browser:
        why = _once(config, "chromium", lambda: install_chromium(say))
        if why:
            _replace(session, browser, "browser for the HTML report's tests", why)
    envs = [item for item in session.items if item.get_closest_marker("framework_env")]
    if envs:
        names = sorted({item.get_closest_marker("framework_env").args[0] for item in envs})
        why = _once(config, "frameworks", lambda: prepare_frameworks(names, say))
        if why:
            _replace(session, envs, "framework environment", why)
    node = [item for item in session.items if item.get_closest_marker("npm_packages")]
    if node:
        wanted = sorted({item.get_closest_marker("npm_packages").args[0] for item in node})
        why = _once(config, "npm", lambda: prepare_npm(wanted, say))
        if why:
            _replace(session, node, "npm packages", why)
