"""``agentdbg serve``: pick the model, bind, print the URL, serve until Ctrl-C."""

from __future__ import annotations

import sys

from agentdbg.errors import AgentdbgError


def serve_provider(offline: bool, replay_file, script):
    chosen = [name for name, on in (("--offline", offline), ("--replay", replay_file),
                                    ("--script", script)) if on]
    if len(chosen) > 1:
        raise AgentdbgError(f"choose one of --offline, --replay, --script (got {', '.join(chosen)})")
    if replay_file is not None:
        from agentdbg.providers.replay import ReplayModel
        from agentdbg.transcript import is_transcript

        if not is_transcript(replay_file):
            raise AgentdbgError(f"{replay_file}: not an agentdbg transcript")
        model = ReplayModel(replay_file)
        return _ServedReplay(model), f"the recording {replay_file}"
    if script is not None:
        from agentdbg.providers.scripted import ScriptedModel

        return ScriptedModel.from_file(script), f"the script {script}"
    from agentdbg.providers.offline import OfflineModel

    return OfflineModel(), "the offline model"


class _ServedReplay:
    """A recording served to an app: responses in order, skipping tool and action events."""

    name = "replay"

    def __init__(self, model):
        self.model = model

    def complete(self, request):
        while True:  # actions and stops of the recording do not concern an outside app
            event = self.model.peek()
            if event is None or event["type"] not in ("action", "stop", "blocked"):
                break
            self.model.pop()
        return self.model.complete(request)


def run_serve(*, offline: bool, replay_file, script, host: str, port: int) -> None:
    from agentdbg.server.serve import bind, make_app, run_app, url_of

    provider, desc = serve_provider(offline, replay_file, script)
    sock = bind(host, port)
    url = url_of(sock)

    def ready():
        print(f"agentdbg serve: {desc} at {url}", flush=True)
        print(f"  export OPENAI_BASE_URL={url} OPENAI_API_KEY=anything", flush=True)

    run_app(make_app(provider), sock, on_ready=ready)
    sys.stdout.flush()
