"""The 2026 aliases onto existing dialects: which are the dialect itself, which a layout variant.

Granite 4.0/4.1 -> ``qwen``; Qwen3.5, Nemotron 3 Nano -> ``qwen3coder``; GLM-5 -> ``glm47``;
Step-3.5 -> ``step3p5`` (Qwen3-Coder parsing, blocks written back to back); Ling 3 -> ``ling3``
(GLM-4.7 parsing, its own whitespace layout).  Each claim is checked against the family's
template in tests/test_xml_templates.py (calls rendered, parsed back, ``render()`` equal to
what the template wrote); GLM-5 has no template in the test data.
"""

from __future__ import annotations

import json

import pytest

from lmparse import ReasoningParserManager, ToolParserManager, create_parser


def test_granite4_is_the_qwen_dialect_itself():
    """Byte-identical syntax: an alias, not a subclass."""
    assert ToolParserManager.get("granite4") is ToolParserManager.get("qwen")


@pytest.mark.parametrize("alias,base", [("qwen3.5", "qwen3coder"), ("nemotron3", "qwen3coder"),
                                        ("glm5", "glm47"), ("granite4.2", "qwen3coder")])
def test_identical_families_are_plain_aliases(alias, base):
    assert ToolParserManager.get(alias) is ToolParserManager.get(base)


@pytest.mark.parametrize("variant,base", [("step3p5", "qwen3coder"), ("ling3", "glm47"), ("step5", "qwen3coder")])
def test_layout_variants_differ_only_in_rendering(variant, base):
    cls, parent = ToolParserManager.get(variant), ToolParserManager.get(base)
    assert cls is not parent and issubclass(cls, parent)
    overridden = {k for k in vars(cls) if not k.startswith("__")}
    assert overridden <= {"render", "block_lead", "block_separator", "function_close", "summary"}  # layout only


def test_ling3_whitespace_between_key_and_value_is_layout():
    """PROTOCOLS.md's one detail to guarantee: ``</arg_key>\\n<arg_value>`` and the spaced
    variants parse as GLM-4.7's inline form."""
    text = "<tool_call>f\n<arg_key>a</arg_key>\n \t<arg_value>1</arg_value>\n<arg_key>b</arg_key><arg_value>x</arg_value>\n</tool_call>"
    message = create_parser("ling3").parse_complete(text)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [("f", {"a": "1", "b": "x"})]
    assert not message.content


def test_deepseek_v41_reasoning_is_deepseek_v4():
    assert ReasoningParserManager.get("deepseek-v41") is ReasoningParserManager.get("deepseek-v4")


# The SMG Symphony and Dynamo names (PROTOCOLS.md, "SMG Symphony aliases"): each is the same
# class as the parser it names, and ``lmparse parsers`` lists it under that parser.
SYMPHONY_ALIASES = [("tool", "qwen3-tagged", "qwen3coder"), ("tool", "lfm2.5", "lfm2"),
                    ("reasoning", "lfm2.5", "lfm2"), ("reasoning", "nemotron3", "qwen3.5")]


@pytest.mark.parametrize("kind,alias,base", SYMPHONY_ALIASES)
def test_symphony_and_dynamo_names_are_plain_aliases(kind, alias, base):
    registry = {"tool": ToolParserManager, "reasoning": ReasoningParserManager}[kind]
    assert registry.get(alias) is registry.get(base)


@pytest.mark.parametrize("kind,alias,base", SYMPHONY_ALIASES)
def test_lmparse_parsers_lists_the_alias_under_its_parser(kind, alias, base, capsys):
    from lmparse.cli import main

    assert main(["parsers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    [row] = [r for r in rows if r["kind"] == kind and r["name"] == base]
    assert alias in row["aliases"]


def test_nemotron3_reasoning_starts_where_the_prompt_leaves_it():
    """Dynamo's ``nemotron3`` reasoning name on the Nemotron 3 family: the prompt decides."""
    thinking = create_parser(tool_parser="nemotron3", reasoning_parser="nemotron3",
                             prompt="<|im_start|>assistant\n<think>\n").parse_complete("hm</think>Hi")
    assert (thinking.reasoning_content, thinking.content) == ("hm", "Hi")
    closed = create_parser(tool_parser="nemotron3", reasoning_parser="nemotron3",
                           prompt="<|im_start|>assistant\n<think></think>").parse_complete("Hi")
    assert (closed.reasoning_content, closed.content) == (None, "Hi")


def test_lfm2_5_parses_a_call_with_an_escaped_quote():
    """Symphony's LFM2.5 corpus: a backslash-escaped quote inside a single-quoted string."""
    text = "<|tool_call_start|>[f(note='it\\'s fine', city='Zürich')]<|tool_call_end|>"
    message = create_parser(tool_parser="lfm2.5", reasoning_parser="lfm2.5").parse_complete(text)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("f", {"note": "it's fine", "city": "Zürich"})]
    assert not message.content
