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

def _declared() -> dict[str, str | None]:
    """Every template a family declares -> that family's dialect (its canonical name)."""
    from lmparse.families import FAMILIES

    return {(t if "/" in t else f"templates/{t}"): (f.tool.name if f.tool is not None else None)
            for f in FAMILIES for t in f.verified_templates}


# template (relative to the test data) -> the dialect its family uses (None: no tool dialect here):
# the families' own declarations, and the templates of the test data no family declares.
EXPECTED = {
    **_declared(),
    # GLM-4.7's inline syntax (S-2.1) and GLM-4.5's newline syntax (XS), which auto reads as glm47.
    "templates/poolside-Laguna-S-2.1.jinja": "glm47",
    "templates/poolside-Laguna-XS-2.1.jinja": "glm47",
    "templates/poolside-Laguna-XS.2.jinja": "glm47",
    # LFM2 templates that write no calls (no marker of them: refused).
    "templates/LFM2-8B-A1B.jinja": "lfm2",
    "templates/LFM2.5-Instruct.jinja": "lfm2",
}
# Templates whose markers are literal enough that auto must select them (parse-equivalent
# layout variants, glm45 / ling3 / step3p5, are their base dialect).
PICKED = {t for t, d in EXPECTED.items() if d in {"glm47", "glm45", "ling3", "kimi-k2", "minimax-m2", "mistral",
                                                    "qwen3coder", "step3p5", "deepseek-v3", "deepseek-v31",
                                                    "deepseek-v32", "deepseek-v4"}}
PICKED |= {"templates/Qwen-Qwen3-0.6B.jinja", "templates/ibm-granite-granite-4.0.jinja",
           "templates/meta-llama-Llama-3.1-8B-Instruct.jinja"}
PICKED |= {"templates/MiniMax-M3.jinja", "templates/tencent-Hy3.jinja"}  # tags built from pieces: template_markers
PICKED |= {t for t, d in EXPECTED.items() if d in {"cohere-command", "apertus", "gigachat3", "muse"}}
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
    if right is not None and picked is not None and issubclass(right, picked):
        right = picked  # a layout variant (glm45, ling3, step3p5) parses as the dialect it derives from
    if picked is not None:
        assert picked is right, f"{template}: auto picked {picked.__name__}, the family uses {expected}"
    if template in PICKED:
        assert picked is right is not None


def test_ambiguity_is_refused_with_the_candidates():
    mixed = "{{ '<minimax:tool_call>' }}<invoke name=x><parameter name=y></parameter></invoke></minimax:tool_call>" \
            "[TOOL_CALLS]"
    with pytest.raises(ValueError, match=r"several dialects \(minimax-m2, mistral, mistral-v13\)"):
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
