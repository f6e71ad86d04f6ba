"""The repository's layout, as a newcomer meets it: the sample (``tools.yaml`` + ``sample_tools/``)
sits at the root as its one copy, ``agentdbg run`` from the root uses it, and a non-editable
install still carries it (mapped into the package at build time) and runs it offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from support import ROOT

QUESTION = "订单 ORD-2026-001 到哪里了?"


def test_the_root_holds_the_package_the_tests_and_the_one_copy_of_the_sample():
    for name in ("agentdbg", "tests", "sample_tools", "tools.yaml", "pyproject.toml"):
        assert (ROOT / name).exists(), name
    assert not (ROOT / "tools").exists()            # the README generator moved to scripts/
    assert not (ROOT / "agentdbg" / "samples").exists()
    assert not list((ROOT / "agentdbg").rglob("tools.yaml"))  # no second copy in the package


def test_the_bundled_sample_is_the_root_one_in_a_checkout():
    from agentdbg.toolspec import bundled_tools_path

    assert bundled_tools_path() == ROOT / "tools.yaml"


def run_cli(python: Path | str, *args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTDBG_", "PYTHON"))}
    env.update(AGENTDBG_HOME=str(home), NO_COLOR="1", COLUMNS="100")
    return subprocess.run([str(python), "-m", "agentdbg", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_run_from_the_root_uses_the_root_tools_file_and_its_handlers(tmp_path):
    done = run_cli(sys.executable, "run", QUESTION, "--json", cwd=ROOT, home=tmp_path)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["tools_file"] == "tools.yaml"
    assert "杭州转运中心已发出" in run["answer"]


@pytest.mark.slow
def test_a_non_editable_install_carries_and_runs_the_sample(tmp_path):
    """``pip install .`` (here: the wheel pip builds from the checkout, installed into a fresh
    virtualenv that borrows this one's dependencies) runs the sample from another folder."""
    source = tmp_path / "source"          # a copy: building writes build/ into the tree it builds
    source.mkdir()
    for name in ("agentdbg", "sample_tools"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tools.yaml", "setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "-w", str(wheels), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # the dependencies
    wheel = next(wheels.glob("*.whl"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    assert (site / "agentdbg" / "_sample" / "tools.yaml").is_file()
    assert not (site / "sample_tools").exists()   # no top-level module of that name
    # the package's other data files ship too: its types and the live view's page assets
    assert (site / "agentdbg" / "py.typed").is_file()
    assert {p.name for p in (site / "agentdbg" / "server" / "live" / "assets").iterdir()} >= {"live.js", "live.css"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_cli(python, "run", QUESTION, "--json", cwd=elsewhere, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["tools_file"].startswith(str(site / "agentdbg" / "_sample"))
    assert "杭州转运中心已发出" in run["answer"]
