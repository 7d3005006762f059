"""What lmparse hands the models' own chat templates: agent-shaped conversations render with
each template instead of falling back to ChatML.  Mid-conversation system turns, an
assistant turn of calls only (`content: null`), replayed reasoning under the name each
template reads, tools without a description, Kimi-K2's mutable queue."""

from __future__ import annotations

import pytest

pytest.importorskip("jinja2")

from lmparse.serve.templates import load_template  # noqa: E402
from lmparse.serve.tokenizer import testdata_dir as data_root  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]  # no description
REASONING = "The user wants the weather, so I call get_weather."


def template(name: str):
    root = data_root()
    loaded = load_template(root, name, None) if root is not None else None
    if loaded is None:
        pytest.skip(f"template {name} not in the test data (run `make testdata`)")
    return loaded


def tool_turns(content=None) -> list[dict]:
    return [{"role": "user", "content": "weather in Oslo?"},
            {"role": "assistant", "content": content, "reasoning_content": REASONING, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather",
                                                                  "arguments": '{"city": "Oslo"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "cold"}]


@pytest.mark.parametrize("name", ["Qwen-Qwen3-0.6B.jinja", "GLM-4.7-Flash.jinja", "Kimi-K2-Thinking.jinja",
                                  "deepseek-ai-DeepSeek-V3.2.jinja", "openai-gpt-oss-120b.jinja",
                                  "MiniMax-M2.jinja"])
def test_replayed_reasoning_of_a_call_turn_is_in_the_prompt(name):
    prompt = template(name).render(tool_turns(), TOOLS, True)
    assert REASONING in prompt and "cold" in prompt and "Oslo" in prompt


def test_gpt_oss_gets_text_and_reasoning_of_a_call_turn_in_its_analysis():
    prompt = template("openai-gpt-oss-120b.jinja").render(tool_turns(content="Let me check."), TOOLS, None)
    assert f"<|channel|>analysis<|message|>{REASONING}\n\nLet me check.<|end|>" in prompt


@pytest.mark.parametrize("name", ["mistralai-Ministral-3-14B-Reasoning-2512.jinja",
                                  "mistralai-Mistral-Nemo-Instruct-2407.jinja",
                                  "Mistral-Small-3.2-24B-Instruct-2506.jinja", "Qwen-Qwen3-0.6B.jinja",
                                  "meta-llama-Llama-3.2-3B-Instruct.jinja"])
def test_system_turns_after_the_first_render(name):
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"},
                {"role": "system", "content": "# Environment: /tmp"}, {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "again"}, {"role": "system", "content": "Answer in French."}]
    prompt = template(name).render(messages, None, None)
    for text in ("You are terse.", "hi", "# Environment: /tmp", "hello", "again", "Answer in French."):
        assert text in prompt


def test_the_template_gets_copies_not_the_request():
    messages = tool_turns()
    before = repr(messages)
    template("Kimi-K2-Thinking.jinja").render(messages, TOOLS, True)  # it appends to lists while it renders
    assert repr(messages) == before
