"""Save one proxy transcript as a reproducer: the request bodies the app sent, in order, the
assistant message the upstream returned to each, and the transcript itself.

    python tests/frameworks/cases/save_case.py SAVED_TRANSCRIPT.jsonl CASE_NAME [--wire chat]

writes tests/frameworks/cases/CASE_NAME/{request-N.json, response-N.json, transcript.jsonl}.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from agentdbg.transcript import load_transcript, messages_over_time
from agentdbg.transcript.events import Request, Response

HERE = Path(__file__).resolve().parent


def save(transcript: Path, name: str) -> Path:
    folder = HERE / name
    folder.mkdir(parents=True, exist_ok=True)
    loaded = load_transcript(transcript)
    tools = loaded.header.tools or []
    requests = [e for e in loaded.events if isinstance(e, Request)]
    responses = [e for e in loaded.events if isinstance(e, Response)]
    for n, (event, messages) in enumerate(zip(requests, messages_over_time(loaded.events)), 1):
        body = {**event.param_map, "messages": messages, **({"tools": tools} if tools else {})}
        write(folder / f"request-{n}.json", body)
    for n, event in enumerate(responses, 1):
        write(folder / f"response-{n}.json", event.message)
    shutil.copyfile(transcript, folder / "transcript.jsonl")
    return folder


def write(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    print(save(Path(sys.argv[1]), sys.argv[2]))
