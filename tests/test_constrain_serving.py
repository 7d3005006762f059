"""Enforced tool_choice through the server: the constraint each engine gets, the 400 where
none exists, the 502 for a reply that ignored ``required``, and ``parallel_tool_calls: false``.

The upstream engine is vLLM faked in-process (``httpx.MockTransport``) answering with the
recorded event lines of ``tests/support/upstream.py`` for a chosen reply, cut at the real
Qwen3 tokenizer's token boundaries.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("jinja2")

from lmparse.request import normalize_request  # noqa: E402
from lmparse.serve.app import create_app, simulated_binding, upstream_binding  # noqa: E402
from lmparse.serve.engines.base import GenerationRequest  # noqa: E402
from lmparse.serve.errors import RequestError  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402
from lmparse.serve.tool_choice import enforce  # noqa: E402

from .support.model_dir import shared_qwen3_model_dir  # noqa: E402
from .support.upstream import TOKENIZER, recorded  # noqa: E402

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
USER = [{"role": "user", "content": "What is the weather in Paris?"}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _request(tool_choice: Any, parallel: bool = True, thinking: bool | None = None) -> GenerationRequest:
    body: dict[str, Any] = {"tools": TOOLS, "tool_choice": tool_choice, "parallel_tool_calls": parallel}
    if thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": thinking}
    return GenerationRequest(USER, TOOLS, normalize_request(body))


# ---- enforce(): what each engine is given ------------------------------------------------------


def test_required_on_vllm_and_sglang_is_a_structural_tag_that_demands_a_call() -> None:
    for engine in ("vllm", "sglang"):
        given = _request("required", parallel=False)
        request, check = enforce(given, get_family("qwen3"), engine)
        assert check is not None and request.constraint is not None and given.constraint is None
        tag = json.loads(request.constraint["structural_tag"])
        calls = tag["format"]["elements"][-1]  # after the optional <think> block
        assert calls["type"] == "tags_with_separator" and calls["at_least_one"] and calls["stop_after_first"]
        assert [t["begin"] for t in calls["tags"]] == ['<tool_call>\n{"name": "get_weather", "arguments": ',
                                                      '<tool_call>\n{"name": "get_time", "arguments": ']
        assert request.parser_request.max_calls == 1


def test_a_named_tool_on_llamacpp_is_a_grammar_for_that_tool_alone() -> None:
    request, _ = enforce(_request({"type": "function", "function": {"name": "get_time"}}, thinking=False),
                         get_family("qwen3"), "llamacpp")
    assert request.constraint is not None
    grammar = request.constraint["grammar"]
    assert grammar.startswith("root ::= call\n")  # thinking off: no reasoning block, one call
    assert "get_time" in grammar and "get_weather" not in grammar


def test_auto_needs_no_constraint_and_no_check() -> None:
    given = _request("auto")
    request, check = enforce(given, get_family("qwen3"), "vllm")
    assert check is None and request is given and request.constraint is None


def test_gpt_oss_on_vllm_is_a_harmony_structural_tag_after_its_analysis() -> None:
    request, _ = enforce(_request({"type": "function", "function": {"name": "get_weather"}}),
                         get_family("gpt-oss"), "vllm")
    assert request.constraint is not None
    thought, _, calls = json.loads(request.constraint["structural_tag"])["format"]["elements"]
    assert thought["content"]["begin"] == "<|channel|>analysis<|message|>"
    assert [t["begin"] for t in calls["tags"]] == ["<|channel|>commentary to=functions.get_weather "
                                                   "<|constrain|>json<|message|>"]


@pytest.mark.parametrize(("family", "engine"), [("qwen3", "lmdeploy"), ("gpt-oss", "lmdeploy")])
def test_required_where_nothing_can_enforce_it_is_a_400(family: str, engine: str) -> None:
    with pytest.raises(RequestError) as caught:
        enforce(_request("required"), get_family(family), engine)
    assert caught.value.status == 400 and caught.value.param == "tool_choice"
    assert f"cannot be enforced for {family} on {engine}" in caught.value.message


# ---- through the server ------------------------------------------------------------------------


def _pieces(text: str) -> list[tuple[str, int]]:
    return [(piece, token_id) for piece, token_id, _ in TOKENIZER.steps(text)]


def _serve(reply: str, engine: str = "vllm", model_dir: Any = None) -> tuple[Any, list[dict]]:
    bodies: list[dict] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, content=recorded(engine, _pieces(reply)),
                              headers={"content-type": "text/event-stream"})

    binding = upstream_binding(get_family("qwen3"), engine, "http://engine", transport=httpx.MockTransport(handle),
                               model_dir=model_dir or shared_qwen3_model_dir())
    return create_app([binding]), bodies


def _post(app: Any, body: dict) -> httpx.Response:
    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/v1/chat/completions", json={"messages": USER, "tools": TOOLS, **body})

    return asyncio.run(call())


def test_a_required_reply_with_a_valid_call_is_a_success() -> None:
    app, _ = _serve(CALL)
    r = _post(app, {"tool_choice": "required"})
    assert r.status_code == 200, r.text
    message = r.json()["choices"][0]["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]


@pytest.mark.parametrize(("reply", "reason"), [
    ("It is sunny in Paris.", "the model did not call a tool although tool_choice required it"),
    ('<tool_call>\n{"name": "get_weather", "arguments": {"town": "Paris"}}\n</tool_call>',
     "does not match its schema: arguments.city is required"),
])
def test_a_required_reply_without_a_valid_call_is_a_502_saying_why(reply: str, reason: str) -> None:
    app, _ = _serve(reply)
    r = _post(app, {"tool_choice": "required"})
    assert r.status_code == 502
    error = r.json()["error"]
    assert error["type"] == "server_error" and error["code"] == "tool_choice_unmet"
    assert reason in error["message"]


def test_anthropic_any_that_the_model_ignored_is_an_api_error_saying_why() -> None:
    app, _ = _serve("It is sunny in Paris.")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/v1/messages", json={
                "max_tokens": 64, "messages": USER, "tool_choice": {"type": "any"},
                "tools": [{"name": "get_weather", "input_schema": WEATHER}]})

    r = asyncio.run(call())
    assert r.status_code == 502 and r.json()["type"] == "error"
    assert "did not call a tool" in r.json()["error"]["message"]


def test_a_stream_that_ignored_required_ends_with_an_error_event_not_a_finish() -> None:
    app, _ = _serve("It is sunny in Paris.")
    r = _post(app, {"tool_choice": "required", "stream": True})
    assert r.status_code == 200
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    assert "did not call a tool" in events[-1]["error"]["message"]
    assert all(choice.get("finish_reason") is None for e in events[:-1] for choice in e.get("choices", ()))


def test_required_on_lmdeploy_is_refused_before_the_engine_is_asked() -> None:
    app, bodies = _serve(CALL, engine="lmdeploy")
    r = _post(app, {"tool_choice": "required"})
    assert r.status_code == 400 and "lmdeploy engine has no way to constrain" in r.json()["error"]["message"]
    assert bodies == []


def test_parallel_false_keeps_the_first_call_whatever_the_engine_wrote() -> None:
    second = CALL.replace("get_weather", "get_time").replace('{"city": "Paris"}', "{}")
    app, _ = _serve(CALL + "\n" + second)
    r = _post(app, {"parallel_tool_calls": False})
    assert r.status_code == 200, r.text
    assert [c["function"]["name"] for c in r.json()["choices"][0]["message"]["tool_calls"]] == ["get_weather"]
    r = _post(app, {})
    assert [c["function"]["name"] for c in r.json()["choices"][0]["message"]["tool_calls"]] == ["get_weather",
                                                                                              "get_time"]


def test_the_simulated_engine_needs_no_constraint_for_required() -> None:
    app = create_app([simulated_binding(get_family("qwen3"))])
    r = _post(app, {"tool_choice": "required", "parallel_tool_calls": False})
    assert r.status_code == 200, r.text
    assert len(r.json()["choices"][0]["message"]["tool_calls"]) == 1
