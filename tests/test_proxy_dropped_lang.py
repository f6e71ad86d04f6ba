"""Why the proxy dropped a body (its spool full or changed, the stop not waiting) is said in the
chosen language where it is shown, and recorded in English in the transcript."""

import io
import json
import re
from pathlib import Path

from rich.console import Console

from agentdbg import i18n
from agentdbg.server.proxy.analyst import Analysis, _run_job
from agentdbg.server.proxy.conversations import Tracker
from agentdbg.server.proxy.spool import Dropped, Spool, take
from agentdbg.server.proxy.view import ProxyView
from agentdbg.server.proxy.workers import _unpacked

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "订单 ORD-2026-001 到哪里了?"}]}


def analysis(tmp_path):
    tracker = Tracker(tmp_path / "saved", "http://upstream.invalid/v1")
    out = io.StringIO()
    return Analysis(tracker, ProxyView(Console(file=out, width=200), tracker.redactor), "openai"), out


def drops(tmp_path) -> list[Dropped]:
    """A body the spool could not keep (full), one gone and one changed on disk, and one the
    stop did not wait for: each as the proxy makes it."""
    full = Spool(tmp_path / "spool", disk_limit=10).keep(b"x" * 100, 0)
    spool = Spool(tmp_path / "spool")
    gone = spool.keep(b"gone", 0)
    Path(gone.path).unlink()
    changed = spool.keep(b"changed", 0)
    Path(changed.path).write_bytes(b"other!!!")
    stopped = _unpacked(("response", 1, 200, b"{}", 1.0, False), [0, 0], skip=True)[3]
    found = [full, take(gone), take(changed), stopped]
    assert all(isinstance(d, Dropped) for d in found), found
    return found


def test_a_dropped_request_and_response_say_why_in_chinese_and_record_english(tmp_path):
    reasons = drops(tmp_path)
    english = [str(d.why) for d in reasons]
    assert english[0].startswith("the analysis backlog was full (0 MB waiting on disk in ")
    assert english[1].startswith("its body was gone from the spool (")
    assert english[2:] == ["its body in the spool was changed",
                           "the proxy stopped before agentdbg analysed it"]
    i18n.use("zh")
    try:
        job, out = analysis(tmp_path)
        for n, dropped in enumerate(reasons, start=1):    # a request never read
            _run_job(job, ("request", n, dropped, "127.0.0.1:1", False, "chat"))
        raw = json.dumps(REQUEST).encode()
        for n, dropped in enumerate(reasons, start=10):   # a response never read
            _run_job(job, ("request", n, raw, "127.0.0.1:1", False, "chat"))
            _run_job(job, ("response", n, 200, dropped, 1.0, False))
        finished = job.handle(("close",))
    finally:
        i18n.use("en")
    printed = out.getvalue()
    shown = [line for line in printed.splitlines() + job.unrecorded
             if "#" in line or "HTTP 200" in line or "请求" in line]
    for line in shown:    # each reason in Chinese: no English sentence after the colon
        why = re.split(r"[:：]", line)[-1]
        assert not re.search(r"\b(the|its|was|before|could)\b", why), line
    assert "代理在 agentdbg 分析它之前就停止了" in printed
    assert "spool 中它的正文被改动了" in printed
    assert printed.count("代理在 agentdbg 分析它之前就停止了") == 2
    assert len(job.unrecorded) == 8
    # the transcripts keep English: a response's model error says why as recorded
    events = [json.loads(line) for path in finished for line in Path(path).read_text("utf-8").splitlines()]
    errors = [e for e in events if e["type"] == "model_error"]
    assert [e["message"].split("did not analyse the response: ", 1)[1] for e in errors] == english
    assert all(e["message"].startswith("HTTP 200: the upstream answered (") for e in errors)
