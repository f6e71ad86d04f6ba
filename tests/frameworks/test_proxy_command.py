"""`agentdbg proxy --offline -- CMD` with litellm, which finds its endpoints itself: a call with
no `api_base` reads OPENAI_BASE_URL (OpenAI models) and ANTHROPIC_API_BASE before
ANTHROPIC_BASE_URL (Anthropic models). Both must reach the proxy, even when the command's
environment named other endpoints for them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from fw_stack import agentdbg_env

APP = """
import litellm
messages = [{"role": "user", "content": "订单 ORD-2026-001 到哪里了?"}]
for model in ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"):
    reply = litellm.completion(model=model, messages=messages, max_tokens=200)
    print(model, bool(reply.choices[0].message.content))
"""


def test_litellm_finds_the_proxy_through_its_own_variables(envs, tmp_path):
    python = envs.python("litellm")
    env = {**agentdbg_env(tmp_path / "home"),
           # where this command thought it was going: nothing answers there
           "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "ANTHROPIC_API_BASE": "http://127.0.0.1:9",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run([sys.executable, "-m", "agentdbg", "proxy", "--offline", "--save",
                          str(tmp_path / "saved"), "--", str(python), "-c", APP],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["openai/gpt-4o-mini True", "anthropic/claude-sonnet-4-5 True"]
    assert "2 requests in 2 conversations" in run.stderr and "findings: none" in run.stderr
    paths = [Path(p) for p in re.findall(r"\s(/\S+-conversation-\d+\.jsonl)\n", run.stderr)]
    apis = sorted(json.loads(p.read_text(encoding="utf-8").splitlines()[0])["api"] for p in paths)
    assert apis == ["anthropic", "chat"]
