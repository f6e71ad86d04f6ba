"""The offline model on tool files the samples do not cover: each domain folder holds a
``tools.yaml`` and ``cases.yaml`` (a question, the expected plan turn by turn, and what the
answer and the notes must say). Every case runs through the real engine with fixture handlers."""

from pathlib import Path

import pytest
import yaml

from agentdbg.engine.session import RunConfig, Session, StopReason
from agentdbg.providers.offline import OfflineModel
from agentdbg.toolspec import load_tools

HERE = Path(__file__).parent
DOMAINS = sorted(p.name for p in HERE.iterdir() if (p / "cases.yaml").is_file())


def cases():
    for domain in DOMAINS:
        for case in yaml.safe_load((HERE / domain / "cases.yaml").read_text(encoding="utf-8")):
            yield pytest.param(domain, case, id=f"{domain}:{case['id']}")


def plan_of(session):
    import json

    return [[{c["function"]["name"]: json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
            for m in session.messages if m["role"] == "assistant"]


def expected_plan(case):
    return [[dict(call) for call in turn] for turn in case["plan"]]


def test_at_least_four_domains_with_negative_cases():
    assert len(DOMAINS) >= 4
    for domain in DOMAINS:
        listed = yaml.safe_load((HERE / domain / "cases.yaml").read_text(encoding="utf-8"))
        assert any(c["plan"] == [[]] or "config" in c for c in listed), domain


@pytest.mark.parametrize(("domain", "case"), list(cases()))
def test_plan(domain, case):
    tools = load_tools(HERE / domain / "tools.yaml")
    s = Session.for_question(OfflineModel(), tools, case["question"],
                             RunConfig(approve="all", **case.get("config", {})))
    list(s.run())
    assert plan_of(s) == expected_plan(case)
    assert s.stop_reason is StopReason.COMPLETED
    for text in case.get("answer_has", []):
        assert text in s.answer(), (text, s.answer())
    for text in case.get("answer_lacks", []):
        assert text not in s.answer(), (text, s.answer())
    notes = " | ".join(t.note or "" for t in s.turns)
    for text in case.get("note_has", []):
        assert text in notes, (text, notes)
    ids = [c["id"] for m in s.messages for c in m.get("tool_calls") or []]
    assert len(ids) == len(set(ids))
