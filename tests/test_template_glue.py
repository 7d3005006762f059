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


# ---- every real template: an agent history through the real request parsers -------------------

from lmparse.serve import anthropic as anthropic_api  # noqa: E402
from lmparse.serve import openai as openai_api  # noqa: E402
from lmparse.serve.engines.upstream import UpstreamEngine  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402
from lmparse.serve.signing import Signer  # noqa: E402
from lmparse.serve.templates import ChatTemplate, load_model_template  # noqa: E402
from lmparse.serve.tokenizer import PseudoTokenizer  # noqa: E402


def _template_sources() -> list[str]:
    """Every chat template in the test data: ``templates/*.jinja``, and each tokenizer
    directory's own (its chat_template.jinja, else tokenizer_config.json's)."""
    root = data_root()
    if root is None or not (root / "templates").is_dir():
        return []
    files = sorted(f"templates/{p.name}" for p in (root / "templates").glob("*.jinja"))
    dirs = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "templates"
                  and ((p / "chat_template.jinja").is_file() or "chat_template" in (p / "tokenizer_config.json").read_text(
                      encoding="utf-8") if (p / "tokenizer_config.json").is_file() else False))
    return files + dirs


def _loaded(source: str) -> ChatTemplate:
    """As the server loads it: a file by ``--chat-template``, a directory by ``--model``."""
    path = data_root() / source
    if path.is_file():
        return ChatTemplate(path.read_text(encoding="utf-8"), path.name)
    loaded = load_model_template(path)
    assert loaded is not None
    return loaded


SOURCES = _template_sources()
IMAGE = "https://example.test/oslo-harbour.png"
CITY_TOOL_OPENAI = [{"type": "function", "function": {"name": "get_weather", "description": "Weather now",
                                                      "parameters": {"type": "object",
                                                                     "properties": {"city": {"type": "string"}}}}}]


def _openai_history() -> dict:
    return {"model": "m", "tools": CITY_TOOL_OPENAI, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What is the weather in the picture's city?"},
                                     {"type": "image_url", "image_url": {"url": IMAGE}}]},
        {"role": "assistant", "content": None, "tool_calls": [  # what lmparse itself answers
            {"id": "call_8f3a2b1c9d", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "call_8f3a2b1c9d", "content": "Sleet, 2 degrees"}]}


def _anthropic_history() -> dict:
    return {"model": "m", "max_tokens": 64, "tools": [
        {"name": "get_weather", "description": "Weather now", "input_schema": CITY_TOOL_OPENAI[0]["function"]["parameters"]}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "What is the weather in the picture's city?"},
                {"type": "image", "source": {"type": "url", "url": IMAGE}}]},
            {"role": "assistant", "content": [  # a turn holding only tool_use
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                 "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "Sleet, 2 degrees"}]}]}


def _parsed(api: str):
    if api == "openai":
        return openai_api.parse_request(_openai_history(), "m", "reasoning_content")[0]
    return anthropic_api.parse_request(_anthropic_history(), "m", Signer(b"k" * 32))[0]


@pytest.mark.skipif(not SOURCES, reason="no chat templates in the test data (run `make testdata`)")
@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("source", SOURCES)
def test_an_agent_history_renders_with_its_content_placed(source, api):
    """An image, an assistant turn of calls only (``content: null`` / only ``tool_use``) and
    the call's result, rendered by the binding's renderer with the model's template: no
    error, and every part is in the prompt."""
    engine = UpstreamEngine("vllm", "http://unused", get_family("qwen3"), PseudoTokenizer("p"), _loaded(source))
    prompt = engine.prompt(_parsed(api))
    for text in ("What is the weather in the picture's city?", f"[image: {IMAGE}]", "get_weather", "Oslo",
                 "Sleet, 2 degrees"):
        assert text in prompt, f"{text!r} missing from the {source} prompt"
