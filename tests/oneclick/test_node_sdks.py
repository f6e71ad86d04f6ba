"""The SDKs for Node (`openai`, `@anthropic-ai/sdk` from npm, pinned) read the variables
`proxy -- CMD` sets: a Node app's loops on both APIs go through the proxy, offline."""

from __future__ import annotations

import json
from pathlib import Path

from . import npm_clients
from .helpers import QUESTION, agentdbg, summary_paths

APP = Path(__file__).with_name("node_app.mjs")


def test_a_node_app_s_openai_and_anthropic_loops_go_through_the_proxy(tmp_path):
    modules = npm_clients.ensure("node-sdks")
    (tmp_path / "node_modules").symlink_to(modules)          # where the app's imports resolve
    app = tmp_path / "app.mjs"
    app.write_text(APP.read_text(encoding="utf-8"), encoding="utf-8")
    run = agentdbg("proxy", "--offline", "--save", str(tmp_path / "saved"), "--", "node", str(app),
                   QUESTION, timeout=180)
    err = run.stderr.decode()
    assert run.returncode == 0, err
    out = run.stdout.decode()
    openai, anthropic = out.split("anthropic: ")
    # the offline model answers in the question's language, in sentences
    assert openai.startswith("openai: ") and "订单 ORD-2026-001 的 status 是 shipped" in openai
    assert "订单 ORD-2026-001 的 status 是 shipped" in anthropic
    paths = summary_paths(err)["transcripts"]
    apis = sorted(json.loads(p.read_text(encoding="utf-8").splitlines()[0])["api"] for p in paths)
    assert apis == ["anthropic", "chat"] and "4 requests in 2 conversations" in err
    assert "findings: none" in err
