"""`agentdbg --help` builds only what it shows: each command's name and help (from
``cli/listing.py``), none of their options, no command module imported; a command builds only
itself and imports only its module. What they print is what the whole app prints."""

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentdbg.cli import app, built_for, listing_source

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
# what main() runs, less its end: --help ends the process without returning
from agentdbg.cli import built_for
try:
    built_for(sys.argv[1:])(prog_name="agentdbg")
except SystemExit:
    pass
print("READ", *sorted(set(read)), file=sys.stderr)
'''


def options_read(*args: str) -> set[str]:
    """The functions whose signatures typer read for ``agentdbg ARGS``."""
    r = subprocess.run([sys.executable, "-c", COUNTED, *args], capture_output=True, text=True)
    return set(next(line for line in r.stderr.splitlines() if line.startswith("READ")).split()[1:])


def test_the_list_of_commands_reads_no_commands_options():
    # the root's options (--version) only: the listed commands are made from cli/listing.py
    assert options_read("--help") == {"_root", "_version"}
    assert options_read() == {"_root", "_version"}
    read = options_read("check", "--help")    # check's options and their callbacks only
    assert "check" in read and not read & {"run", "replay", "proxy", "serve", "listed"}


#: the command modules ``agentdbg ARGS`` imported
IMPORTED = r'''
import sys
# what main() runs, less its end: --help ends the process without returning
from agentdbg.cli import built_for
try:
    built_for(sys.argv[1:])(prog_name="agentdbg")
except SystemExit:
    pass
from agentdbg.cli.app import COMMAND_MODULES
print("IMPORTED", *[m for m in COMMAND_MODULES if "agentdbg.cli." + m in sys.modules], file=sys.stderr)
'''


def modules_imported(*args: str, env: dict[str, str] | None = None) -> list[str]:
    r = subprocess.run([sys.executable, "-c", IMPORTED, *args], capture_output=True, text=True,
                       env=env)
    return next(line for line in r.stderr.splitlines() if line.startswith("IMPORTED")).split()[1:]


def test_the_list_of_commands_imports_no_command_module_and_a_command_only_its_own():
    assert modules_imported("--help") == []
    assert modules_imported() == []
    assert modules_imported("--version") == []
    assert modules_imported("check", "--help") == ["inspect"]
    assert modules_imported("replay", "--help") == ["run"]
    assert modules_imported("--help", env={**__import__("os").environ, "AGENTDBG_LANG": "zh"}) == []
    assert len(modules_imported("chek")) == 6       # a typo: the whole app suggests a command


def test_the_listing_is_current():
    path = Path(__file__).resolve().parent.parent / "agentdbg" / "cli" / "listing.py"
    assert path.read_text(encoding="utf-8") == listing_source(app.registered_commands), \
        "a command's name or docstring changed: run python scripts/cli_listing.py"


def test_the_whole_app_keeps_the_help_order_after_one_module_was_loaded_first():
    code = ("from agentdbg.cli import app, listing, _name\n"
            "app.load('traces')\n"
            "print(' '.join(_name(i) for i in app.registered_commands))\n"
            "print(' '.join(name for name, *_ in listing.COMMANDS))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    got, listed = r.stdout.splitlines()
    assert got == listed and got.startswith("run replay runs") and got.endswith("import collect trust")


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["check", "--help"],
                                  ["replay", "--help"], ["chek"], ["--", "check"], ["--nope"]])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_the_trimmed_app_prints_is_what_the_whole_app_prints(args, lang):
    runner = CliRunner()
    env = {"AGENTDBG_LANG": lang}
    whole = runner.invoke(app, args, prog_name="agentdbg", terminal_width=80, env=env)
    trimmed = runner.invoke(built_for(args), args, prog_name="agentdbg", terminal_width=80, env=env)
    assert (trimmed.exit_code, trimmed.output) == (whole.exit_code, whole.output)
    if args in ([], ["--help"]):
        assert "check" in whole.output and "proxy" in whole.output
        assert ("检查" in whole.output) == (lang == "zh")


def test_a_command_runs_as_before(tmp_path):
    path = tmp_path / "small.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    r = subprocess.run([sys.executable, "-m", "agentdbg", "check", str(path), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and '"findings": []' in r.stdout.replace(" ", "").replace(
        '"findings":[]', '"findings": []'), r.stdout + r.stderr


def test_help_in_chinese_does_not_import_richs_text_classes():
    # rich.text (and what it imports) cost more than the rest of `run --help` in Chinese
    code = ("import sys\nfrom agentdbg.cli import built_for\n"
            "try:\n    built_for(sys.argv[1:])(prog_name='agentdbg')\nexcept SystemExit:\n    pass\n"
            "print('RICH_TEXT', 'rich.text' in sys.modules, file=sys.stderr)\n")
    env = {**__import__("os").environ, "AGENTDBG_LANG": "zh"}
    for args in (["--help"], ["run", "--help"], ["check", "--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
        assert "用法" in r.stdout and "RICH_TEXT False" in r.stderr, (args, r.stderr[-500:])


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["--help", "--version"],
                                  ["run", "--help"], ["proxy", "--help"], ["check", "--help"]])
def test_what_only_prints_prints_whole_through_a_pipe_and_exits_as_before(args):
    # these end without the interpreter's teardown: what they printed must be flushed first
    env = {**__import__("os").environ, "COLUMNS": "80", "AGENTDBG_LANG": "en"}
    r = subprocess.run([sys.executable, "-m", "agentdbg", *args], capture_output=True, text=True,
                       env=env)
    whole = subprocess.run([sys.executable, "-c", "from agentdbg.cli import app\n"
                            "app(prog_name='agentdbg')", *args], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout, r.stderr) == (whole.returncode, whole.stdout, whole.stderr)
    assert (r.stdout + r.stderr).startswith(("Usage: agentdbg", "agentdbg 0"))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["--lang", "zh", "check", "--help"]])
def test_help_to_a_full_disk_is_one_line_not_a_traceback(args):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "agentdbg", *args], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1
    said = ("stdout：无法写入（No space left on device）" if "zh" in args
            else "stdout: cannot write it (No space left on device)")
    assert r.stderr == f"agentdbg: error: {said}\n", r.stderr


#: ``agentdbg collect`` with a Ctrl-C landing while its command module is imported, the way a
#: user's Ctrl-C in the first tenth of a second does: {how} is "raised" (in the import
#: itself) or "dropped" (in a finalizer run meanwhile, where Python prints "Exception
#: ignored in" and goes on)
INTERRUPTED = """
import gc, sys

class Dropped:
    def __del__(self):
        raise KeyboardInterrupt

class Finder:
    def find_spec(self, name, path=None, target=None):
        if name == "agentdbg.cli.traces":
            sys.meta_path.remove(self)
            if sys.argv.pop() == "raised":
                raise KeyboardInterrupt
            garbage = Dropped()
            garbage.cycle = garbage
            del garbage
            gc.collect()
        return None

sys.meta_path.insert(0, Finder())
from agentdbg.cli import main
sys.argv[1:1] = ["collect", "--port", "0"]
main()
"""


@pytest.mark.parametrize("how", ["raised", "dropped"])
def test_a_ctrl_c_while_the_command_starts_stops_it_in_one_line(how, tmp_path):
    # before: "raised" printed a KeyboardInterrupt traceback; "dropped" printed "Exception
    # ignored in" and then the collector ran, waiting for a second Ctrl-C
    r = subprocess.run([sys.executable, "-c", INTERRUPTED, how], capture_output=True, text=True,
                       timeout=30, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "agentdbg: interrupted (Ctrl-C)\n"), r.stdout
    assert "receiving OTLP" not in r.stdout


#: the same, with the Ctrl-C landing while the program loads typer, before ``agentdbg.cli``
#: exists: the program's own first lines (``agentdbg.entry``, the console script's target)
PROGRAM_INTERRUPTED = INTERRUPTED.replace('"agentdbg.cli.traces"', '"typer"').replace(
    "from agentdbg.cli import main", "from agentdbg.entry import main")


@pytest.mark.parametrize("how", ["raised", "dropped"])
def test_a_ctrl_c_while_the_program_loads_stops_it_in_one_line(how, tmp_path):
    # before: a KeyboardInterrupt traceback through typer's import ("raised"), or the
    # collector started after "Exception ignored in" ("dropped")
    r = subprocess.run([sys.executable, "-c", PROGRAM_INTERRUPTED, how], capture_output=True,
                       text=True, timeout=30, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "agentdbg: interrupted (Ctrl-C)\n"), r.stdout
    assert "receiving OTLP" not in r.stdout


def test_the_program_and_python_m_start_at_the_entry():
    import tomllib

    root = Path(__file__).resolve().parent.parent
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["agentdbg"] == "agentdbg.entry:main"
    assert "from agentdbg.entry import main" in (root / "agentdbg" / "__main__.py").read_text()
