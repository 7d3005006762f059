"""Every family preset on the simulated engine: what it renders, its parser reads back.

``test_simulated_replies_parse_back_through_every_template`` is the template round trip of the
family matrix: every template a family declares (``Family.verified_templates``) renders the
simulated model's replies, and the family's parsers must read back the calls and content.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

pytest.importorskip("orjson")
pytest.importorskip("starlette")

from lmparse import families as core  # noqa: E402
from lmparse.serve import openai as oa  # noqa: E402
from lmparse.serve.app import simulated_binding  # noqa: E402
from lmparse.serve.families import FAMILIES, missing_parsers, needs_model_template  # noqa: E402
from lmparse.serve.runner import ChatRunner  # noqa: E402
from lmparse.serve.tokenizer import PseudoTokenizer  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                         "metric": {"type": "boolean"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]


def family_params() -> list:
    return [pytest.param(name, marks=pytest.mark.skipif(bool(missing_parsers(family)), reason=(
        f"{name}: {', '.join(missing_parsers(family))} not registered yet"))) for name, family in FAMILIES.items()
        if not needs_model_template(family)]


def template_params() -> list:
    """(family, template) for every template each family declares; (family, None) for a family
    that declares none (it is served with ChatML).  A family parsed by the model's own
    response_template (beam) is served only from a model directory: tests/test_response_template_serve.py."""
    pairs = [(f.name, t) for f in core.FAMILIES for t in (f.verified_templates or (None,))
             if not needs_model_template(FAMILIES[f.name])]
    return [pytest.param(name, template, id=f"{name}-{template}", marks=pytest.mark.skipif(
        bool(missing_parsers(FAMILIES[name])), reason=f"{name}: parsers not registered yet")) for name, template in pairs]


TEMPLATE_PAIRS = [tuple(p.values) for p in template_params()]


@pytest.fixture(scope="module")
def bindings():
    return {}


def binding_for(bindings, name, template=None):
    key = (name, template)
    if key not in bindings:
        family = FAMILIES[name]
        if template is not None and template != family.template:
            # A path in the test data (a tokenizer's own template) rather than a file under templates/.
            family = dataclasses.replace(family, template=f"../{template}" if "/" in template else template)
        bindings[key] = simulated_binding(family)
    return bindings[key]


def reply(binding, text, thinking=None, **extra):
    body = {"messages": [{"role": "user", "content": text}], "tools": TOOLS, **extra}
    if thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": thinking}
    request, opts = oa.parse_request(body, binding.name, "reasoning_content")

    async def go():
        runner = ChatRunner(binding.engine.start(request), binding.new_parser(request.parser_request))
        return await oa.complete_response(runner, opts)

    message = asyncio.run(go())["choices"][0]["message"]
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])]
    return message.get("content"), message.get("reasoning_content"), calls


@pytest.mark.parametrize("name,template", template_params())
def test_simulated_replies_parse_back_through_every_template(bindings, name, template):
    if template is not None:
        _needs_file(template)
    b = binding_for(bindings, name, template)
    if template is not None:
        assert b.engine.template is not None and b.engine.template.name == template.rsplit("/", 1)[-1]
    content, _, calls = reply(b, "hello there")
    assert content.startswith('You said: "hello there"') and calls == []
    _, _, calls = reply(b, "get_weather city=Paris days=2 metric=true, and get_time")
    assert calls == [("get_weather", {"city": "Paris", "days": 2, "metric": True}), ("get_time", {})]
    _, _, calls = reply(b, "hello", tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert calls == [("get_time", {})]


@pytest.mark.parametrize("name", family_params())
def test_thinking_families_reason_and_can_call_inside_reasoning(bindings, name):
    b = binding_for(bindings, name)
    if not b.engine.thinking_on(oa.parse_request({"messages": [{"role": "user", "content": "x"}],
                                                  "chat_template_kwargs": {"enable_thinking": True}},
                                                 name, "reasoning_content")[0]):
        pytest.skip(f"{name} does not reason")
    content, reasoning, calls = reply(b, "hello there", thinking=True)
    assert reasoning and content.startswith("You said:") and calls == []
    content, reasoning, calls = reply(b, "get_weather city=Oslo while thinking", thinking=True)
    assert calls == [("get_weather", {"city": "Oslo"})]
    assert "while I think" in reasoning and "settles it" in reasoning


def test_pseudo_tokenizer_keeps_markers_whole_and_text_in_short_pieces():
    tok = PseudoTokenizer("t", ["<tool_call>", "</tool_call>"])
    text = 'ab <tool_call>\n{"name": "Paris"}</tool_call><|im_end|><｜DSML｜invoke name="x">'
    steps = tok.steps(text)
    pieces = [s[0] for s in steps]
    assert "".join(pieces) == text
    for marker in ("<tool_call>", "</tool_call>", "<|im_end|>", "｜DSML｜"):
        assert marker in pieces
    assert all(len(p) <= 5 for p in pieces if not p.startswith(("<", "｜")))
    assert tok.count(text) == len(steps) and steps == tok.steps(text)  # deterministic ids


@pytest.mark.parametrize("field,keys", [("reasoning_content", {"reasoning_content"}), ("reasoning", {"reasoning"}),
                                        ("both", {"reasoning_content", "reasoning"})])
def test_reasoning_field_is_configurable(bindings, field, keys):
    import orjson

    b = binding_for(bindings, "qwen3")
    request, opts = oa.parse_request({"messages": [{"role": "user", "content": "hi"}], "stream": True}, "qwen3", field)

    async def go():
        runner = ChatRunner(b.engine.start(request), b.new_parser(request.parser_request))
        return b"".join([chunk async for chunk in oa.stream_response(runner, opts)]).split(b"\n\n")

    deltas = [orjson.loads(c[6:])["choices"][0]["delta"] for c in asyncio.run(go()) if c.startswith(b"data: {")]
    seen = {k for d in deltas for k in d if k.startswith("reasoning")}
    assert seen == keys


def _needs_file(template: str) -> None:
    from tests.support.tokenizers import testdata_dir

    root = testdata_dir()
    path = None if root is None else root / template if "/" in template else root / "templates" / template
    if path is None or not path.is_file():
        pytest.skip(f"{template} is not in the test data (../shared/testdata/tokenizers)")


def _needs_template(family: str) -> None:
    """Skip unless the family's official template is in the test data (else a stand-in renders)."""
    from tests.support.tokenizers import testdata_dir

    root, name = testdata_dir(), FAMILIES[family].template
    if root is None or name is None or not (root / "templates" / name).is_file():
        pytest.skip(f"{family}'s template {name} is not in the test data (../shared/testdata/tokenizers)")


@pytest.mark.parametrize("thinking,opens", [(None, True), (True, True), (False, False)])
def test_the_rendered_prompt_tail_reaches_the_parser(bindings, thinking, opens):
    """Qwen3.5's template prefills ``<think>\\n`` or an empty block; the engine hands the
    prompt's tail to the parser, whose ``auto`` initial mode follows it."""
    _needs_template("qwen3.5")
    b = binding_for(bindings, "qwen3.5")
    body = {"messages": [{"role": "user", "content": "hi"}]}
    if thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": thinking}
    request, _ = oa.parse_request(body, b.name, "reasoning_content")
    stream = b.engine.start(request)
    assert stream.prompt_tail.rstrip().endswith("<think>") is opens
    message = b.new_parser(request.parser_request, stream.prompt_tail).parse_complete("Hmm.</think>Hi")
    assert (message.reasoning_content, message.content) == (("Hmm.", "Hi") if opens else (None, "Hmm.</think>Hi"))


def test_the_prompt_tail_outranks_the_request_rule(bindings):
    """No switch in the request (the default rule would say reasoning), but the prompt
    prefilled an empty block: the reply is content."""
    b = binding_for(bindings, "qwen3.5")
    request, _ = oa.parse_request({"messages": [{"role": "user", "content": "hi"}]}, b.name, "reasoning_content")
    parser = b.new_parser(request.parser_request, "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert parser.parse_complete("Hi").content == "Hi"


def test_tool_call_parser_auto_reads_the_served_template():
    from lmparse.serve.bindings import resolve_auto

    _needs_template("nemotron3")
    family = FAMILIES["nemotron3"].with_parsers(tool="auto")
    assert simulated_binding(family).family.tool_parser == "qwen3coder"
    with pytest.raises(ValueError, match="needs the model's chat template"):
        resolve_auto(FAMILIES["pythonic"].with_parsers(tool="auto"), None)


@pytest.mark.parametrize("assistant", [{"reasoning_content": "mulling"}, {"reasoning": "mulling"},
                                       {"reasoning_content": None, "reasoning": "mulling"},
                                       {"reasoning_content": "mulling", "reasoning": "mulling"}])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "both"])
def test_either_reasoning_field_is_read_on_input(field, assistant):
    """Whatever --reasoning-field answers with, a replayed assistant turn may name its reasoning
    either way (vLLM's clients send `reasoning`, SGLang's and llama.cpp's `reasoning_content`)."""
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello", **assistant},
                         {"role": "user", "content": "again"}]}
    request, _ = oa.parse_request(body, "qwen3", field)
    assert request.messages[1]["reasoning_content"] == "mulling" and "reasoning" not in request.messages[1]
