"""The HTTP edge of `lmparse serve`: 400s naming the field, 401, 413, a client that
leaves mid-stream, /v1/models, /health and /metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pytest.importorskip("uvicorn")

from .support.server import LiveServer, free_port, live_server_fixture  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
USER = [{"role": "user", "content": "hi"}]
KEY = "s3cret-key"


server = live_server_fixture("--family", "qwen3", "--token-rate", "0")


guarded = live_server_fixture("--family", "qwen3", "--token-rate", "0", "--api-key", KEY, "--max-body-bytes", "20000")


# ---- OpenAI 400s: one per malformed kind, the field named in `param` ---------------------------

BAD_OPENAI = {
    "messages_missing": ({"model": "qwen3"}, "messages"),
    "role_unknown": ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    "content_part_unsupported": ({"messages": [{"role": "user", "content": [{"type": "video"}]}]},
                                 "messages[0].content[0].type"),
    "image_part_without_url": ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
                               "messages[0].content[0].image_url.url"),
    "tools_schema_not_object": ({"messages": USER, "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "array"}}}]}, "tools[0].function.parameters.type"),
    "tools_properties_not_object": ({"messages": USER, "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": []}}}]}, "tools[0].function.parameters.properties"),
    "tool_name_missing": ({"messages": USER, "tools": [{"type": "function", "function": {"parameters": {}}}]},
                          "tools[0].function.name"),
    "tool_choice_unknown_name": ({"messages": USER, "tools": TOOLS,
                                  "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
    "tool_choice_bad_mode": ({"messages": USER, "tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
    "history_arguments_not_json": ({"messages": USER + [
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "get_weather", "arguments": "{city: Paris"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "tools": TOOLS},
        "messages[1].tool_calls[0].function.arguments"),
    "tool_message_without_id": ({"messages": USER + [{"role": "tool", "content": "x"}]}, "messages[1].tool_call_id"),
    "max_tokens_zero": ({"messages": USER, "max_tokens": 0}, "max_tokens"),
    "max_tokens_string": ({"messages": USER, "max_tokens": "ten"}, "max_tokens"),
    "n_above_one": ({"messages": USER, "n": 2}, "n"),
    "top_logprobs_without_logprobs": ({"messages": USER, "top_logprobs": 3}, "top_logprobs"),
    "stream_not_bool": ({"messages": USER, "stream": "yes"}, "stream"),
}


@pytest.mark.parametrize("kind", list(BAD_OPENAI))
def test_openai_bad_request_is_a_400_naming_the_field(server, kind):
    body, field = BAD_OPENAI[kind]
    for stream in (False, True):
        r = httpx.post(server.url + "/v1/chat/completions", json={**body, "stream": stream}
                       if kind != "stream_not_bool" else body, timeout=10)
        assert r.status_code == 400, r.text
        assert r.headers["content-type"].startswith("application/json")  # never half a stream
        error = r.json()["error"]
        assert error["param"] == field, error
        assert error["type"] == "invalid_request_error"
        assert field.split("[")[0] in error["message"]


def test_openai_sdk_raises_bad_request_with_the_field(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="qwen3", messages=USER, tools=TOOLS,
                                       tool_choice={"type": "function", "function": {"name": "nope"}})
    assert info.value.param == "tool_choice"


def test_response_format_json_schema_gives_json_that_fits(server):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
              "required": ["name", "age"]}
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "name=Ada age=36"}],
                                           response_format={"type": "json_schema", "json_schema": {
                                               "name": "person", "schema": schema}})
    assert json.loads(reply.choices[0].message.content) == {"name": "Ada", "age": 36}


def test_invalid_json_body_is_a_400(server):
    r = httpx.post(server.url + "/v1/chat/completions", content=b"{not json", timeout=10,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]


# ---- Anthropic 400s: the field named in the message ------------------------------------------

A_USER = [{"role": "user", "content": "hi"}]
A_TOOLS = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
BAD_ANTHROPIC = {
    "max_tokens_missing": ({"messages": A_USER}, "max_tokens"),
    "max_tokens_negative": ({"messages": A_USER, "max_tokens": -1}, "max_tokens"),
    "messages_empty": ({"messages": [], "max_tokens": 10}, "messages"),
    "role_unknown": ({"messages": [{"role": "robot", "content": "x"}], "max_tokens": 10}, "messages[0].role"),
    "image_block_without_source_type": ({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
                                         "max_tokens": 10}, "messages[0].content[0].source.type"),
    "block_type_unknown": ({"messages": [{"role": "user", "content": [{"type": "hologram"}]}], "max_tokens": 10},
                           "messages[0].content[0].type"),
    "tool_type_unknown": ({"messages": A_USER, "max_tokens": 10, "tools": [{"type": "magic", "name": "f"}]},
                          "tools[0].type"),
    "tool_schema_not_object": ({"messages": A_USER, "max_tokens": 10,
                                "tools": [{"name": "f", "input_schema": {"type": "string"}}]},
                               "tools[0].input_schema.type"),
    "tool_without_schema": ({"messages": A_USER, "max_tokens": 10, "tools": [{"name": "f"}]},
                            "tools[0].input_schema"),
    "tool_choice_unknown_name": ({"messages": A_USER, "max_tokens": 10, "tools": A_TOOLS,
                                  "tool_choice": {"type": "tool", "name": "nope"}}, "tool_choice.name"),
    "tool_choice_bad_type": ({"messages": A_USER, "max_tokens": 10, "tools": A_TOOLS,
                              "tool_choice": {"type": "maybe"}}, "tool_choice.type"),
    "tool_use_input_not_object": ({"max_tokens": 10, "tools": A_TOOLS, "messages": A_USER + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": "Paris"}]}]},
        "messages[1].content[0].input"),
    "tool_result_without_id": ({"max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}, "messages[0].content[0].tool_use_id"),
    "thinking_bad_type": ({"messages": A_USER, "max_tokens": 10, "thinking": {"type": "sometimes"}}, "thinking.type"),
    "stop_sequences_not_strings": ({"messages": A_USER, "max_tokens": 10, "stop_sequences": [1]}, "stop_sequences"),
}


@pytest.mark.parametrize("kind", list(BAD_ANTHROPIC))
def test_anthropic_bad_request_is_a_400_naming_the_field(server, kind):
    body, field = BAD_ANTHROPIC[kind]
    r = httpx.post(server.url + "/v1/messages", json={**body, "stream": True}, timeout=10)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("application/json")
    data = r.json()
    assert data["type"] == "error" and data["error"]["type"] == "invalid_request_error"
    assert field in data["error"]["message"]


def test_anthropic_sdk_raises_bad_request(server):
    client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="qwen3", max_tokens=10, messages=A_USER, tools=A_TOOLS,
                               tool_choice={"type": "tool", "name": "nope"})
    assert "tool_choice.name" in str(info.value)


# ---- authentication and limits ---------------------------------------------------------------


def test_missing_or_wrong_key_is_a_401_in_each_api_shape(guarded):
    for key in (None, "wrong"):
        headers = {"authorization": f"Bearer {key}"} if key else {}
        r = httpx.post(guarded.url + "/v1/chat/completions", json={"messages": USER}, headers=headers, timeout=10)
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
        r = httpx.post(guarded.url + "/v1/messages", json={"messages": A_USER, "max_tokens": 5},
                       headers={"x-api-key": key} if key else {}, timeout=10)
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert httpx.get(guarded.url + "/v1/models", timeout=10).status_code == 401
    assert httpx.get(guarded.url + "/health", timeout=10).status_code == 200


def test_sdks_authenticate_with_the_key(guarded):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=guarded.url + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
            model="qwen3", messages=USER)
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=guarded.url, api_key="wrong", max_retries=0).messages.create(
            model="qwen3", max_tokens=5, messages=A_USER)
    ok = openai.OpenAI(base_url=guarded.url + "/v1", api_key=KEY, max_retries=0)
    assert ok.chat.completions.create(model="qwen3", messages=USER).choices[0].message.content
    ok = anthropic.Anthropic(base_url=guarded.url, api_key=KEY, max_retries=0)
    assert ok.messages.create(model="qwen3", max_tokens=200, messages=A_USER).content


def test_the_key_is_never_printed():
    """The startup banner's examples read the key from $LMPARSE_API_KEY instead of showing it."""
    port = free_port()
    cmd = [sys.executable, "-m", "lmparse.cli", "serve", "--port", str(port), "--api-key", KEY, "--token-rate", "0"]
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, text=True)
        try:
            deadline = time.monotonic() + 60
            while "Codex:" not in (text := os.pread(log.fileno(), 1 << 20, 0).decode()):
                assert proc.poll() is None and time.monotonic() < deadline, text
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert "$LMPARSE_API_KEY" in text and KEY not in text


def test_oversized_body_is_a_413(guarded):
    big = [{"role": "user", "content": "x" * 30000}]
    r = httpx.post(guarded.url + "/v1/chat/completions", json={"messages": big},
                   headers={"authorization": f"Bearer {KEY}"}, timeout=10)
    assert r.status_code == 413 and "exceeds" in r.json()["error"]["message"]


# ---- lifecycle -------------------------------------------------------------------------------


def test_a_non_streaming_client_leaving_stops_the_engine():
    live = LiveServer(["--family", "qwen3", "--token-rate", "40"])
    try:
        words = " ".join(f"word{i}" for i in range(400))  # the reply quotes it: ~20 s at 40 tokens/s
        with pytest.raises(httpx.TimeoutException):
            httpx.post(live.url + "/v1/chat/completions", timeout=httpx.Timeout(10, read=0.5),
                       json={"messages": [{"role": "user", "content": words}]})
        assert_engine_stopped(live)
    finally:
        live.stop()


def test_client_leaving_mid_stream_stops_the_engine():
    live = LiveServer(["--family", "qwen3", "--token-rate", "40"])
    try:
        words = " ".join(f"word{i}" for i in range(400))  # the reply quotes it: ~20 s at 40 tokens/s
        client = openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0)
        stream = client.chat.completions.create(model="qwen3", stream=True, messages=[{"role": "user", "content": words}])
        received = 0
        for _ in stream:
            received += 1
            if received == 5:
                break
        stream.close()
        assert_engine_stopped(live)
        assert live.metric("lmparse_engine_streams_cancelled_total") == 1
    finally:
        live.stop()


def assert_engine_stopped(live: LiveServer) -> None:
    """The engine saw its generation cancelled, stopped generating, and nothing is in flight."""
    deadline = time.monotonic() + 10
    while live.metric("lmparse_engine_cancelled_total") < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live.metric("lmparse_engine_cancelled_total") == 1
    assert live.metric("lmparse_engine_completed_total") == 0
    generated = live.metric("lmparse_engine_tokens_generated_total")
    time.sleep(0.5)
    assert live.metric("lmparse_engine_tokens_generated_total") == generated < 200  # it really stopped
    assert live.metric("lmparse_requests_in_flight") == 0


def test_models_health_and_metrics(server):
    models = httpx.get(server.url + "/v1/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == ["qwen3"]
    assert httpx.get(server.url + "/health", timeout=10).json()["status"] == "ok"
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
    before = server.metric("lmparse_tool_calls_emitted_total")
    client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "get_weather city=Lyon"}],
                                   tools=TOOLS)
    text = httpx.get(server.url + "/metrics", timeout=10).text
    assert "# TYPE lmparse_requests_total counter" in text
    assert "# TYPE lmparse_event_loop_tasks gauge" in text and server.metric("lmparse_event_loop_tasks") >= 1
    assert server.metric("lmparse_tool_calls_emitted_total") == before + 1
    assert server.metric("lmparse_streamed_tokens_total") > 0
    assert server.metric("lmparse_parse_cpu_seconds_total") > 0
