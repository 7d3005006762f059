"""``max_tokens`` cutting a reply inside its tool call, through a live ``lmparse serve``
(issue 10 item 8): at every cut the finish reason says ``length`` (Anthropic ``max_tokens``,
Responses ``incomplete``), no markup reaches the text, and what reached reasoning or a call
is a prefix of the uncut reply's (a call's arguments: a prefix closed as a JSON object, rule 6).  The simulated model's qwen3 and gpt-oss replies are
reasoning, then one call."""

from __future__ import annotations

import json
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from .support.server import live_server_fixture  # noqa: E402

FAMILIES = ("qwen3", "gpt-oss")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
ASK = [{"role": "user", "content": "Use get_weather city=Paris"}]
ARGS = '{"city": "Paris"}'

server = live_server_fixture(*(a for f in FAMILIES for a in ("--family", f)), "--token-rate", "0")


def chat(server: Any, family: str, **fields: Any) -> dict[str, Any]:
    body = {"model": family, "messages": ASK, "tools": TOOLS, **fields}
    r = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def sse(server: Any, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    with httpx.stream("POST", server.url + path, json={**body, "stream": True}, timeout=30) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
    return events


def uncut(server: Any, family: str) -> tuple[int, str]:
    """The whole reply's completion tokens and reasoning (it ends in one call)."""
    whole = chat(server, family)
    message = whole["choices"][0]["message"]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        ("get_weather", ARGS)]
    return whole["usage"]["completion_tokens"], message["reasoning_content"]


def closed_prefix(args: str) -> bool:
    """``args`` is a JSON object: a prefix of the uncut arguments closed by closers alone.
    Rule 6 (issue 23): a call cut off keeps what streamed, and the end closes it as an object
    (``"``, ``}``, ``]``), so a cut call's arguments are no longer a bare prefix."""
    try:
        if not isinstance(json.loads(args), dict):
            return False
    except ValueError:
        return False
    stem = args.rstrip('"}]')
    return ARGS.startswith(stem) and any(ARGS.startswith(args[:i]) and not args[i:].strip('"}]')
                                         for i in range(len(stem), len(args) + 1))


def check_parts(where: str, content: str | None, reasoning: str | None, calls: list[tuple[str, str]],
                full_reasoning: str) -> None:
    assert not content, f"{where}: content {content!r}"  # the reply holds no text: nothing may show
    assert full_reasoning.startswith(reasoning or ""), f"{where}: reasoning {reasoning!r}"
    for name, args in calls:
        assert name == "get_weather" and closed_prefix(args), f"{where}: call {name} {args!r}"


@pytest.mark.parametrize("family", FAMILIES)
def test_openai_chat_cut_at_every_token(server: Any, family: str) -> None:
    total, full_reasoning = uncut(server, family)
    for k in range(1, total):
        choice = chat(server, family, max_tokens=k)["choices"][0]
        message = choice["message"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ()]
        assert choice["finish_reason"] == "length", (k, choice)
        check_parts(f"json k={k}", message.get("content"), message.get("reasoning_content"), calls, full_reasoning)
        chunks = sse(server, "/v1/chat/completions", {"model": family, "messages": ASK, "tools": TOOLS,
                                                      "max_tokens": k})
        deltas = [c["choices"][0] for c in chunks if c.get("choices")]
        assert deltas[-1]["finish_reason"] == "length", k
        text = "".join(d["delta"].get("content") or "" for d in deltas)
        reasoning = "".join(d["delta"].get("reasoning_content") or "" for d in deltas)
        args = "".join(tc["function"].get("arguments") or "" for d in deltas for tc in d["delta"].get("tool_calls") or ())
        streamed_calls = [(n, args) for n in (tc["function"]["name"] for d in deltas
                                              for tc in d["delta"].get("tool_calls") or () if tc.get("id"))]
        check_parts(f"stream k={k}", text, reasoning, streamed_calls, full_reasoning)
        assert (text or None, reasoning or None, streamed_calls) == (
            message.get("content"), message.get("reasoning_content"), calls), k  # stream == whole


@pytest.mark.parametrize("family", FAMILIES)
def test_anthropic_messages_cut_at_every_token(server: Any, family: str) -> None:
    total, full_reasoning = uncut(server, family)
    anthropic_tools = [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]
    for k in range(1, total):
        body = {"model": family, "max_tokens": k, "messages": ASK, "tools": anthropic_tools,
                "thinking": {"type": "enabled", "budget_tokens": 1024}}
        r = httpx.post(server.url + "/v1/messages", json=body, timeout=30)
        assert r.status_code == 200, r.text
        message = r.json()
        assert message["stop_reason"] == "max_tokens", (k, message)
        text = "".join(b["text"] for b in message["content"] if b["type"] == "text")
        thinking = "".join(b["thinking"] for b in message["content"] if b["type"] == "thinking")
        calls = [(b["name"], json.dumps(b["input"])) for b in message["content"] if b["type"] == "tool_use"]
        check_parts(f"anthropic k={k}", text, thinking, [(n, "{}") for n, _ in calls], full_reasoning)
        events = sse(server, "/v1/messages", body)
        streamed = "".join(e["delta"].get("text") or "" for e in events if e["type"] == "content_block_delta")
        assert not streamed, (k, streamed)
        assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == ["max_tokens"], k


@pytest.mark.parametrize("family", FAMILIES)
def test_responses_cut_at_every_token(server: Any, family: str) -> None:
    total, full_reasoning = uncut(server, family)
    tools = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}]
    for k in range(1, total):
        body = {"model": family, "input": ASK[0]["content"], "tools": tools, "max_output_tokens": k}
        r = httpx.post(server.url + "/v1/responses", json=body, timeout=30)
        assert r.status_code == 200, r.text
        response = r.json()
        assert (response["status"], response["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
        text = "".join(p["text"] for item in response["output"] if item["type"] == "message" for p in item["content"])
        reasoning = "".join(p["text"] for item in response["output"] if item["type"] == "reasoning"
                            for p in item.get("content") or ())
        calls = [(item["name"], item["arguments"]) for item in response["output"] if item["type"] == "function_call"]
        check_parts(f"responses k={k}", text, reasoning, calls, full_reasoning)
        events = sse(server, "/v1/responses", body)
        streamed = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        assert not streamed and events[-1]["type"] == "response.incomplete", (k, streamed)


def test_cut_off_markup_is_counted_as_truncated_not_rejected(server):
    def dropped(kind: str) -> float:
        text = httpx.get(server.url + "/metrics", timeout=10).text
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(f'lmparse_tool_calls_dropped_total{{kind="{kind}"}}'))

    rejected, truncated = dropped("rejected"), dropped("truncated")
    for family in FAMILIES:
        chat(server, family, max_tokens=1)  # inside the first header / the open tag at most
    assert dropped("rejected") == rejected
    assert dropped("truncated") >= truncated + 1
