"""A real recording to mutate: a run with a tool call, a 'fail' fault and an 'edit'."""

import functools
import json
import os
import tempfile


@functools.lru_cache(maxsize=1)
def _events_text() -> str:
    from agentdbg.engine.faults import Fault
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import bundled_tools_path, load_tools
    from agentdbg.transcript import start_transcript

    path = os.path.join(tempfile.mkdtemp(), "base.jsonl")
    s = Session.for_question(OfflineModel(), load_tools(bundled_tools_path()),
                             "订单 ORD-2026-001 到哪里了?", RunConfig(approve="all"))
    writer = start_transcript(s, path, model="offline", provider="offline", base_url=None,
                              question="q")
    s.step()
    s.fail("get_weather", Fault("timeout", ""))  # an action event: fail
    s.step()
    s.edit(1, dict(s.messages[1]))              # an action event: edit
    while not s.done:
        s.step()
    writer.close()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def recording_events() -> list[dict]:
    """A fresh copy of the recording's events (header first)."""
    return [json.loads(line) for line in _events_text().split("\n") if line]


def write_events(path, events) -> str:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                    encoding="utf-8")
    return str(path)
