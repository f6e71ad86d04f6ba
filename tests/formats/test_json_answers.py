"""A request that asks for a JSON answer gets, from the offline model, JSON its schema accepts:
the official clients parse it (google-genai's `response_json_schema` and `response_schema`,
openai's `parse` with a pydantic model on Chat Completions and the Responses API), and any
schema, hostile ones included, gets a valid value at a bounded cost."""

import json
import time

import jsonschema
import openai
import pytest
from fmt_stack import QUESTION, Served
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentdbg.providers.offline_json import json_answer

# Gemini CLI's routing classifier, as it sends it (generationConfig.responseJsonSchema)
CLASSIFIER = {"type": "OBJECT", "properties": {
    "complexity_reasoning": {"type": "STRING", "description": "Brief explanation for the score."},
    "complexity_score": {"type": "INTEGER", "description": "Complexity score from 1-100.",
                         "minimum": 1, "maximum": 100}},
    "required": ["complexity_reasoning", "complexity_score"]}


def lower_types(schema):
    """The schema with OpenAPI's upper-case type names as JSON Schema writes them."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else lower_types(v))
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [lower_types(v) for v in schema]
    return schema


@pytest.fixture(scope="module")
def served():
    s = Served()
    yield s
    s.stop()


def genai_client(served):
    from google import genai
    from google.genai import types

    return genai.Client(api_key="AIza-test", http_options=types.HttpOptions(
        base_url=served.root, api_version="v1beta")), types


def test_google_genai_json_schema_answer_is_json_of_the_schema(served):
    client, types = genai_client(served)
    response = client.models.generate_content(
        model="gemini-2.5-flash", contents=QUESTION,
        config=types.GenerateContentConfig(response_mime_type="application/json",
                                           response_json_schema=CLASSIFIER))
    answer = json.loads(response.text)
    jsonschema.validate(answer, lower_types(CLASSIFIER))
    assert 1 <= answer["complexity_score"] <= 100


def test_a_range_the_description_states_is_kept_when_the_schema_has_no_bounds():
    # Gemini CLI 0.61.0 sends its classifier's score without minimum/maximum, and rejects 0
    # with its own check ("Number must be greater than or equal to 1")
    sent = json.loads(json.dumps(CLASSIFIER))
    for key in ("minimum", "maximum"):
        del sent["properties"]["complexity_score"][key]
    assert 1 <= json.loads(json_answer(sent, "x"))["complexity_score"] <= 100
    between = {"type": "number", "description": "a ratio between 0.5 and 2"}
    assert json.loads(json_answer(between, "x")) == 0.5
    assert json.loads(json_answer({"type": "integer", "description": "the year 2026"}, "x")) == 0


def test_google_genai_response_schema_parses_into_the_pydantic_model(served):
    class Shipment(BaseModel):
        order_id: str
        delivered: bool
        events: list[str]

    client, types = genai_client(served)
    response = client.models.generate_content(
        model="gemini-2.5-flash", contents=QUESTION,
        config=types.GenerateContentConfig(response_mime_type="application/json",
                                           response_schema=Shipment))
    assert isinstance(response.parsed, Shipment)


def test_openai_parse_gets_its_model_on_chat_completions_and_responses(served):
    class Verdict(BaseModel):
        summary: str
        score: int

    client = openai.OpenAI(base_url=served.url, api_key="sk-test", max_retries=0)
    chat = client.chat.completions.parse(model="gpt-4.1-mini", response_format=Verdict,
                                         messages=[{"role": "user", "content": QUESTION}])
    assert isinstance(chat.choices[0].message.parsed, Verdict)
    resp = client.responses.parse(model="gpt-4.1-mini", input=QUESTION, text_format=Verdict)
    assert isinstance(resp.output_parsed, Verdict)
    # JSON mode without a schema: an object
    plain = client.chat.completions.create(model="m", response_format={"type": "json_object"},
                                           messages=[{"role": "user", "content": "json please"}])
    assert isinstance(json.loads(plain.choices[0].message.content), dict)


def test_a_request_that_asks_for_text_still_gets_text(served):
    client, _ = genai_client(served)
    response = client.models.generate_content(model="gemini-2.5-flash", contents=QUESTION)
    with pytest.raises(ValueError):
        json.loads(response.text)


# -- any schema ---------------------------------------------------------------------------------

SCALARS = st.one_of(
    st.just({"type": "boolean"}), st.just({"type": "null"}),
    st.builds(lambda lo, span, ex: {"type": "integer", "minimum": lo, "maximum": lo + span,
                                    **({"exclusiveMinimum": lo} if ex and span > 1 else {})},
              st.integers(-50, 50), st.integers(0, 20), st.booleans()),
    st.builds(lambda lo, span: {"type": "number", "minimum": lo, "maximum": lo + span},
              st.floats(-1e3, 1e3), st.floats(0, 10)),
    st.builds(lambda lo, extra: {"type": "string", "minLength": lo, "maxLength": lo + extra},
              st.integers(0, 40), st.integers(0, 40)),
    st.sampled_from([{"type": "string", "format": f} for f in ("date", "date-time", "email")]),
    st.lists(st.text(max_size=5), min_size=1, max_size=4).map(lambda v: {"enum": v}),
    st.integers().map(lambda v: {"const": v}),
)
SCHEMAS = st.recursive(SCALARS, lambda inner: st.one_of(
    st.builds(lambda props, n: {"type": "object", "properties": props,
                                "required": sorted(props)[:n]},
              st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6), inner, max_size=5),
              st.integers(0, 5)),
    st.builds(lambda items, n: {"type": "array", "items": items, "minItems": n},
              inner, st.integers(0, 4)),
    st.lists(inner, min_size=1, max_size=3).map(lambda bs: {"anyOf": [{"type": "null"}, *bs]}),
), max_leaves=25)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.text(max_size=60))
def test_the_answer_is_valid_for_any_schema(schema, text):
    jsonschema.validate(json.loads(json_answer(schema, text)), schema)


def test_hostile_schemas_cost_little():
    huge = {"type": "object", "properties": {
        f"p{i}": {"type": "array", "minItems": 10 ** 9, "items": {"type": "string", "minLength": 10 ** 9}}
        for i in range(1000)}}
    endless = {"$ref": "#/$defs/A", "$defs": {"A": {"type": "object", "properties": {
        "a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}}}}}
    remote = {"$ref": "https://example.com/schema.json"}
    for schema in (huge, endless, remote):
        start = time.perf_counter()
        out = json_answer(schema, "x" * 10_000)
        assert time.perf_counter() - start < 2 and len(out) < 1_000_000


def test_anthropic_structured_output_gets_json_of_its_schema(served):
    import anthropic

    schema = {"type": "object", "properties": {"city": {"type": "string"}},
              "required": ["city"], "additionalProperties": False}
    client = anthropic.Anthropic(base_url=served.root, api_key="sk-ant-test", max_retries=0)
    for extra in ({"output_config": {"format": {"type": "json_schema", "schema": schema}}},
                  {"output_format": {"type": "json_schema", "schema": schema}}):
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, extra_body=extra,
                                          messages=[{"role": "user", "content": QUESTION}])
        jsonschema.validate(json.loads(message.content[0].text), schema)
