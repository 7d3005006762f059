"""``tool_parser="auto"``: every chat template in the test data maps to its one right dialect or is refused.

A wrong silent pick (zero calls, empty content, HTTP 200) must be impossible, so each
template either selects the dialect the family is documented to use or raises a
``ValueError`` naming the candidates.  ``EXPECTED`` says what each template's family
uses; a family whose dialect is not registered (yet) must be refused, not matched to
another dialect.  ``PICKED`` are those the selection must get (not merely not get wrong).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lmparse import ToolParserManager, create_parser
from lmparse.tools.autoselect import select_tool_parser

from .support import tokenizers

# template (relative to the test data) -> the dialect its family uses (None: no tool dialect here)
EXPECTED = {
    "templates/Apertus-8B-Instruct.jinja": "apertus",
    "templates/Cohere2MoE.jinja": "cohere-command",
    "templates/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "cohere-command",
    "templates/GLM-4.6.jinja": "glm47",
    "templates/GLM-4.7-Flash.jinja": "glm47",
    "templates/GigaChat3-10B-A1.8B.jinja": "gigachat3",
    "templates/GigaChat3.1-10B-A1.8B.jinja": "gigachat3",
    "templates/Kimi-K2-Instruct.jinja": "kimi-k2",
    "templates/Kimi-K2-Thinking.jinja": "kimi-k2",
    "templates/Kimi-K3.jinja": "kimi-k3",
    "templates/LFM2-8B-A1B.jinja": "lfm2",
    "templates/LFM2.5-8B-A1B.jinja": "lfm2",
    "templates/LFM2.5-Instruct.jinja": "lfm2",
    "templates/MiniMax-M2.jinja": "minimax-m2",
    "templates/MiniMax-M3.jinja": "minimax-m3",
    "templates/Mistral-Small-3.2-24B-Instruct-2506.jinja": "mistral",
    "templates/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": "qwen3coder",
    "templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "qwen",
    "templates/Qwen-QwQ-32B.jinja": "qwen",
    "templates/Qwen-Qwen2.5-7B-Instruct.jinja": "qwen",
    "templates/Qwen-Qwen3-0.6B.jinja": "qwen",
    "templates/Qwen3-Coder.jinja": "qwen3coder",
    "templates/Qwen3.5-4B.jinja": "qwen3coder",
    "templates/StepFun3.5-Flash.jinja": "qwen3coder",
    "templates/deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja": "deepseek-r1",
    "templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": "deepseek-r1",
    "templates/deepseek-ai-DeepSeek-V3.1.jinja": "deepseek-v31",
    "templates/deepseek-ai-DeepSeek-V3.2.jinja": "deepseek-v32",
    "templates/deepseek-ai-DeepSeek-V4-Flash-0731.jinja": "deepseek-v4",
    "templates/deepseek-ai-DeepSeek-V4.jinja": "deepseek-v4",
    "templates/google-gemma-4-31B-it-interleaved.jinja": "gemma4",
    "templates/google-gemma-4-31B-it.jinja": "gemma4",
    "templates/ibm-granite-granite-4.0.jinja": "qwen",
    "templates/ibm-granite-granite-4.1.jinja": "qwen",
    "templates/inclusionai-ling-3.0-flash.jinja": "glm47",
    "templates/meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3",
    "templates/meta-llama-Llama-3.2-3B-Instruct.jinja": "llama3",
    "templates/mistralai-Ministral-3-14B-Reasoning-2512.jinja": "mistral",
    "templates/mistralai-Mistral-Nemo-Instruct-2407.jinja": "mistral",
    "templates/moonshotai-Kimi-K2.jinja": "kimi-k2",
    "templates/openai-gpt-oss-120b.jinja": None,  # Harmony: a response parser, not a tool dialect
    "templates/muse-glimmer.jinja": "muse",  # ATEM: no dialect registered yet, so it must be refused
    "templates/openbmb-MiniCPM5-1B.jinja": "minicpm5",
    "templates/poolside-Laguna-S-2.1.jinja": "glm47",
    "templates/poolside-Laguna-XS-2.1.jinja": "glm47",
    "templates/poolside-Laguna-XS.2.jinja": "glm47",
    "templates/tencent-Hy3.jinja": "hunyuan",
    "glm-4.5/chat_template.jinja": "glm47",
    "glm-4.7-flash/chat_template.jinja": "glm47",
    "minimax-m2/chat_template.jinja": "minimax-m2",
}
# Templates whose markers are literal enough that auto must select them (parse-equivalent
# layout variants, glm45 / ling3 / step3p5, are their base dialect).
PICKED = {t for t, d in EXPECTED.items() if d in {"glm47", "kimi-k2", "minimax-m2", "mistral", "qwen3coder",
                                                    "deepseek-r1", "deepseek-v31", "deepseek-v32", "deepseek-v4"}}
PICKED |= {"templates/Qwen-Qwen3-0.6B.jinja", "templates/ibm-granite-granite-4.0.jinja",
           "templates/meta-llama-Llama-3.1-8B-Instruct.jinja"}
PICKED |= {"templates/MiniMax-M3.jinja", "templates/tencent-Hy3.jinja"}  # tags built from pieces: template_markers
PICKED |= {t for t, d in EXPECTED.items() if d in {"cohere-command", "apertus", "gigachat3"}}
# Only LFM2.5-8B-A1B writes calls; LFM2-8B-A1B and LFM2.5-Instruct hold no marker of them (refused).
PICKED |= {"templates/LFM2.5-8B-A1B.jinja"}


def _root() -> Path:
    root = tokenizers.testdata_dir()
    if root is None or not (root / "templates").is_dir():
        pytest.skip("the chat templates of the test data are missing")
    return root


def _outcome(text: str) -> type | None:
    try:
        return ToolParserManager.get(select_tool_parser(text))
    except ValueError:
        return None


def test_the_table_covers_every_template_in_the_test_data():
    root = _root()
    present = {str(p.relative_to(root)) for p in root.glob("templates/*.jinja")}
    present |= {str(p.relative_to(root)) for p in root.glob("*/chat_template.jinja")}
    assert present <= set(EXPECTED), f"add these templates to EXPECTED: {sorted(present - set(EXPECTED))}"


@pytest.mark.parametrize("template", sorted(EXPECTED))
def test_each_template_maps_to_its_dialect_or_is_refused(template):
    path = _root() / template
    if not path.is_file():
        pytest.skip(f"{template} is missing")
    picked = _outcome(path.read_text())
    expected = EXPECTED[template]
    right = ToolParserManager.get(expected) if expected in ToolParserManager else None
    if picked is not None:
        assert picked is right, f"{template}: auto picked {picked.__name__}, the family uses {expected}"
    if template in PICKED:
        assert picked is right is not None


def test_the_table_agrees_with_every_familys_declared_templates():
    """A template a family declares it was verified against maps here to that family's dialect, or
    to the dialect a layout variant derives from (auto picks the base: both parse the same)."""
    from lmparse.families import FAMILIES

    for family in FAMILIES:
        for template in family.verified_templates:
            key = template if "/" in template else f"templates/{template}"
            assert key in EXPECTED, f"{family.name} declares {template}, which EXPECTED lacks"
            dialect = EXPECTED[key]
            if family.tool is None:
                assert dialect is None, f"{family.name} has no tool dialect, EXPECTED says {dialect}"
            else:
                assert issubclass(family.tool.cls, ToolParserManager.get(dialect)), f"{template}: {dialect} vs {family.name}"


def test_ambiguity_is_refused_with_the_candidates():
    mixed = "{{ '<minimax:tool_call>' }}<invoke name=x><parameter name=y></parameter></invoke></minimax:tool_call>" \
            "[TOOL_CALLS]"
    with pytest.raises(ValueError, match=r"several dialects \(minimax-m2, mistral\)"):
        create_parser(tool_parser="auto", chat_template=mixed)


def test_no_match_or_no_template_is_refused():
    with pytest.raises(ValueError, match="matches no registered dialect"):
        create_parser(tool_parser="auto", chat_template="{{ messages[0].content }}")
    with pytest.raises(ValueError, match="needs the model's chat template"):
        create_parser(tool_parser="auto")


def test_the_vocabulary_supplies_markers_a_template_builds_from_pieces():
    template = "{% set tag = '<|tool_calls_section' %}{{ tag ~ '_begin|>' }}"
    with pytest.raises(ValueError):
        select_tool_parser(template)

    class Tokenizer:
        def get_vocab(self):
            return {"<|tool_calls_section_begin|>": 1, "<|tool_calls_section_end|>": 2}

    parser = create_parser(tool_parser="auto", chat_template=template, tokenizer=Tokenizer())
    assert type(parser.tool_parser) is ToolParserManager.get("kimi-k2")
