"""The 2026 aliases onto existing dialects, checked against the families' own chat templates.

Granite 4.0/4.1 -> ``qwen``; Qwen3.5, Nemotron 3 Nano -> ``qwen3coder``; Step-3.5 ->
``step3p5`` (Qwen3-Coder parsing, blocks written back to back); Ling 3 -> ``ling3`` (GLM-4.7
parsing, its own whitespace layout).  Each template renders an assistant turn with calls;
the aliased dialect parses the reply back (at real Qwen3 token boundaries too, a stand-in
vocabulary for the Qwen-family templates: the Qwen3.5 vocabulary is not in the test data)
and its ``render()`` writes the calls exactly as the template does.
"""

from __future__ import annotations

import json

import pytest

from lmparse import ReasoningParserManager, ToolParserManager, create_parser

from .support import tokenizers
from .support.stream import check_parse
from .support.typed_tools import TOOLS
from .test_xml_templates import SCENARIOS, load_template, reply_of

# (id, template, tool parser, reasoning parser, end-of-turn marker, tokenizers)
ALIASES = [
    ("granite-4.0", "ibm-granite-granite-4.0.jinja", "granite4", None, "<|end_of_text|>", ()),
    ("granite-4.1", "ibm-granite-granite-4.1.jinja", "granite4", None, "<|end_of_text|>", ()),
    ("qwen3.5", "Qwen3.5-4B.jinja", "qwen3.5", "qwen3.5", "<|im_end|>", ("qwen3",)),
    ("nemotron3", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "nemotron3", "nemotron3", "<|im_end|>", ("qwen3",)),
    ("step3p5", "StepFun3.5-Flash.jinja", "step3p5", "step3p5", "<|im_end|>", ("qwen3",)),
    ("ling3", "inclusionai-ling-3.0-flash.jinja", "ling3", "ling3", "<|role_end|>", ()),
]
CASES = [(a, s) for a in ALIASES for s in SCENARIOS]


def _conversation(calls, reasoning):
    assistant = {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)]}
    if reasoning:
        assistant["reasoning_content"] = "The user wants weather."
    return [{"role": "user", "content": "Weather in Paris?"}, assistant]


@pytest.mark.parametrize("alias,scenario", CASES, ids=[f"{a[0]}-{s}" for a, s in CASES])
def test_alias_round_trips_through_its_template(alias, scenario):
    _, name, tool_parser, reasoning_parser, end_marker, tokenizer_names = alias
    calls = SCENARIOS[scenario]
    template = load_template(f"templates/{name}")
    messages = _conversation(calls, reasoning_parser is not None)
    reply = reply_of(template, messages, end_marker)
    prompt = template.render(messages=messages[:-1], tools=TOOLS, add_generation_prompt=True)

    def make():
        return create_parser(tool_parser=tool_parser, reasoning_parser=reasoning_parser, request={"tools": TOOLS},
                             prompt=prompt)

    content, reasoning, got = check_parse(make, reply, None, tokenizers.real_token_chunkings(reply, tokenizer_names))
    assert [(n, json.loads(arguments)) for n, arguments in got] == calls
    assert (content or "").strip() == "Let me check."
    if reasoning_parser is not None:
        assert (reasoning or "").strip() == "The user wants weather."
    wire = ToolParserManager.get(tool_parser).render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert wire in reply


def test_granite4_is_the_qwen_dialect_itself():
    """Byte-identical syntax: an alias, not a subclass."""
    assert ToolParserManager.get("granite4") is ToolParserManager.get("qwen")


@pytest.mark.parametrize("alias,base", [("qwen3.5", "qwen3coder"), ("nemotron3", "qwen3coder"),
                                        ("glm5", "glm47")])
def test_identical_families_are_plain_aliases(alias, base):
    assert ToolParserManager.get(alias) is ToolParserManager.get(base)


@pytest.mark.parametrize("variant,base", [("step3p5", "qwen3coder"), ("ling3", "glm47")])
def test_layout_variants_differ_only_in_rendering(variant, base):
    cls, parent = ToolParserManager.get(variant), ToolParserManager.get(base)
    assert cls is not parent and issubclass(cls, parent)
    overridden = {k for k in vars(cls) if not k.startswith("__")}
    assert overridden <= {"render", "block_separator"}


def test_ling3_whitespace_between_key_and_value_is_layout():
    """PROTOCOLS.md's one detail to guarantee: ``</arg_key>\\n<arg_value>`` and the spaced
    variants parse as GLM-4.7's inline form."""
    text = "<tool_call>f\n<arg_key>a</arg_key>\n \t<arg_value>1</arg_value>\n<arg_key>b</arg_key><arg_value>x</arg_value>\n</tool_call>"
    message = create_parser("ling3").parse_complete(text)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [("f", {"a": "1", "b": "x"})]
    assert not message.content


def test_deepseek_v41_reasoning_is_deepseek_v4():
    assert ReasoningParserManager.get("deepseek-v41") is ReasoningParserManager.get("deepseek-v4")
