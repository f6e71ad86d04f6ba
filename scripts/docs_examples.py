"""The examples of README.md and of the documentation pages (docs/), produced by running them.

    python scripts/docs_examples.py           # rewrite every example block from its command
    python scripts/docs_examples.py --check   # exit 1 (with a diff) when a page differs
    python scripts/docs_examples.py init      # only the blocks of these examples

An example block is the fenced block right after a marker line ``<!-- example: NAME -->``;
``NAME`` is a function below that runs the example's commands with the agentdbg of this
interpreter and returns the block's text. The recipe block (``<!-- recipe: NAME -->``) is
not rewritten: its commands are run as written (``run_recipe``), and an example may show
what they print. A file block (``<!-- file: NAME -->``) is a file as the page shows it (the
lesson of docs/teaching.md): not rewritten, an example runs it (``block(NAME).body``).
``tests/readme/`` runs them all, so no page can drift from the program. The same
example may appear on several pages (the README's quick starts and their reference page).

Commands run in a temporary folder holding a copy of ``examples/``, with an empty
``AGENTDBG_HOME``, no API key, no colour and ``COLUMNS`` fixed; piped output (no padding,
single values whole) or, for step mode, a real pseudo-terminal. Only what must vary from
run to run is normalised when comparing (``normalise``): timings, the scratch folder's
paths, ports, run names and creation times, trace ids, and what the MCP time server says
about today; the MCP examples are compared word by word (``REFLOWED``).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md and every page of the site (not docs/notes/, the helpers' drafts)."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "notes" not in p.relative_to(DOCS).parts)]
WIDTH = 90              # COLUMNS for piped examples; step mode is a pty at 80
ORDER_Q = "订单 ORD-2026-001 到哪里了?"
HOTTER_Q = "北京和上海今天哪个更热?"
MARKER = re.compile(r"^<!-- (example|recipe|file): ([\w-]+) -->$")


# -- finding the blocks -----------------------------------------------------------------

@dataclass
class Block:
    kind: str           # example | recipe | file
    name: str
    fence: str          # the opening fence line, e.g. "```text"
    start: int          # line index of the first body line
    end: int            # line index of the closing fence
    body: str


def blocks(text: str, source: str = "README.md") -> list[Block]:
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        fence = lines[i + 1] if i + 1 < len(lines) else ""
        if not fence.lstrip().startswith("```"):
            raise SystemExit(f"{source}:{i + 1}: marker {m.group(2)!r} is not followed by a fence")
        close = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        found.append(Block(m.group(1), m.group(2), fence, i + 2, close,
                           "\n".join(lines[i + 2:close])))
    return found


def block(name: str, text: str | None = None) -> Block:
    """The block ``name`` of ``text``, else of the first page that has it."""
    texts = [text] if text is not None else [p.read_text(encoding="utf-8") for p in pages()]
    return next(b for t in texts for b in blocks(t) if b.name == name)


# -- running commands -------------------------------------------------------------------

class Runner:
    """A scratch folder with a copy of examples/, and an environment like a fresh machine's."""

    def __init__(self, folder: Path, width: int = WIDTH):
        self.folder = folder
        shutil.copytree(ROOT / "examples", folder / "examples")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "AGENTDBG_", "COLUMNS", "LINES"))}
        env.update(AGENTDBG_HOME=str(folder / "home"), NO_COLOR="1", COLUMNS=str(width),
                   PYTHONIOENCODING="utf-8",
                   PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
        self.env = env

    def run(self, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=self.folder, env=self.env, text=True,
                              capture_output=True, timeout=timeout)

    def output(self, command: str) -> str:
        done = self.run(command)
        if done.stderr.strip() and "Traceback" in done.stderr:
            raise RuntimeError(f"{command}: {done.stderr}")
        return clean(done.stdout)

    def start(self, command: str) -> subprocess.Popen:
        """A server in the background (``exec``: the process is agentdbg itself)."""
        return subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=self.folder, env=self.env,
                                text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def session(self, command: list[str], inputs: list[str], width: int = 80) -> str:
        """A step-mode session in a real pseudo-terminal (TERM=dumb: plain text), typing
        ``inputs`` at each prompt; the prompt lines show what was typed."""
        import pexpect

        env = {**self.env, "TERM": "dumb", "PROMPT_TOOLKIT_NO_CPR": "1"}
        child = pexpect.spawn(command[0], command[1:], env=env, cwd=str(self.folder),
                              encoding="utf-8", dimensions=(50, width), timeout=60, echo=False)
        seen = []
        try:
            for line in inputs:
                child.expect_exact("(agentdbg) ")
                seen.append(child.before + child.after)
                child.sendline(line)
            child.expect(pexpect.EOF)
            seen.append(child.before)
        finally:
            child.close()
        # a line typed before the prompt took the terminal over may leave an empty line
        return re.sub(r"^(\(agentdbg\) .*)\n\n", r"\1\n", clean("".join(seen)), flags=re.M)


def clean(text: str) -> str:
    """What a reader sees: no terminal codes, no carriage returns, no trailing spaces."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {process.stdout.read() if process.stdout else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout:g}s")


# -- the recipe, as written ------------------------------------------------------------

@dataclass
class RecipeRun:
    app: subprocess.CompletedProcess
    servers: list[str]          # each background command's output
    folder: Path


def recipe_commands(name: str = "debug-your-app") -> list[str]:
    """The recipe's command lines, comments removed."""
    lines = []
    for line in block(name).body.splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command:
            lines.append(command)
    return lines


@contextmanager
def scratch() -> Iterator[Runner]:
    with tempfile.TemporaryDirectory(prefix="agentdbg-readme-") as tmp:
        yield Runner(Path(tmp))


def run_recipe(runner: Runner, app_args: str = "", name: str = "debug-your-app") -> RecipeRun:
    """Run the recipe line by line as a person types it: each ``&`` line is started and
    waited for (until its port listens), the rest run in one shell. The ports the recipe
    names are replaced by free ones (two test runs at once must not collide)."""
    commands = recipe_commands(name)
    ports = sorted(set(re.findall(r"--port (\d+)", " ".join(commands))))
    mapping = {p: str(free_port()) for p in ports}
    pattern = re.compile("|".join(rf"\b{p}\b" for p in ports)) if ports else None

    def local(command: str) -> str:
        return pattern.sub(lambda m: mapping[m.group(0)], command) if pattern else command

    servers: list[tuple[subprocess.Popen, int]] = []
    outputs: list[str] = []
    foreground = []
    try:
        for command in map(local, commands):
            if command.endswith("&"):
                command = command[:-1].strip()
                process = runner.start(command)
                port = int(re.search(r"--port (\d+)", command).group(1))  # type: ignore[union-attr]
                wait_for_port(port, process)
                servers.append((process, port))
            else:
                foreground.append(command)
        if app_args:
            foreground[-1] = f"{foreground[-1]} {app_args}"
        app = runner.run("set -e\n" + "\n".join(foreground))
    finally:
        for process, _ in reversed(servers):
            process.send_signal(signal.SIGINT)
            try:
                out, _ = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                out, _ = process.communicate()
            outputs.append(clean(out or ""))
    return RecipeRun(app, list(reversed(outputs)), runner.folder)


# -- the examples ----------------------------------------------------------------------

def between(text: str, start: str, end: str | None = None, *, include_end: bool = False) -> str:
    """The lines from the first one starting with ``start`` up to the next one starting
    with ``end`` (excluded unless ``include_end``), or to the end."""
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(start))
    if end is None:
        return "\n".join(lines[i:])
    j = next(n for n in range(i + 1, len(lines)) if lines[n].startswith(end))
    return "\n".join(lines[i:j + 1 if include_end else j])


def ex_run_turn(runner: Runner) -> str:
    out = runner.output(f'agentdbg run "{ORDER_Q}"')
    return between(out, "turn 2 ", "turn 3 ")


LESSON_INPUTS = [
    ("", "Enter: the model asks for query_order"),
    ("", "Enter: the app runs it, answers call_o1"),
    ("fail query_logistics timeout", "break the next step on purpose"),
    ("continue", ""),
    ("quit", ""),
]


def ex_step_lesson(runner: Runner) -> str:
    command = ["agentdbg", "run", "--step", "--explain", ORDER_Q]
    out = runner.session(command, [typed for typed, _ in LESSON_INPUTS])
    for typed, note in LESSON_INPUTS:  # the notes sit next to what was typed
        if note:
            typed_line = f"(agentdbg) {typed}".rstrip()
            out = out.replace(f"\n{typed_line}\n", f"\n{typed_line.ljust(46)}← {note}\n", 1)
    head = between(out, "▶ next: ask the model (turn 1)", "(agentdbg) continue", include_end=True)
    fault = between(out, "  [4] tool", "▶ next:")
    retry = between(out, "model note: retrying", "  (messages")
    stop = between(out, "■ stopped:", "The model answered")
    return "\n".join([f'$ agentdbg run --step --explain "{ORDER_Q}"', head, "  ...", fault,
                      retry, "  ...", stop])


def ex_offline_400(runner: Runner) -> str:
    """The API's own 400 from the offline model: the assistant message dropped, its result
    left an orphan, the request blocked, then sent anyway."""
    out = runner.session(["agentdbg", "run", "--step", ORDER_Q], ["", "", "drop 1", "", "send", "quit"])
    return "\n".join([f'$ agentdbg run --step "{ORDER_Q}"', "  ...",
                      between(out, "(agentdbg) drop 1", "(agentdbg) quit")])


def ex_offline_answer(runner: Runner) -> str:
    out = runner.output(f'agentdbg run "{HOTTER_Q}"')
    return f'$ agentdbg run "{HOTTER_Q}"\n  ...\n' + between(out, "╭─ answer", "stop: ")


def ex_check_zh(runner: Runner) -> str:
    command = "agentdbg check examples/missing_assistant.json --lang zh"
    return f"$ {command}\n" + runner.output(command)


#: the Enters the lesson of docs/teaching.md waits for: its paused step, its breakpoint, its
#: fault's pause and its paused drop; then the run has stopped on the API's 400
LESSON_PAUSES = 4


def ex_handout(runner: Runner) -> str:
    """The lesson of docs/teaching.md, as the page shows it (its ``lesson-yaml`` block), run
    with Enter at each pause and recorded, then its handout: the command's line, and the page's
    headings."""
    (runner.folder / "lesson.yaml").write_text(block("lesson-yaml").body + "\n", encoding="utf-8")
    run = "agentdbg run --lesson lesson.yaml --save class.jsonl"
    done = runner.run(f"(for _ in $(seq {LESSON_PAUSES}); do echo; done; echo quit) | {run}")
    if done.returncode != 7 or "API 拒绝了这个请求（HTTP 400）" not in done.stdout:
        raise RuntimeError(f"the docs' lesson did not reach its 400 with {LESSON_PAUSES} Enters:\n"
                           + done.stdout[-2000:] + done.stderr)
    command = "agentdbg report class.jsonl --handout --lesson lesson.yaml --lang zh -o handout.html"
    out = runner.output(command)
    grep = "grep -o '<h2>[^<]*' handout.html"
    return (f"$ {run}      # Enter at each of its {LESSON_PAUSES} pauses, then quit\n"
            f"$ {command}\n{out.rstrip()}\n$ {grep}\n{runner.output(grep).rstrip()}")


def ex_check(path: str) -> Callable[[Runner], str]:
    def example(runner: Runner) -> str:
        return f"$ agentdbg check {path}\n" + runner.output(f"agentdbg check {path}")
    return example


CLIENT_LINES = "one-line-per-client"


def one_line_app(name: str = CLIENT_LINES) -> str:
    """The recipe's line that runs an app (the others start a coding agent, which needs its
    own installation and a terminal: tests/oneclick/test_coding_agents.py runs each)."""
    return next(c for c in recipe_commands(name) if " -- python " in c)


def ex_proxy_summary(runner: Runner) -> str:
    """The app line of the one-line recipe, as typed: the app's output, then the summary."""
    line = one_line_app()
    done = runner.run(line)
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise RuntimeError(f"{line}: {done.stderr}")
    return "\n".join([f"$ {line}", clean(done.stdout), clean(done.stderr)])


def ex_proxy_drop_results(runner: Runner) -> str:
    run = run_recipe(runner, "--drop-results")
    proxy = next(out for out in run.servers if "agentdbg proxy:" in out)
    return between(proxy, "request 2 ", "✗ ", include_end=True)


def commands(runner: Runner, *lines: str) -> str:
    """Each command with what it prints, as typed in a shell (stdout and stderr)."""
    out = []
    for line in lines:
        done = runner.run(line)
        if "Traceback" in done.stderr:
            raise RuntimeError(f"{line}: {done.stderr}")
        out += [f"$ {line}", clean(done.stdout + done.stderr)]
    return "\n".join(part for part in out if part)


def ex_runs(runner: Runner) -> str:
    for question in (ORDER_Q, HOTTER_Q):
        runner.output(f'agentdbg run "{question}"')
    return commands(runner, "agentdbg runs")


def save_order_run(runner: Runner) -> None:
    runner.output(f'agentdbg run "{ORDER_Q}" --save order.jsonl')


def ex_diff(runner: Runner) -> str:
    save_order_run(runner)
    runner.output(f'agentdbg run "{ORDER_Q}" --script examples/wrong_tracking.yaml --save wrong.jsonl')
    return commands(runner, "agentdbg diff order.jsonl wrong.jsonl")


def ex_share(runner: Runner) -> str:
    save_order_run(runner)
    return commands(runner, "agentdbg report order.jsonl -o order.html",
                    "agentdbg export order.jsonl --format otlp-json -o order.otlp.json")


def ex_transcript_bad_fields(runner: Runner) -> str:
    """Two recordings with one field broken each: one line naming the line and the field."""
    save_order_run(runner)
    return commands(runner,
                    """sed '1s/"max_turns": 8/"max_turns": "x"/' order.jsonl > odd.jsonl""",
                    "agentdbg report odd.jsonl",
                    """sed '2s/"prefix": 1, //' order.jsonl > cut.jsonl""",
                    "agentdbg check cut.jsonl")


MCP_TIME = "python -m mcp_server_time --local-timezone Europe/Paris"
TIME_Q = "What time is it in Asia/Tokyo, and what is 09:30 Paris time in New York?"


def ex_mcp_tools(runner: Runner) -> str:
    return commands(runner, "agentdbg tools --connect examples/mcp_tools.yaml")


def ex_mcp_run(runner: Runner) -> str:
    """In a terminal (a pty, 80 columns), where the long model note wraps."""
    out = runner.session(["agentdbg", "run", "--mcp", MCP_TIME, TIME_Q], [])
    server = out.split("\n", 1)[0]
    turn = between(out, "turn 1 ", "turn 2 ")
    stop = between(out, "stop: ", "usage: ")
    return "\n".join([f'$ agentdbg run --mcp "{MCP_TIME}" \\\n    "{TIME_Q}"', server, "  ...",
                      turn, "  ...", stop])


MCP_STEP_INPUTS = ["", "fail get_current_time timeout", "", "rpc call_o2",
                   "inject call_o2 not_found", "continue", "quit"]


def ex_mcp_step(runner: Runner) -> str:
    command = ["agentdbg", "run", "--step", "--mcp", MCP_TIME, TIME_Q]
    out = runner.session(command, MCP_STEP_INPUTS)
    planned = between(out, "▶ next: execute 2 call(s)", "(agentdbg) rpc")
    rpc = between(out, "(agentdbg) rpc", '    "_meta"')
    injected = between(out, "(agentdbg) inject", "  [0] ")
    fault = between(out, "  [3] tool      ←", "(agentdbg) continue", include_end=True)
    retry = between(out, "model note: retrying", "  (messages")
    answer = between(out, "                I could not get", "                turn 3")
    return "\n".join([f'$ agentdbg run --step --mcp "{MCP_TIME}" \\\n    "{TIME_Q}"', "  ...",
                      planned, rpc, "  ...", injected, "  ...", fault, retry, "  ...", answer])


WEATHER_Q = "What's the weather in Paris?"


def in_project(runner: Runner, *lines: str) -> str:
    """``commands`` run in the scratch folder's ``project/`` (shown as typed there)."""
    (runner.folder / "project").mkdir(exist_ok=True)
    out = []
    for line in lines:
        done = runner.run(f"cd project && {line}")
        if "Traceback" in done.stderr:
            raise RuntimeError(f"{line}: {done.stderr}")
        out += [f"$ {line}", clean(done.stderr + done.stdout)]
    return "\n".join(part for part in out if part)


def ex_init(runner: Runner) -> str:
    out = in_project(runner, "agentdbg init", "agentdbg tools", f'agentdbg run "{WEATHER_Q}"')
    head, run = out.split(f'$ agentdbg run "{WEATHER_Q}"')
    return "\n".join([head.rstrip(), f'$ agentdbg run "{WEATHER_Q}"', "  ...",
                      between(run, "+ [2] tool", "turn 2 "), "  ...", between(run, "stop: ", "usage: ")])


def ex_handler_error(runner: Runner) -> str:
    """The handler's parameter renamed by mistake: what the model sees, and what you see."""
    in_project(runner, "agentdbg init")
    handlers = runner.folder / "project" / "handlers.py"
    handlers.write_text(handlers.read_text(encoding="utf-8").replace("city", "town"), encoding="utf-8")
    # named with --tools: an edited handler module makes a found ./tools.yaml ask to be
    # trusted again (agentdbg trust); a file you name runs as it is
    out = in_project(runner, f'agentdbg run --tools tools.yaml "{WEATHER_Q}"')
    warning = next(line for line in out.splitlines() if line.startswith("agentdbg: warning:"))
    return "\n".join([f'$ sed -i s/city/town/g handlers.py && agentdbg run --tools tools.yaml "{WEATHER_Q}"',
                      warning,
                      "  ...", between(out, "+ [2] tool", "turn 2 ")])


def ex_trust(runner: Runner) -> str:
    """A tools file agentdbg finds by itself (a copy of the project ``init`` made, as a clone
    would be) runs nothing until it is trusted."""
    in_project(runner, "agentdbg init")
    runner.run("cp -r project clone")
    out = []
    for line in (f'agentdbg run "{WEATHER_Q}"', "agentdbg trust", "agentdbg trust --list"):
        done = runner.run(f"cd clone && {line}")
        if "Traceback" in done.stderr:
            raise RuntimeError(f"{line}: {done.stderr}")
        out.append((line, clean(done.stderr + done.stdout)))
    (run_line, run), (trust_line, trust), (list_line, listed) = out
    header = between(run, "agentdbg: warning:", "│ The offline model")
    return "\n".join(["$ cp -r project clone && cd clone", f"$ {run_line}", header, "  ...",
                      between(run, "+ [2] tool", "turn 2 "), f"$ {trust_line}", trust,
                      f"$ {list_line}", listed])


def ex_help(runner: Runner) -> str:
    return commands(runner, "agentdbg --help")


def ex_lang_errors(runner: Runner) -> str:
    """An error and --help in Chinese: the language is chosen before anything is parsed."""
    return commands(runner, 'agentdbg run --lang zh -t lesson/tools.yaml "订单 ORD-2026-001 到哪里了?"',
                    "AGENTDBG_LANG=zh agentdbg tools --help | head -5")


def ex_lang_usage_error(runner: Runner) -> str:
    """Click's own usage error in Chinese (its English 'Error:' prefix kept)."""
    return commands(runner, 'agentdbg run --lang zh --max-turns abc "你好"')


TRACES = ROOT / "tests" / "fixtures" / "traces"
CLAUDE_SESSION = "0542af78-77da-41c1-9127-3d76f8fd6efd.jsonl"


def ex_import(runner: Runner) -> str:
    """A Claude Code session with its subagent and a Codex CLI rollout (the recordings of the
    real clients the importer's tests read), imported."""
    shutil.copy(TRACES / "claude-code" / CLAUDE_SESSION, runner.folder)
    shutil.copytree(TRACES / "claude-code" / CLAUDE_SESSION.removesuffix(".jsonl"),
                    runner.folder / CLAUDE_SESSION.removesuffix(".jsonl"))
    rollout = next((TRACES / "codex").glob("rollout-*.jsonl"))
    shutil.copy(rollout, runner.folder)
    return commands(runner, f"agentdbg import {CLAUDE_SESSION} -o imported",
                    f"agentdbg import {rollout.name} -o imported")


def ex_check_rules(runner: Runner) -> str:
    """The registry's first rules and its last, with the legend."""
    out = runner.output("agentdbg check --rules").rstrip("\n").split("\n")
    return "\n".join(["$ agentdbg check --rules", *out[:4], "...", *out[-5:]])


HANDOFF_LINE = "agentdbg proxy --script examples/handoff.yaml -- python examples/handoff_app.py"


def ex_multiagent(runner: Runner) -> str:
    """A handoff through the proxy (a run of two conversations), then the commands that take
    one conversation and work on the whole run."""
    done = runner.run(HANDOFF_LINE)
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise RuntimeError(f"{HANDOFF_LINE}: {done.stderr}")
    on_run = commands(runner, "agentdbg runs", "agentdbg report 2 -o run.html",
                      "agentdbg export 1 --format otlp-json -o spans.json")
    replay = runner.output("agentdbg replay 1").split("\n")     # after `runs`: it adds runs
    heads = [line for line in replay if line.lstrip().startswith("── ")]
    last = next(line for line in reversed(replay) if line.startswith("replayed "))
    return "\n".join([f"$ {HANDOFF_LINE}", clean(done.stdout), clean(done.stderr), on_run,
                      "$ agentdbg replay 1", heads[0], "  ...", heads[1], "  ...", last])


EXAMPLES: dict[str, Callable[[Runner], str]] = {
    "multiagent": ex_multiagent,
    "import": ex_import,
    "check-rules": ex_check_rules,
    "init": ex_init,
    "handler-error": ex_handler_error,
    "help": ex_help,
    "lang-errors": ex_lang_errors,
    "lang-usage-error": ex_lang_usage_error,
    "trust": ex_trust,
    "run-turn": ex_run_turn,
    "step-lesson": ex_step_lesson,
    "offline-400": ex_offline_400,
    "offline-answer": ex_offline_answer,
    "check-zh": ex_check_zh,
    "handout": ex_handout,
    "check-missing-assistant": ex_check("examples/missing_assistant.json"),
    "check-parallel-missing": ex_check("examples/parallel_missing.json"),
    "check-forgot-chat": ex_check("examples/forgot_chat.json"),
    "check-forgot-responses": ex_check("examples/forgot_responses.json"),
    "check-forgot-anthropic": ex_check("examples/forgot_anthropic.json"),
    "proxy-drop-results": ex_proxy_drop_results,
    "proxy-summary": ex_proxy_summary,
    "runs": ex_runs,
    "diff": ex_diff,
    "share": ex_share,
    "transcript-bad-fields": ex_transcript_bad_fields,
    "mcp-tools": ex_mcp_tools,
    "mcp-run": ex_mcp_run,
    "mcp-step": ex_mcp_step,
}


# -- regenerating and comparing --------------------------------------------------------

def regenerate(text: str, names: list[str] | None = None, source: str = "README.md",
               made: dict[str, str] | None = None) -> str:
    """``text`` with every example block (or those of ``names``) produced anew; ``made`` keeps
    what each example printed, for the other pages that show it."""
    made = {} if made is None else made
    lines = text.split("\n")
    for b in reversed(blocks(text, source)):
        if b.kind != "example" or (names and b.name not in names):
            continue
        if b.name not in EXAMPLES:
            raise SystemExit(f"{source}: no example function for {b.name!r}")
        if b.name not in made:
            with scratch() as runner:
                made[b.name] = EXAMPLES[b.name](runner)
        lines[b.start:b.end] = made[b.name].split("\n")
    return "\n".join(lines)


# Examples whose line breaks change from day to day: the MCP time server's weekday ("Monday",
# "Wednesday") and DST flag ("true", "false") differ in length, so the view wraps its result
# elsewhere. These blocks are compared word by word, their line breaks ignored.
REFLOWED = ("mcp-run", "mcp-step")


def normalise(text: str) -> str:
    """Only what must vary between runs; everything else is compared as printed."""
    # timings, the scratch folder's paths, the ports of servers started for an example
    text = re.sub(r"\d+(\.\d+)? ms\b", "<t> ms", text)
    text = re.sub(r"(/[^\s:]+)?/agentdbg-readme-[^\s]*", "<tmp>", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)
    # the runs folder names a transcript after its start time; `runs` shows when it was created
    text = re.sub(r"\b\d{8}-\d{6}-", "<stamp>-", text)
    text = re.sub(r"\bproxy-<stamp>-[0-9a-f]{4}\b", "proxy-<stamp>-<id>", text)   # + 2 random bytes
    text = re.sub(r"(exited with status \d+ after )\d+(\.\d+)? s\b", r"\1<t> s", text)
    text = re.sub(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b", "<created>", text)
    # OpenTelemetry trace ids are random
    text = re.sub(r"\btrace [0-9a-f]{32}\b", "trace <trace-id>", text)
    # an MCP exchange is timed in seconds since its server started
    text = re.sub(r"\b\d+\.\d{3}s\b", "<t>s", text)
    # the MCP time server answers with today's date and the time now, the weekday, whether
    # DST is on, and (on the days the two zones' DST rules disagree) another difference
    text = re.sub(r'(datetime"?[=:]\s*"?)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d',
                  r"\1<datetime>", text)
    text = re.sub(r'(day_of_week"?[=:]\s*"?)[A-Z][a-z]+', r"\1<weekday>", text)
    text = re.sub(r'(is_dst"?[=:]\s*)(true|false)', r"\1<dst>", text)
    text = re.sub(r'(time_difference"?[=:]\s*"?)[+-]?\d+(\.\d+)?h', r"\1<hours>", text)
    return text


def comparable(text: str) -> str:
    """``text`` normalised, with each REFLOWED block's words on one line."""
    lines = text.split("\n")
    for b in reversed(blocks(text)):
        if b.name in REFLOWED:
            lines[b.start:b.end] = [" ".join(b.body.split())]
    return normalise("\n".join(lines))


def differences(text: str | None = None, names: list[str] | None = None) -> str:
    """A unified diff of the pages (or of ``text``, as README.md) against what the commands print
    now ('' when equal)."""
    sources = [(README, text)] if text is not None else [(p, None) for p in pages()]
    made: dict[str, str] = {}
    out = []
    for path, given in sources:
        page = path.read_text(encoding="utf-8") if given is None else given
        name = str(path.relative_to(ROOT))
        fresh = regenerate(page, names, name, made)
        a, b = comparable(page).split("\n"), comparable(fresh).split("\n")
        out += difflib.unified_diff(a, b, name, "what the commands print", lineterm="", n=2)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("names", nargs="*", help="only these examples")
    args = parser.parse_args(argv)
    if args.check:
        diff = differences(None, args.names)
        print(diff or "the examples of README.md and docs/ match what the commands print")
        return 1 if diff else 0
    made: dict[str, str] = {}
    for path in pages():
        text = path.read_text(encoding="utf-8")
        fresh = regenerate(text, args.names, str(path.relative_to(ROOT)), made)
        if fresh != text:
            path.write_text(fresh, encoding="utf-8")
            print(f"rewrote the example blocks of {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
