"""A long session file is imported in the memory of one conversation, not of the file: it is
streamed, each compacted conversation's transcript is completed when the compaction is read and
what was kept for it let go, and converting a request converts only what it adds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentdbg.traces import read_items
from agentdbg.transcript import load_transcript
from agentdbg.transcript.events import Request
from agentdbg.transcript.imported import Recorder

from .big_session import generate
from .tests_env import clean_env


def test_a_compacted_conversation_is_complete_and_let_go_as_soon_as_the_compaction_is_read(tmp_path):
    from agentdbg.traces.exchange import Ended

    source = tmp_path / "session.jsonl"
    generate(source, 0.5, turns=10, output=400)
    rec = Recorder(tmp_path / "out", "s")
    ended = 0
    for item in read_items(source, "claude-code"):
        rec.add(item)
        if isinstance(item, Ended):
            ended += 1
            done = rec.conversations[item.key]
            assert done.writer is None and done.last_messages == []           # nothing kept
            lines = done.written.path.read_text(encoding="utf-8").splitlines()
            assert json.loads(lines[-1])["type"] == "stop"                   # already complete
            assert sum(c.writer is not None for c in rec.conversations.values()) <= 1
    written = rec.close()
    assert ended > 20 and len(written) == ended + 1
    first, second = (load_transcript(w.path) for w in written[:2])
    assert second.header.started_by.path == str(written[0].path)         # linked by its path
    assert len([e for e in first.events if isinstance(e, Request)]) == 10


def _peak_rss_mb(source: Path, out: Path) -> float:
    proc = subprocess.Popen([sys.executable, "-m", "agentdbg", "import", str(source), "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, err.decode()[-2000:]
    return usage.ru_maxrss / 1024


@pytest.mark.slow
def test_importing_an_eight_times_longer_session_takes_no_more_memory(tmp_path):
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    generate(small, 3, turns=40)
    generate(large, 24, turns=40)
    a = _peak_rss_mb(small, tmp_path / "a")
    b = _peak_rss_mb(large, tmp_path / "b")
    assert b - a < 6, (a, b)     # before: every conversation stayed in memory (+1 MB per MB read)
