"""Several tokens in one engine step: parsed in one go, their SSE events sent as one body,
and the events the same, one for one, as when each token is a step of its own."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

pytest.importorskip("orjson")
pytest.importorskip("starlette")

from lmparse.serve import anthropic, openai, responses  # noqa: E402
from lmparse.serve.bindings import simulated_binding  # noqa: E402
from lmparse.serve.engines.base import EngineStream  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402
from lmparse.serve.runner import ChatRunner  # noqa: E402
from lmparse.serve.signing import Signer  # noqa: E402
from lmparse.serve.transport import EventStream  # noqa: E402

TOOL = {"name": "write_note", "description": "Write a note.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
USER = "Think it over, then write a note with write_note"
CHAT = {"model": "qwen3", "stream": True, "messages": [{"role": "user", "content": USER}],
        "chat_template_kwargs": {"enable_thinking": True}, "tools": [{"type": "function", "function": TOOL}]}
_SIGNER = Signer("steps")
APIS = {
    "chat": (openai, lambda: openai.parse_request(CHAT, "qwen3", "reasoning_content")),
    "chat-text": (openai, lambda: openai.parse_request(
        {**CHAT, "tools": [], "messages": [{"role": "user", "content": "Tell me about streaming. repeat=30"}]},
        "qwen3", "reasoning_content")),
    "chat-logprobs": (openai, lambda: openai.parse_request({**CHAT, "logprobs": True, "top_logprobs": 2,
                                                            "stream_options": {"include_usage": True}},
                                                           "qwen3", "both")),
    "messages": (anthropic, lambda: anthropic.parse_request(
        {"model": "qwen3", "stream": True, "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1024},
         "messages": [{"role": "user", "content": USER}],
         "tools": [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}]},
        "qwen3", _SIGNER)),
    "responses": (responses, lambda: responses.parse_request(
        {"model": "qwen3", "stream": True, "store": False, "input": USER, "reasoning": {"effort": "high"},
         "tools": [{"type": "function", **TOOL}]}, "qwen3", _SIGNER, None)),
}


@pytest.fixture(scope="module")
def binding():
    return simulated_binding(get_family("qwen3"))


@pytest.fixture(autouse=True)
def _fixed_ids(monkeypatch):
    """The same ids and times in both runs, so their bytes can be compared."""
    monkeypatch.setattr(secrets, "token_hex", lambda n=16: "ab" * n)
    monkeypatch.setattr(time, "time", lambda: 1700000000.0)


def _one_token_steps(stream: EngineStream) -> EngineStream:
    """The same engine stream, each token handed over as a step of its own."""
    async def chunks():
        async for chunk in stream:
            yield chunk

    single = EngineStream(stream.prompt_tokens, chunks(), stream.parser_token_ids)
    single.prompt_tail = stream.prompt_tail
    return single


def _bodies(binding, api: str, stepped: bool) -> list[bytes]:
    """The bodies ``EventStream`` sends for one streamed request."""
    module, parse = APIS[api]
    gen_request, opts = parse()
    stream = binding.engine.start(gen_request)
    if not stepped:
        stream = _one_token_steps(stream)
    runner = ChatRunner(stream, binding.new_parser(gen_request.parser_request, stream.prompt_tail))
    sent: list[dict] = []

    async def go() -> None:
        async def receive() -> dict:
            await asyncio.Event().wait()  # the client stays
            return {}

        async def send(message: dict) -> None:
            sent.append(message)

        await EventStream(module.stream_response(runner, opts))({"type": "http"}, receive, send)

    asyncio.run(go())
    return [m["body"] for m in sent if m["type"] == "http.response.body" and m["body"]]


def _events(bodies: list[bytes]) -> list[bytes]:
    return [event for event in b"".join(bodies).split(b"\n\n") if event]


@pytest.mark.parametrize("api", list(APIS))
def test_a_multi_token_step_sends_the_events_of_one_token_steps_in_one_body(binding, api):
    single, stepped = _bodies(binding, api, stepped=False), _bodies(binding, api, stepped=True)
    events = _events(single)
    assert len(events) > 20
    assert (b"write_note" in b"".join(single)) == (api != "chat-text")
    # Event for event the same stream...
    assert _events(stepped) == events
    # ...sent in a body per engine step (the simulated engine's four tokens at full speed),
    # not one per token.
    assert max(len(_events([body])) for body in stepped) >= 4
    assert len(stepped) < len(single) / 2


def test_each_token_keeps_its_own_event_with_its_logprobs(binding):
    import orjson

    events = _events(_bodies(binding, "chat-logprobs", stepped=True))
    chunks = [orjson.loads(e[6:]) for e in events if e.startswith(b"data: {")]
    tokens = [lp for c in chunks for choice in c["choices"] for lp in (choice.get("logprobs") or {}).get("content", [])]
    usage = next(c["usage"] for c in chunks if c.get("usage"))
    # One logprobs entry per generated token, each token in an event of its own.
    assert len(tokens) == usage["completion_tokens"]
    assert all(len((choice.get("logprobs") or {}).get("content", [])) <= 1 for c in chunks for choice in c["choices"])
