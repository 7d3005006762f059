"""The official openai and anthropic SDKs against a live `lmparse serve` (simulated engine).

For every family and scenario, the SDKs' stream accumulators must give exactly the
non-streaming reply (ids aside), and the reply must be what the simulated model decides.
"""

from __future__ import annotations

import json

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pytest.importorskip("uvicorn")

from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.server import LiveServer  # noqa: E402

# qwen3.5 is Qwen3-Coder's XML with reasoning: the XML path inside <think>.
FAMILIES = ["qwen3", "qwen3coder", "qwen3.5", "glm47", "deepseek-v32", "kimi-k2", "gpt-oss"]
THINKS = {"qwen3", "qwen3.5", "glm47", "deepseek-v32", "kimi-k2", "gpt-oss"}
READY = [f for f in FAMILIES if not missing_parsers(get_family(f))]


@pytest.fixture(scope="module")
def server():
    if not READY:
        pytest.skip("no family's parsers are registered")
    live = LiveServer([arg for f in READY for arg in ("--family", f)] + ["--token-rate", "0"])
    yield live
    live.stop()


def family_param(name: str):
    missing = missing_parsers(get_family(name))
    reason = f"family {name}: {', '.join(missing)} not registered yet"
    return pytest.param(name, marks=pytest.mark.skipif(bool(missing), reason=reason))


@pytest.fixture(params=[family_param(f) for f in FAMILIES])
def family(request):
    return request.param


@pytest.fixture(scope="module")
def oai(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def anth(server):
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)


WEATHER = {"name": "get_weather", "description": "Current weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}
TIME = {"name": "get_time", "description": "The time now", "parameters": {"type": "object", "properties": {}}}
OPENAI_TOOLS = [{"type": "function", "function": f} for f in (WEATHER, TIME)]
ANTHROPIC_TOOLS = [{"name": f["name"], "description": f["description"], "input_schema": f["parameters"]}
                   for f in (WEATHER, TIME)]


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# Each scenario: a request (the API-neutral parts) and what the reply must contain.
# Keys: text, tools, choice ("auto"/"none"/"required"/name), thinking, history, max_tokens, stop.
SCENARIOS = {
    "text_only": dict(text="hello there"),
    "reasoning": dict(text="hello there", thinking=True),
    "tool_call": dict(text="Call get_weather city=Paris days=3", tools=True),
    "two_calls": dict(text="Use get_weather city=Rome, then get_time", tools=True),
    "call_inside_reasoning": dict(text="Look up get_weather city=Oslo while thinking", tools=True, thinking=True),
    "tool_results": dict(history=True, tools=True),
    "tool_choice_none": dict(text="Call get_weather city=Paris", tools=True, choice="none"),
    "tool_choice_required": dict(text="hello there", tools=True, choice="required"),
    "tool_choice_named": dict(text="Call get_weather city=Paris", tools=True, choice="get_time"),
    "truncated": dict(text="Call get_weather city=Paris", tools=True, thinking=False, max_tokens=8),
}
NEEDS_THINKING = {"reasoning", "call_inside_reasoning"}


def expect(name: str, family: str, reply: dict) -> None:
    """What the simulated model decides, in the API-neutral form of ``reply``."""
    calls = [(n, a) for n, a in reply["calls"]]
    thinks = family in THINKS and (SCENARIOS[name].get("thinking") or family not in {"deepseek-v32"})
    if name in ("text_only", "reasoning"):
        assert reply["content"].startswith('You said: "hello there"')
        assert calls == []
        assert reply["finish"] == "stop"
    if name == "reasoning" or (name == "text_only" and thinks):
        assert reply["reasoning"]
    if name == "text_only" and not thinks:
        assert not reply["reasoning"]
    if name == "tool_call":
        assert calls == [("get_weather", {"city": "Paris", "days": 3})]
        assert reply["finish"] == "tool_calls" and reply["content"] is None
    if name == "two_calls":
        assert calls == [("get_weather", {"city": "Rome"}), ("get_time", {})]
    if name == "call_inside_reasoning":
        assert calls == [("get_weather", {"city": "Oslo"})]
        assert "while I think" in reply["reasoning"] and "settles it" in reply["reasoning"]
        assert reply["finish"] == "tool_calls"
    if name == "tool_results":
        assert calls == [] and "21 C and sunny" in reply["content"]
    if name == "tool_choice_none":
        assert calls == [] and reply["content"].startswith("You said:")
    if name == "tool_choice_required":
        assert calls == [("get_weather", {"city": "Paris"})]
    if name == "tool_choice_named":
        assert calls == [("get_time", {})]
    if name == "truncated":
        assert reply["finish"] == "length"  # never rewritten to tool_calls
        assert reply["usage"][1] == 8


def skip_unless_thinking(name: str, family: str) -> None:
    if name in NEEDS_THINKING and family not in THINKS:
        pytest.skip(f"{family} has no reasoning channel")


# ---- OpenAI ---------------------------------------------------------------------------------


def openai_kwargs(name: str, family: str) -> dict:
    s = SCENARIOS[name]
    kw: dict = {"model": family}
    if s.get("history"):
        kw["messages"] = user("Call get_weather city=Paris") + [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "21 C and sunny"},
        ]
    else:
        kw["messages"] = user(s["text"])
    if s.get("tools"):
        kw["tools"] = OPENAI_TOOLS
    choice = s.get("choice")
    if choice in ("none", "required", "auto"):
        kw["tool_choice"] = choice
    elif choice:
        kw["tool_choice"] = {"type": "function", "function": {"name": choice}}
    if s.get("thinking") is not None:
        kw["extra_body"] = {"chat_template_kwargs": {"enable_thinking": s["thinking"]}}
    if s.get("max_tokens"):
        kw["max_tokens"] = s["max_tokens"]
    return kw


def openai_reply(completion) -> dict:
    choice = completion.choices[0]
    m = choice.message
    usage = completion.usage
    return {
        "content": m.content,
        "reasoning": getattr(m, "reasoning_content", None),
        "calls": [(c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls or ()],
        "types": [c.type for c in m.tool_calls or ()],
        "finish": choice.finish_reason,
        "usage": (usage.prompt_tokens, usage.completion_tokens, usage.completion_tokens_details.reasoning_tokens)
        if usage else None,
        "logprobs": [(t.token, t.logprob, len(t.top_logprobs)) for t in choice.logprobs.content]
        if choice.logprobs and choice.logprobs.content is not None else None,
    }


def final_completion(accumulator):
    try:
        return accumulator.get_final_completion()
    except openai.LengthFinishReasonError as exc:  # the SDK refuses to parse a cut reply, but has it
        return exc.completion


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_openai_stream_accumulates_to_the_json_reply(oai, family, name):
    skip_unless_thinking(name, family)
    kw = openai_kwargs(name, family)
    whole = openai_reply(oai.chat.completions.create(**kw))

    state = ChatCompletionStreamState()
    for chunk in oai.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kw):
        assert chunk.object == "chat.completion.chunk"
        state.handle_chunk(chunk)
    raw = openai_reply(final_completion(state))

    with oai.chat.completions.stream(stream_options={"include_usage": True}, **kw) as stream:
        events = [event.type for event in stream]
        helper = openai_reply(final_completion(stream))

    assert raw == whole
    assert helper == whole
    assert all(t == "function" for t in whole["types"])
    if whole["calls"] and name != "truncated":
        assert events.count("tool_calls.function.arguments.done") == len(whole["calls"])
    expect(name, family, whole)


def test_openai_usage_counts_reasoning_tokens(oai, family):
    kw = openai_kwargs("reasoning", family)
    chunks = list(oai.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kw))
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert all(c.usage is None for c in chunks[:-1])
    usage = chunks[-1].usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    reasoning = usage.completion_tokens_details.reasoning_tokens
    if family in THINKS:
        assert 0 < reasoning < usage.completion_tokens
    else:
        assert reasoning == 0
    plain = list(oai.chat.completions.create(stream=True, **kw))
    assert all(c.usage is None for c in plain)


def test_openai_logprobs_cover_every_token(oai, family):
    kw = openai_kwargs("tool_call", family)
    kw.update(logprobs=True, top_logprobs=2)
    whole = openai_reply(oai.chat.completions.create(**kw))
    state = ChatCompletionStreamState()
    for chunk in oai.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kw):
        state.handle_chunk(chunk)
    streamed = openai_reply(final_completion(state))
    assert streamed == whole
    assert len(whole["logprobs"]) == whole["usage"][1]
    assert all(top == 2 and lp <= 0 for _, lp, top in whole["logprobs"])


# ---- Anthropic ------------------------------------------------------------------------------


def anthropic_kwargs(name: str, family: str) -> dict:
    s = SCENARIOS[name]
    kw: dict = {"model": family, "max_tokens": s.get("max_tokens", 1024)}
    if s.get("history"):
        kw["messages"] = user("Call get_weather city=Paris") + [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21 C and sunny"}]},
        ]
    else:
        kw["messages"] = user(s["text"])
    kw["system"] = "You are a test."
    if s.get("tools"):
        kw["tools"] = ANTHROPIC_TOOLS
    choice = s.get("choice")
    if choice in ("none", "auto"):
        kw["tool_choice"] = {"type": choice}
    elif choice == "required":
        kw["tool_choice"] = {"type": "any"}
    elif choice:
        kw["tool_choice"] = {"type": "tool", "name": choice}
    if s.get("thinking") is not None:
        kw["thinking"] = {"type": "enabled", "budget_tokens": 1024} if s["thinking"] else {"type": "disabled"}
    return kw


def anthropic_reply(message) -> dict:
    blocks = []
    for b in message.content:
        if b.type == "text":
            blocks.append(("text", b.text))
        elif b.type == "thinking":
            blocks.append(("thinking", b.thinking, b.signature))
        elif b.type == "tool_use":
            blocks.append(("tool_use", b.name, b.input))
    return {"blocks": blocks, "stop_reason": message.stop_reason, "stop_sequence": message.stop_sequence,
            "usage": (message.usage.input_tokens, message.usage.output_tokens)}


_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop"}


def neutral(reply: dict) -> dict:
    """The API-neutral view that ``expect`` reads."""
    texts = [b[1] for b in reply["blocks"] if b[0] == "text"]
    thinking = [b[1] for b in reply["blocks"] if b[0] == "thinking"]
    return {"content": "".join(texts) if texts else None, "reasoning": "".join(thinking) if thinking else None,
            "calls": [(b[1], b[2]) for b in reply["blocks"] if b[0] == "tool_use"],
            "finish": _FINISH[reply["stop_reason"]], "usage": (reply["usage"][0], reply["usage"][1], None)}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_anthropic_stream_accumulates_to_the_json_reply(anth, family, name):
    skip_unless_thinking(name, family)
    kw = anthropic_kwargs(name, family)
    whole = anthropic_reply(anth.messages.create(**kw))
    with anth.messages.stream(**kw) as stream:
        kinds = [event.type for event in stream]
        streamed = anthropic_reply(stream.get_final_message())
    assert streamed == whole
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    expect(name, family, neutral(whole))
    if name == "call_inside_reasoning":
        assert [b[0] for b in whole["blocks"]] == ["thinking", "tool_use", "thinking"]


def test_anthropic_stop_sequence_ends_the_reply(anth, family):
    kw = anthropic_kwargs("text_only", family)
    kw["stop_sequences"] = ["simulated"]
    whole = anthropic_reply(anth.messages.create(**kw))
    with anth.messages.stream(**kw) as stream:
        streamed = anthropic_reply(stream.get_final_message())
    assert streamed == whole
    assert whole["stop_reason"] == "stop_sequence" and whole["stop_sequence"] == "simulated"
    assert "simulated" not in neutral(whole)["content"]
