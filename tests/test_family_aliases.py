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
