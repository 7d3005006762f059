"""Client input that once made the new routes answer 500, cut a stream, or name the wrong
field: each is a clean 200 or a 400 naming the field now.  (Found by a review of the
Responses / Messages additions; one test per finding.)"""

from __future__ import annotations

import json

import orjson
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402
from lmparse.serve.responses.custom_input import CustomInput, final_input  # noqa: E402
from lmparse.serve.responses.request import _Turns  # noqa: E402
from lmparse.serve.templates import _later_system_as_user  # noqa: E402

from .support.server import live_server_fixture  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")
USER = [{"role": "user", "content": "hi"}]


server = live_server_fixture("--family", "qwen3", "--token-rate", "0")


def post(server, path: str, body: dict):
    return httpx.post(server.url + path, json={"model": "qwen3", **body}, timeout=30)


def test_non_ascii_blobs_and_signatures_are_foreign_not_a_crash(server):
    r = post(server, "/v1/responses", {"input": [
        {"type": "reasoning", "summary": [], "encrypted_content": "lmparse.r1.abc.é"},
        {"role": "user", "content": "hi"}]})
    assert r.status_code == 200, r.text
    r = post(server, "/v1/messages", {"max_tokens": 100, "messages": USER + [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "lmparse1.é"}]},
        {"role": "user", "content": "hi"}]})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("block", [
    {"type": "search_result", "title": 5, "source": "s", "content": []},
    {"type": "search_result", "title": "t", "source": {"type": "base64", "data": "AAAA"}, "content": []},
    {"type": "tool_reference", "tool_name": {"a": 1}},
    {"type": "image", "title": ["x"], "source": {"type": "base64", "media_type": 7, "data": "AAAA"}},
])
def test_placeholder_details_that_are_not_text_are_left_out(server, block):
    r = post(server, "/v1/messages", {"max_tokens": 100, "messages": [{"role": "user", "content": [block]}]})
    assert r.status_code == 200, r.text


def test_an_audio_format_that_is_not_text_is_left_out(server):
    r = post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": 7}}]}]})
    assert r.status_code == 200, r.text


def test_a_recursive_schema_ref_still_gets_json(server):
    tree = {"$defs": {"A": {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/A"}}}},
            "$ref": "#/$defs/A"}
    r = post(server, "/v1/responses", {"input": "hi", "reasoning": {"effort": "none"},
                                       "text": {"format": {"type": "json_schema", "name": "x", "schema": tree}}})
    assert r.status_code == 200, r.text
    text = next(i for i in r.json()["output"] if i["type"] == "message")["content"][0]["text"]
    value = json.loads(text)
    depth = 0
    while isinstance(value, dict) and "a" in value:
        value, depth = value["a"], depth + 1
    assert 1 <= depth <= 12


def test_deep_nesting_is_a_400_not_a_crash(server):
    block = '{"type":"text","text":"x"}'
    for _ in range(505):
        block = '{"type":"search_result","title":"t","source":"s","content":[' + block + "]}"
    body = '{"model":"qwen3","max_tokens":10,"messages":[{"role":"user","content":[' + block + "]}]}"
    r = httpx.post(server.url + "/v1/messages", content=body.encode(), timeout=30,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and "levels deep" in r.json()["error"]["message"]
    shallow = '{"type":"text","text":"x"}'
    for _ in range(20):  # within the body bound, past the content bound: the 400 names the block
        shallow = '{"type":"search_result","title":"t","source":"s","content":[' + shallow + "]}"
    r = httpx.post(server.url + "/v1/messages", timeout=30, headers={"content-type": "application/json"},
                   content=('{"model":"qwen3","max_tokens":10,"messages":[{"role":"user","content":['
                            + shallow + "]}]}").encode())
    assert r.status_code == 400 and "messages[0].content[0]" in r.json()["error"]["message"]


def test_a_custom_input_with_a_lone_surrogate_is_text():
    arguments = '{"input": "a\\ud800b"}'
    decoder = CustomInput()
    streamed = decoder.feed(arguments)
    final = final_input(arguments, decoder)
    assert streamed == final == "a\ufffdb"
    orjson.dumps(final)  # what the response is serialized with


def test_runs_of_turns_are_joined_once():
    texts = [f"turn {i}" for i in range(20000)]
    merged = _later_system_as_user([{"role": "user", "content": "first"}] +
                                   [{"role": "system", "content": t} for t in texts])
    assert merged == [{"role": "user", "content": "\n\n".join(["first", *texts])}]
    turns = _Turns()
    turns.add({"role": "user", "content": "q"})
    for t in texts:
        turns.assistant_text(t)
        turns.reasoning(t)
    [_, assistant] = turns.messages
    assert assistant["content"] == "".join(texts) and assistant["reasoning_content"] == "".join(texts)


@pytest.mark.parametrize("path, body, field", [
    ("/v1/responses", {"input": "hi", "tools": [{"type": "function", "name": "a"}], "tool_choice": {
        "type": "allowed_tools", "mode": "bogus", "tools": [{"type": "function", "name": "a"}]}}, "tool_choice.mode"),
    ("/v1/responses", {"input": "hi", "chat_template_kwargs": {"enable_thinking": "yes"}},
     "chat_template_kwargs.enable_thinking"),
    ("/v1/responses", {"input": "hi", "tools": [
        {"type": "namespace", "name": "fs", "description": "d", "tools": [{"type": "function", "name": "read"}]},
        {"type": "function", "name": "fs__read"}]}, "tools[1].name"),
    ("/v1/responses", {"input": "hi", "tools": [{"type": "custom", "name": "x"}, {"type": "function", "name": "x"}]},
     "tools[1].name"),
    ("/v1/chat/completions", {"messages": USER, "stream_options": {"include_usage": "yes"}},
     "stream_options.include_usage"),
])
def test_openai_shaped_400s_name_the_whole_field(server, path, body, field):
    r = post(server, path, body)
    assert r.status_code == 400 and r.json()["error"]["param"] == field, r.text


@pytest.mark.parametrize("body, field", [
    ({"thinking": {"type": "enabled", "budget_tokens": "lots"}}, "thinking.budget_tokens"),
    ({"tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"}}, "tool_choice.disable_parallel_tool_use"),
])
def test_anthropic_400s_name_the_whole_field(server, body, field):
    r = post(server, "/v1/messages", {"max_tokens": 10, "messages": USER, **body})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith(field), r.text
