"""What the Open Responses specification asks of ``/v1/responses`` beyond what clients of
OpenAI's API relied on, against a live ``lmparse serve`` on the simulated model: every
response-object field the spec's schema requires (sampling fields echoed, OpenAI's
defaults when not sent), ``strict`` on echoed function tools, ``POST /v1/responses/compact``
and the window it returns, ``previous_response_not_found``, and the two stream dialects
(OpenAI's event names and no ``[DONE]`` by default; the spec's when asked for).

The compliance suite itself runs in ``make test-conformance`` (scripts/openresponses_conformance.py).
"""

from __future__ import annotations

import json

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.server import LiveServer  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")

WEATHER = {"type": "function", "name": "get_weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
HEADER = "x-lmparse-responses-dialect"
# Fields the spec's ResponseResource requires that OpenAI clients never checked for.
SPEC_FIELDS = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "max_tool_calls",
               "safety_identifier", "prompt_cache_key")


@pytest.fixture(scope="module")
def server():
    live = LiveServer(["--family", "qwen3", "--token-rate", "0"])
    yield live
    live.stop()


@pytest.fixture(scope="module")
def spec_server():
    live = LiveServer(["--family", "qwen3", "--token-rate", "0", "--responses-dialect", "openresponses"])
    yield live
    live.stop()


def post(server, body: dict, path: str = "/v1/responses", headers: dict | None = None) -> httpx.Response:
    return httpx.post(server.url + path, json={"model": "qwen3", **body}, headers=headers, timeout=60)


def stream(server, body: dict, headers: dict | None = None) -> tuple[list[dict], list[str]]:
    """The events of a streamed request, and every data line as sent (``[DONE]`` included)."""
    events, data = [], []
    with httpx.stream("POST", server.url + "/v1/responses", json={"model": "qwen3", **body, "stream": True},
                      headers=headers, timeout=60) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data: "):
                data.append(line[6:])
                if line[6:] != "[DONE]":
                    events.append(json.loads(line[6:]))
    return events, data


# ---- the response object ----------------------------------------------------------------------


def test_fields_left_out_are_echoed_with_openai_defaults(server):
    r = post(server, {"input": "hello"})
    assert r.status_code == 200
    body = r.json()
    assert {f: body[f] for f in SPEC_FIELDS} == {
        "temperature": 1.0, "top_p": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
        "max_tool_calls": None, "safety_identifier": None, "prompt_cache_key": None}


SENT = {"temperature": 0.3, "top_p": 0.5, "presence_penalty": 0.25, "frequency_penalty": -0.5, "max_tool_calls": 3,
        "safety_identifier": "user-7f3a", "prompt_cache_key": "thread-42"}


def test_fields_sent_are_echoed(server):
    body = post(server, {"input": "hello", **SENT}).json()
    assert {f: body[f] for f in SPEC_FIELDS} == SENT


def test_fields_sent_are_echoed_in_every_lifecycle_event(server):
    events, _ = stream(server, {"input": "hello", **SENT})
    lifecycle = [e["response"] for e in events if "response" in e]
    assert [e["type"] for e in events if "response" in e] == [
        "response.created", "response.in_progress", "response.completed"]
    for response in lifecycle:
        assert {f: response[f] for f in SPEC_FIELDS} == SENT


@pytest.mark.parametrize("field, value", [
    ("max_tool_calls", "3"), ("max_tool_calls", -1), ("safety_identifier", 5), ("prompt_cache_key", ["k"]),
    ("presence_penalty", 3), ("frequency_penalty", "0"),
])
def test_malformed_echoed_field_is_a_400_naming_it(server, field, value):
    r = post(server, {"input": "hello", field: value})
    assert r.status_code == 400
    assert r.json()["error"]["param"] == field


def test_function_tools_come_back_with_strict_description_and_parameters(server):
    strict = {**WEATHER, "name": "get_time", "strict": True, "description": "The time"}
    body = post(server, {"input": "hello", "tools": [WEATHER, strict]}).json()
    plain, marked = body["tools"]
    assert plain == {**WEATHER, "strict": None, "description": None}
    assert marked == strict


def test_json_schema_format_comes_back_with_description_and_strict(server):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = post(server, {"input": "city=Paris", "text": {"format": {"type": "json_schema", "name": "c",
                                                                    "schema": schema}}}).json()
    assert body["text"]["format"] == {"type": "json_schema", "name": "c", "schema": schema, "description": None,
                                      "strict": False}
    assert json.loads(body["output"][-1]["content"][0]["text"])["city"] == "Paris"
    sent = {"type": "json_schema", "name": "c", "schema": schema, "description": "A city", "strict": True}
    assert post(server, {"input": "city=Paris", "text": {"format": sent}}).json()["text"]["format"] == sent


def test_function_call_still_works_with_echoed_tools(server):
    body = post(server, {"input": "Call get_weather city=Lyon", "tools": [WEATHER]}).json()
    calls = [item for item in body["output"] if item["type"] == "function_call"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_weather", {"city": "Lyon"})]


# ---- previous_response_id ---------------------------------------------------------------------


def test_unknown_previous_response_id_carries_previous_response_not_found(server):
    r = post(server, {"input": "again", "previous_response_id": "resp_never_made"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error["code"], error["param"], error["type"]) == (
        "previous_response_not_found", "previous_response_id", "invalid_request_error")


def test_store_false_response_cannot_be_continued(server):
    first = post(server, {"input": "hello", "store": False}).json()
    r = post(server, {"input": "again", "previous_response_id": first["id"]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "previous_response_not_found"


# ---- POST /v1/responses/compact -------------------------------------------------------------------

CONVERSATION = [
    {"type": "message", "role": "user", "content": "We agreed to launch on Tuesday and notify support first."},
    {"type": "message", "role": "assistant", "content": "Understood: Tuesday, support first."},
]


def test_compact_without_model_is_a_400_naming_model(server):
    r = httpx.post(server.url + "/v1/responses/compact", json={"input": CONVERSATION}, timeout=30)
    assert r.status_code == 400
    assert r.json()["error"]["param"] == "model"


def test_compact_without_input_is_a_400_naming_input(server):
    r = post(server, {}, "/v1/responses/compact")
    assert r.status_code == 400 and r.json()["error"]["param"] == "input"


def test_compact_malformed_item_is_a_400_naming_it(server):
    r = post(server, {"input": [{"type": "message", "role": "robot", "content": "x"}]}, "/v1/responses/compact")
    assert r.status_code == 400 and r.json()["error"]["param"] == "input[0].role"


def test_compact_returns_one_compaction_item(server):
    r = post(server, {"input": CONVERSATION, "prompt_cache_key": "k"}, "/v1/responses/compact")
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "response.compaction" and body["id"].startswith("resp_")
    [item] = body["output"]
    assert item["type"] == "compaction" and item["id"].startswith("cmp_")
    assert isinstance(item["encrypted_content"], str) and "Tuesday" not in item["encrypted_content"]
    assert set(body["usage"]) >= {"input_tokens", "output_tokens", "total_tokens"}


def _input_tokens(server, items: list) -> int:
    body = post(server, {"input": items + [{"type": "message", "role": "user", "content": "Continue."}],
                         "store": False}).json()
    assert body["status"] == "completed"
    return body["usage"]["input_tokens"]


def test_compaction_window_puts_the_conversation_back_in_the_prompt(server):
    window = post(server, {"input": CONVERSATION}, "/v1/responses/compact").json()["output"]
    alone = _input_tokens(server, [])
    with_history = _input_tokens(server, CONVERSATION)
    with_window = _input_tokens(server, window)
    assert with_window == with_history > alone


def test_compaction_of_a_stored_chain_includes_it(server):
    first = post(server, {"input": "Remember the code word: cobalt."}).json()
    window = post(server, {"previous_response_id": first["id"], "input": "And the colour: teal."},
                  "/v1/responses/compact").json()["output"]
    direct = post(server, {"previous_response_id": first["id"], "store": False, "input": [
        {"type": "message", "role": "user", "content": "And the colour: teal."},
        {"type": "message", "role": "user", "content": "Continue."}]}).json()
    assert _input_tokens(server, window) == direct["usage"]["input_tokens"]


def test_foreign_or_forged_compaction_item_is_left_out(server):
    window = post(server, {"input": CONVERSATION}, "/v1/responses/compact").json()["output"]
    blob = window[0]["encrypted_content"]
    forged = blob[:-4] + ("AAAA" if not blob.endswith("AAAA") else "BBBB")
    alone = _input_tokens(server, [])
    for content in (forged, "gAAAAABother-providers-blob"):
        assert _input_tokens(server, [{"type": "compaction", "encrypted_content": content}]) == alone


def test_compact_is_not_a_stored_response_id(server):
    assert httpx.get(server.url + "/v1/responses/compact", timeout=30).status_code == 404


# ---- stream dialects --------------------------------------------------------------------------------


def _kinds(events: list[dict]) -> set[str]:
    return {e["type"] for e in events}


def test_default_stream_keeps_openai_names_and_ends_without_done(server):
    events, data = stream(server, {"input": "hello"})
    assert "response.reasoning_text.delta" in _kinds(events) and "response.reasoning_text.done" in _kinds(events)
    assert not _kinds(events) & {"response.reasoning.delta", "response.reasoning.done"}
    assert events[-1]["type"] == "response.completed" and data[-1] != "[DONE]"


def test_header_asks_for_open_responses_names_and_done(server):
    events, data = stream(server, {"input": "hello"}, headers={HEADER: "openresponses"})
    assert "response.reasoning.delta" in _kinds(events) and "response.reasoning.done" in _kinds(events)
    assert not _kinds(events) & {"response.reasoning_text.delta", "response.reasoning_text.done"}
    assert data[-1] == "[DONE]" and data.count("[DONE]") == 1
    assert events[-1]["type"] == "response.completed"  # the terminal event comes just before [DONE]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def test_server_flag_makes_open_responses_the_default_and_the_header_overrides_it(spec_server):
    events, data = stream(spec_server, {"input": "hello"})
    assert "response.reasoning.delta" in _kinds(events) and data[-1] == "[DONE]"
    events, data = stream(spec_server, {"input": "hello"}, headers={HEADER: "openai"})
    assert "response.reasoning_text.delta" in _kinds(events) and data[-1] != "[DONE]"


def test_both_dialects_build_the_same_reasoning_text(server):
    def reasoning(events: list[dict], kind: str) -> str:
        return "".join(e["delta"] for e in events if e["type"] == kind)

    openai_events, _ = stream(server, {"input": "hello"})
    spec_events, _ = stream(server, {"input": "hello"}, headers={HEADER: "openresponses"})
    text = reasoning(openai_events, "response.reasoning_text.delta")
    assert text and text == reasoning(spec_events, "response.reasoning.delta")
    assert openai_events[-1]["response"]["output"][0]["content"] == spec_events[-1]["response"]["output"][0]["content"]


def test_unknown_dialect_is_a_400_naming_the_header(server):
    r = post(server, {"input": "hello"}, headers={HEADER: "anthropic"})
    assert r.status_code == 400 and r.json()["error"]["param"] == HEADER


def test_non_streamed_response_is_the_same_in_either_dialect(server):
    plain = post(server, {"input": "hello"}).json()
    spec = post(server, {"input": "hello"}, headers={HEADER: "openresponses"}).json()
    assert [i["type"] for i in plain["output"]] == [i["type"] for i in spec["output"]]
    assert plain["output"][-1]["content"] == spec["output"][-1]["content"]


def test_a_window_opens_only_under_its_key_and_only_as_a_window():
    from lmparse.serve.signing import Signer

    text = json.dumps([{"role": "user", "content": "Tuesday"}])
    blob = Signer("key-a").seal_window(text)
    assert Signer("key-a").open_window(blob) == text
    assert Signer("key-b").open_window(blob) is None
    assert Signer("key-a").open_reasoning(blob) is None  # a window is no reasoning blob
    assert Signer("key-a").open_window(Signer("key-a").seal_reasoning(text)) is None  # nor the reverse
