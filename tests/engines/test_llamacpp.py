"""lmparse serve --engine llamacpp in front of a real llama-server, through the official SDKs.

Each reply is forced token by token (conftest, forcing), so every assertion names exact
text.
"""

from __future__ import annotations

import json
import time

import anthropic
import httpx
import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from lmparse.constrain.check import schema_errors

from .conftest import SLOT_CONTEXT, LiveLlamaServer, gateway_for, post_json
from .forcing import force
from .gguf_model import IM_END_ID

REASONING = "The user wants the weather in Paris, so I call get_weather."
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL_2 = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "東京"}}\n</tool_call>'
ONE_CALL = f"<think>\n{REASONING}\n</think>\n\n{CALL}"
TWO_CALLS = f"<think>\nTwo cities.\n</think>\n\n{CALL}\n{CALL_2}"
# " 晴" and "鿰" are each two byte-level tokens that split the character: forced as literals
TEXT = "Paris is sunny today: 晴天 ☀️ 25 °C, and 鿰 is a rare character. Bye!"
PLAIN = f"<think>\nShort.\n</think>\n\n{TEXT}"
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
USER = [{"role": "user", "content": "What is the weather in Paris?"}]
# lmparse keeps the whitespace around </think> as the model wrote it (as vLLM's qwen3 parser does)
SAID = f"\n{REASONING}\n"
SHORT, SAID_TEXT = "\nShort.\n", "\n\n" + TEXT


def oai(stack) -> openai.OpenAI:
    return openai.OpenAI(base_url=stack.gateway.url + "/v1", api_key="unused", max_retries=0)


def anth(stack) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=stack.gateway.url, api_key="unused", max_retries=0)


def reply_of(completion) -> dict:
    choice = completion.choices[0]
    m = choice.message
    return {"content": m.content, "reasoning": getattr(m, "reasoning_content", None),
            "calls": [(c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls or ()],
            "finish": choice.finish_reason}


def streamed(client: openai.OpenAI, **kw):
    state = ChatCompletionStreamState()
    for chunk in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kw):
        state.handle_chunk(chunk)
    return state.current_completion_snapshot


def both(client: openai.OpenAI, **kw) -> tuple[dict, dict]:
    """The reply whole and streamed (accumulated the SDK's way)."""
    return reply_of(client.chat.completions.create(**kw)), reply_of(streamed(client, **kw))


# ---- the forcing itself, straight to llama-server ------------------------------------------------


@pytest.mark.parametrize("reply", [ONE_CALL, PLAIN])
def test_the_grammar_makes_llama_server_say_the_reply_token_by_token(stacks, reply):
    s = stacks(reply)
    status, out = post_json(s.llama.url + "/completion", {"prompt": "<|im_start|>user\nhi<|im_end|>\n"
                                                          "<|im_start|>assistant\n", "return_tokens": True})
    assert status == 200, out
    assert out["content"] == reply
    assert out["stop_type"] == "eos" and out["tokens"][-1] == IM_END_ID  # ended by the logit bias
    if reply == ONE_CALL:  # no character split between tokens: the tokenizer's own ids
        assert out["tokens"][:-1] == s.forced.ids
    assert out["tokens_predicted"] == len(out["tokens"])


# ---- OpenAI ----------------------------------------------------------------------------------------


def test_openai_reasoning_then_a_tool_call_whole_and_streamed(stacks):
    whole, stream = both(oai(stacks(ONE_CALL)), model="qwen3", messages=USER, tools=[WEATHER])
    assert whole == stream
    # of the blank line between </think> and <tool_call>, the newline Qwen's template writes before a
    # call is the call's (its block_lead); the other stays content (vLLM's hermes leaves both)
    assert whole == {"content": "\n", "reasoning": SAID, "calls": [("get_weather", {"city": "Paris"})],
                     "finish": "tool_calls"}


def test_openai_two_calls_keep_their_order_and_utf8_arguments(stacks):
    whole, stream = both(oai(stacks(TWO_CALLS)), model="qwen3", messages=USER, tools=[WEATHER])
    assert whole == stream
    assert whole["calls"] == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "東京"})]
    assert whole["reasoning"] == "\nTwo cities.\n" and whole["finish"] == "tool_calls"


def test_openai_plain_text_with_split_utf8_characters_arrives_intact(stacks):
    whole, stream = both(oai(stacks(PLAIN)), model="qwen3", messages=USER)
    assert whole == stream == {"content": SAID_TEXT, "reasoning": SHORT, "calls": [], "finish": "stop"}


def test_openai_stop_word_cuts_the_reply_before_it(stacks):
    whole, stream = both(oai(stacks(PLAIN)), model="qwen3", messages=USER, stop=["sunny"])
    assert whole == stream
    assert whole["content"] == "\n\nParis is " and whole["finish"] == "stop"


def test_openai_max_tokens_ends_with_length(stacks, tokenizer):
    client = oai(stacks(PLAIN))
    limit = len(tokenizer.encode("<think>\nShort.\n</think>\n\nParis is", add_special_tokens=False).ids)
    completion = client.chat.completions.create(model="qwen3", messages=USER, max_tokens=limit)
    assert reply_of(completion) == {"content": "\n\nParis is", "reasoning": SHORT, "calls": [], "finish": "length"}
    assert completion.usage.completion_tokens == limit


def test_openai_usage_is_the_engines_count(stacks):
    s = stacks(ONE_CALL)
    completion = oai(s).chat.completions.create(model="qwen3", messages=USER, tools=[WEATHER])
    usage = completion.usage
    status, direct = post_json(s.llama.url + "/apply-template", {"messages": USER, "tools": [WEATHER]})
    assert status == 200
    status, tokens = post_json(s.llama.url + "/tokenize", {"content": direct["prompt"], "parse_special": True})
    assert usage.prompt_tokens == len(tokens["tokens"])
    assert usage.completion_tokens == len(s.forced.ids) + 1  # the reply and <|im_end|>
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    reasoning = usage.completion_tokens_details.reasoning_tokens
    assert 0 < reasoning < usage.completion_tokens


def test_openai_logprobs_cover_every_token_whole_and_streamed(stacks):
    s = stacks(ONE_CALL)
    client = oai(s)
    kw = {"model": "qwen3", "messages": USER, "tools": [WEATHER], "logprobs": True, "top_logprobs": 2}
    whole = client.chat.completions.create(**kw)
    stream = streamed(client, **kw)
    entries = whole.choices[0].logprobs.content
    assert [(e.token, e.logprob) for e in entries] == [(e.token, e.logprob) for e in stream.choices[0].logprobs.content]
    assert all(len(e.top_logprobs) == 2 and e.logprob <= 0 for e in entries)
    # every counted token has its entry, <|im_end|> too (its text is not shown)
    assert "".join(e.token for e in entries) == ONE_CALL
    assert len(entries) == whole.usage.completion_tokens == len(s.forced.ids) + 1 and entries[-1].token == ""


def test_openai_prompt_is_the_one_llama_server_renders(stacks):
    """What lmparse sends upstream equals llama-server's own rendering (its /apply-template)."""
    s = stacks(ONE_CALL)
    messages = [{"role": "system", "content": "Be brief."}, *USER]
    oai(s).chat.completions.create(model="qwen3", messages=messages, tools=[WEATHER])
    last = max((slot for slot in s.llama.slots() if "id_task" in slot), key=lambda slot: slot["id_task"])
    status, direct = post_json(s.llama.url + "/apply-template", {"messages": messages, "tools": [WEATHER]})
    assert status == 200
    assert last["prompt"] == direct["prompt"]
    assert direct["prompt"].endswith("<|im_start|>assistant\n")


def test_template_from_engine_renders_once_and_answers_the_same(stacks):
    """``--template-from-engine``: llama-server renders the prompt (its /apply-template), and
    the reply parses as with lmparse's own rendering from --model."""
    s = stacks(ONE_CALL, gateway_args=("--template-from-engine",))
    messages = [{"role": "system", "content": "Be brief."}, *USER]
    whole, stream = both(oai(s), model="qwen3", messages=messages, tools=[WEATHER])
    assert whole == stream and whole["calls"] == [("get_weather", {"city": "Paris"})]
    last = max((slot for slot in s.llama.slots() if "id_task" in slot), key=lambda slot: slot["id_task"])
    status, direct = post_json(s.llama.url + "/apply-template", {"messages": messages, "tools": [WEATHER]})
    assert status == 200 and last["prompt"] == direct["prompt"]


# ---- Anthropic -------------------------------------------------------------------------------------

ANTHROPIC_TOOL = {"name": "get_weather", "description": "Weather of a city",
                  "input_schema": WEATHER["function"]["parameters"]}


def blocks_of(message) -> list[tuple]:
    out = []
    for b in message.content:
        out.append(("thinking", b.thinking) if b.type == "thinking" else
                   ("text", b.text) if b.type == "text" else (b.type, getattr(b, "name", None), getattr(b, "input", None)))
    return out


def anthropic_both(client: anthropic.Anthropic, **kw):
    whole = client.messages.create(**kw)
    with client.messages.stream(**kw) as stream:
        final = stream.get_final_message()
    return whole, final


def test_anthropic_thinking_then_tool_use_whole_and_streamed(stacks):
    whole, final = anthropic_both(anth(stacks(ONE_CALL)), model="qwen3", max_tokens=200, messages=USER,
                                  tools=[ANTHROPIC_TOOL])
    assert blocks_of(whole) == blocks_of(final) == [("thinking", SAID),
                                                    ("tool_use", "get_weather", {"city": "Paris"})]
    assert whole.stop_reason == final.stop_reason == "tool_use"
    assert final.usage.output_tokens == whole.usage.output_tokens > 0


def test_anthropic_text_stop_sequence_and_max_tokens(stacks, tokenizer):
    client = anth(stacks(PLAIN))
    whole, final = anthropic_both(client, model="qwen3", max_tokens=200, messages=USER)
    assert blocks_of(whole) == blocks_of(final) == [("thinking", SHORT), ("text", SAID_TEXT)]
    assert whole.stop_reason == "end_turn"
    whole, final = anthropic_both(client, model="qwen3", max_tokens=200, messages=USER, stop_sequences=["sunny"])
    assert blocks_of(final)[-1] == ("text", "\n\nParis is ")
    assert whole.stop_reason == final.stop_reason == "stop_sequence" and final.stop_sequence == "sunny"
    limit = len(tokenizer.encode("<think>\nShort.\n</think>\n\nParis is", add_special_tokens=False).ids)
    whole, final = anthropic_both(client, model="qwen3", max_tokens=limit, messages=USER)
    assert blocks_of(final)[-1] == ("text", "\n\nParis is")
    assert whole.stop_reason == final.stop_reason == "max_tokens"


# ---- the engine under load, failing, overflowing ------------------------------------------------


def test_client_disconnect_stops_generation_upstream(stacks):
    """Noise (no grammar) up to the slot's context, dropped after the first chunk: llama-server
    must free the slot long before it would have finished."""
    s = stacks(None)
    before = s.llama.metric("llamacpp:tokens_predicted_total")
    with httpx.stream("POST", s.gateway.url + "/v1/chat/completions", timeout=30, json={
            "model": "qwen3", "messages": USER, "stream": True, "max_tokens": SLOT_CONTEXT - 100,
            "logit_bias": {"151645": -100}}) as r:
        assert r.status_code == 200
        next(r.iter_lines())
    deadline = time.monotonic() + 10
    while any(slot["is_processing"] for slot in s.llama.slots()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(slot["is_processing"] for slot in s.llama.slots())
    time.sleep(0.5)
    generated = s.llama.metric("llamacpp:tokens_predicted_total") - before
    assert generated < SLOT_CONTEXT - 100


def test_engine_dying_mid_stream_is_an_error_event(stacks, qwen3_gguf):
    """llama-server killed while streaming: the OpenAI stream ends in an error the SDK raises,
    never a silent success."""
    llama = LiveLlamaServer(qwen3_gguf)
    gateway = gateway_for(llama)
    try:
        client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(model="qwen3", messages=USER, stream=True,
                                                max_tokens=SLOT_CONTEXT - 100)
        with pytest.raises(openai.APIError):
            for i, _ in enumerate(stream):
                if i == 2:
                    llama.proc.kill()
    finally:
        gateway.stop()
        llama.stop()


def test_context_overflow_is_a_400_with_the_engines_reason(stacks):
    s = stacks(PLAIN)
    long = [{"role": "user", "content": "weather " * (SLOT_CONTEXT + 200)}]
    with pytest.raises(openai.APIStatusError) as caught:
        oai(s).chat.completions.create(model="qwen3", messages=long, max_tokens=10)
    status = caught.value.status_code
    assert status != 502, "the engine's 4xx mapped to a 400"
    assert status == 400
    assert "context" in str(caught.value.message).lower()


# ---- llama-server --special, and markers that are CONTROL tokens -----------------------------------


def test_special_server_end_of_turn_text_never_reaches_content(stacks, qwen3_gguf):
    s = stacks(PLAIN, special=True)
    whole, stream = both(oai(s), model="qwen3", messages=USER)
    leaked = "<|im_end|>" in (whole["content"] or "") or "<|im_end|>" in (stream["content"] or "")
    assert not leaked, "end-of-turn text kept out of content"
    assert whole == stream == {"content": SAID_TEXT, "reasoning": SHORT, "calls": [], "finish": "stop"}


def test_special_server_tool_call_is_parsed(stacks, qwen3_gguf):
    s = stacks(ONE_CALL, special=True)
    whole, stream = both(oai(s), model="qwen3", messages=USER, tools=[WEATHER])
    assert whole == stream
    assert whole["calls"] == [("get_weather", {"city": "Paris"})] and whole["reasoning"] == SAID


def test_control_token_markers_do_not_make_the_call_vanish(stacks, qwen3_control_gguf):
    s = stacks(ONE_CALL, model=qwen3_control_gguf)
    status, direct = post_json(s.llama.url + "/completion", {"prompt": "<|im_start|>assistant\n"})
    assert status == 200 and "<tool_call>" not in direct["content"]  # the engine hides CONTROL text by default
    whole, stream = both(oai(s), model="qwen3", messages=USER, tools=[WEATHER])
    assert whole["calls"], "preserved_tokens naming the family's markers"
    assert whole == stream
    assert whole == {"content": "\n", "reasoning": SAID, "calls": [("get_weather", {"city": "Paris"})],
                     "finish": "tool_calls"}


# ---- request fields forwarded to llama-server --------------------------------------------------------


def test_extra_body_grammar_reaches_llama_server(stacks, tokenizer):
    s = stacks(None)  # no default grammar: noise unless the request's grammar arrives
    forced = force(tokenizer, PLAIN)
    completion = oai(s).chat.completions.create(
        model="qwen3", messages=USER, extra_body={"grammar": forced.grammar, "logit_bias": {"151645": 100}})
    got = reply_of(completion)
    assert got["content"] == SAID_TEXT, "extra_body forwarding with llama.cpp's allow-list"
    assert got == {"content": SAID_TEXT, "reasoning": SHORT, "calls": [], "finish": "stop"}


def test_temperature_and_seed_reach_llama_server(stacks):
    s = stacks(None)
    oai(s).chat.completions.create(model="qwen3", messages=USER, temperature=0.0, seed=1234, max_tokens=2)
    params = max((slot for slot in s.llama.slots() if "id_task" in slot), key=lambda slot: slot["id_task"])["params"]
    assert params.get("seed") == 1234, "sampling fields forwarded to the engine"
    assert params["temperature"] == 0.0


# ---- tool_choice enforced by lmparse's grammar --------------------------------------------------


# An enum is all the random model may choose from: a free string it would never close (it
# wanders in one until max_tokens, as it does in the city of get_weather).
UNIT = {"type": "function", "function": {"name": "set_unit", "description": "Pick a unit", "parameters": {
    "type": "object", "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["unit"]}}}


@pytest.mark.parametrize("tool_choice, tools", [
    ("required", [UNIT]),
    ({"type": "function", "function": {"name": "set_unit"}}, [WEATHER, UNIT]),
])
def test_tool_choice_makes_the_random_model_call_a_tool_that_fits_its_schema(stacks, tool_choice, tools):
    """No forced reply: the random-weight model writes noise unless constrained.  With
    tool_choice, lmparse sends the qwen3 dialect's GBNF (its arguments from the tool's
    schema), and what comes back parses as a call whose arguments fit the schema."""
    s = stacks(None)
    completion = oai(s).chat.completions.create(
        model="qwen3", messages=USER, tools=tools, tool_choice=tool_choice, temperature=0.0,
        max_tokens=400, parallel_tool_calls=False, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    (call,) = choice.message.tool_calls
    assert call.function.name == "set_unit"
    assert json.loads(call.function.arguments)["unit"] in ("celsius", "fahrenheit")
    assert not schema_errors(json.loads(call.function.arguments), UNIT["function"]["parameters"])
