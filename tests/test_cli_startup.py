"""`agentdbg --help` builds only what it shows: each command's name and help, none of their
options; a command builds only itself. What they print is what the whole app prints."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app, built_for

#: counts how many functions typer reads options from while ``agentdbg ARGS`` runs
COUNTED = r'''
import sys
import typer.main
import typer.utils

read = []
real = typer.utils.get_params_from_function

def counted(func):
    read.append(func.__name__)
    return real(func)

typer.utils.get_params_from_function = counted
typer.main.get_params_from_function = counted
from agentdbg.cli import main
sys.argv = ["agentdbg", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("READ", *sorted(set(read)), file=sys.stderr)
'''


def options_read(*args: str) -> set[str]:
    """The functions whose signatures typer read for ``agentdbg ARGS``."""
    r = subprocess.run([sys.executable, "-c", COUNTED, *args], capture_output=True, text=True)
    return set(next(line for line in r.stderr.splitlines() if line.startswith("READ")).split()[1:])


def test_the_list_of_commands_reads_no_commands_options():
    # the root's options (--version), and each listed command's, which has none
    assert options_read("--help") == {"_root", "_version", "listed"}
    assert options_read() == {"_root", "_version", "listed"}
    read = options_read("check", "--help")    # check's options and their callbacks only
    assert "check" in read and not read & {"run", "replay", "proxy", "serve", "listed"}


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["check", "--help"],
                                  ["replay", "--help"], ["chek"], ["--", "check"], ["--nope"]])
def test_what_the_trimmed_app_prints_is_what_the_whole_app_prints(args):
    runner = CliRunner()
    whole = runner.invoke(app, args, prog_name="agentdbg", terminal_width=80)
    trimmed = runner.invoke(built_for(args), args, prog_name="agentdbg", terminal_width=80)
    assert (trimmed.exit_code, trimmed.output) == (whole.exit_code, whole.output)
    if args in ([], ["--help"]):
        assert "check" in whole.output and "proxy" in whole.output


def test_a_command_runs_as_before(tmp_path):
    path = tmp_path / "small.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    r = subprocess.run([sys.executable, "-m", "agentdbg", "check", str(path), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and '"findings": []' in r.stdout.replace(" ", "").replace(
        '"findings":[]', '"findings": []'), r.stdout + r.stderr
