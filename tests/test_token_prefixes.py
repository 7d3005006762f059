"""Every declared token-aligned prefix tuple equals what the real tokenizers produce.

For each marker and each tokenizer its parser claims, the marker is encoded between
many left and right contexts; wherever a real token boundary falls strictly inside
the marker, the marker's text up to that boundary is a prefix that can end a decoded
chunk.  The declared tuple must list exactly those prefixes, longest first.
"""

from __future__ import annotations

import pytest

from lmparse import ReasoningParserManager, ToolParserManager

from .support.prefixes import check_declared, observed_prefixes
from .support.tokenizers import load_tokenizer

# (what, marker, declared tuple, tokenizers the parser claims)
CLAIMS = [
    ("qwen close", "</tool_call>", ToolParserManager.get("qwen").tool_close_prefixes, ("qwen2.5", "qwen3")),
    ("internlm close", "<|action_end|>", ToolParserManager.get("internlm").tool_close_prefixes, ("internlm2",)),
    ("default think close", "</think>", ReasoningParserManager.get("default").end_tag_prefixes,
     ("qwen3", "deepseek-r1", "glm-4.5", "glm-4.7-flash", "minimax-m2")),
    ("default think open", "<think>", ReasoningParserManager.get("default").start_tag_prefixes,
     ("qwen3", "deepseek-r1", "glm-4.5", "glm-4.7-flash", "minimax-m2")),
]


@pytest.mark.parametrize("what,marker,declared,tokenizers", CLAIMS, ids=[c[0] for c in CLAIMS])
def test_declared_prefixes_match_real_tokenizers(what, marker, declared, tokenizers):
    check_declared(declared, marker, tokenizers)


@pytest.mark.parametrize(
    "tokenizer,marker",
    [
        ("qwen2.5", "<tool_call>"),
        ("qwen3", "<tool_call>"),
        ("qwen3", "<think>"),
        ("llama-3.2", "<|python_tag|>"),
        ("internlm2", "<|action_start|>"),
        ("internlm2", "<|plugin|>"),
    ],
)
def test_single_token_markers(tokenizer, marker):
    assert observed_prefixes(tokenizer, marker) == set()
    assert len(load_tokenizer(tokenizer).encode(marker)) == 1


def test_qwq_think_tags_split_in_qwen25():
    """QwQ shares the Qwen2.5 vocabulary, where <think> is several tokens: the router must hold
    partial tags at any split, which the chunking tests exercise."""
    assert observed_prefixes("qwen2.5", "</think>")
