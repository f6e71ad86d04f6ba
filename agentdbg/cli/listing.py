"""The list of commands ``agentdbg --help`` shows, without importing the modules that define them.

Made by ``python scripts/cli_listing.py`` from the commands' docstrings; ``tests/test_cli_startup.py``
fails when it is not current."""

#: (name, module in agentdbg.cli, help, short_help, hidden, deprecated), in --help order
COMMANDS = (
    ('run', 'run',
     "Run the tool loop on QUESTION and show every turn's full messages array.",
     None, False, False),
    ('replay', 'run',
     'Replay a recorded run with no network, step through it, compare tools, or fork it.',
     None, False, False),
    ('runs', 'run',
     'List the saved runs (transcripts in the runs folder), newest first.',
     None, False, False),
    ('report', 'share',
     'Write one self-contained HTML page of a run to attach to a bug report: the timeline\n'
     'with each call tied to its result, findings, tokens, your edits, the stop (no network,\n'
     'no scripts, secrets redacted).',
     None, False, False),
    ('diff', 'share',
     'Compare two runs turn by turn and call by call: calls added, dropped or changed\n'
     '(arguments compared as JSON), results that differ, where they first diverge, and the\n'
     'difference in tokens, turns and stop reason.',
     None, False, False),
    ('export', 'share',
     'Export a run to OpenTelemetry with the GenAI semantic conventions: one invoke_agent\n'
     'span, a chat span per model request, an execute_tool span per call, findings as events.',
     None, False, False),
    ('check', 'inspect',
     'Check a request or a history against the protocol rules real APIs enforce (Chat\n'
     'Completions, the Responses API, the Anthropic Messages API).',
     None, False, False),
    ('tools', 'inspect',
     'List the tools of a tools.yaml and lint their definitions. Reads the file only: no\n'
     'handler is imported, no command run, no MCP server started (--connect starts them).',
     None, False, False),
    ('completion', 'inspect',
     'Print the shell completion script: commands, options and their values complete with Tab.',
     None, False, False),
    ('init', 'inspect',
     'Start a project: a commented tools.yaml and its handler module (handlers.py); never\n'
     'overwrites a file.',
     None, False, False),
    ('proxy', 'servers',
     'Sit between your app and its endpoint: check and show every request of your own loop.\n'
     '\n'
     'agentdbg proxy --offline -- python examples/agent_app.py "..."   runs an app through it.',
     None, False, False),
    ('serve', 'servers',
     'Serve a strict local model API (Chat Completions, Responses, Anthropic Messages; plain\n'
     'and streaming) answered by the offline model, a script or a recording, to test your own\n'
     'loop with no API key.',
     None, False, False),
    ('ui', 'servers',
     'Browse saved runs in the browser: open one (it updates while it is being written), or\n'
     'diff two. Served on loopback at a URL with a random token, printed once; Ctrl-C stops.',
     None, False, False),
    ('version', 'servers',
     'Print the agentdbg version (also: agentdbg --version).',
     None, False, False),
    ('import', 'traces',
     "Write other tools' records of runs as agentdbg transcripts, one per conversation.\n"
     '\n'
     'Every command that takes a transcript also reads these files directly (their first\n'
     "conversation); import writes each conversation, a subagent's linked to its parent's call.",
     None, False, False),
    ('collect', 'traces',
     'Receive OpenTelemetry traces (OTLP/HTTP, JSON or protobuf) on loopback: each model call\n'
     "becomes a conversation's request as it arrives, checked, shown and saved.\n"
     '\n'
     'Point an instrumented app at it: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318',
     None, False, False),
    ('trust', 'trust',
     'Trust a tools file agentdbg finds by itself (./tools.yaml): its python handlers may be\n'
     'imported, its commands run and its MCP servers started. Its content is recorded (the file\n'
     'and the handler modules and scripts it names): a change asks again. A file you name with\n'
     '--tools is trusted anyway.',
     None, False, False),
)

#: the module that defines each command
MODULES = {name: module for name, module, *_ in COMMANDS}
