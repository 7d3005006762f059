"""Token-aligned prefixes of the XML-like dialects' markers, against their real tokenizers.

Declared tuples (``tool_close_prefixes``, ``arg_value_close_prefixes``, the reasoning
tags' prefixes) must equal what the tokenizers produce, by the method of
tests/test_token_prefixes.py.  The other markers' splits are facts the dialects'
docstrings state and the hooks rely on only through arbitrary-split holding; they are
checked here too, so a new vocabulary that changes them is noticed.

Seed-OSS has no public tokenizer: its tuples are not verified here (see its module).
"""

from __future__ import annotations

import pytest

from lmparse import ReasoningParserManager, ToolParserManager

from .support.tokenizers import load_tokenizer
from .support.prefixes import check_declared, declared_ok, observed_prefixes

QWEN = ("qwen3", "qwen2.5")
GLM = ("glm-4.5", "glm-4.7-flash")
MINIMAX = ("minimax-m2",)


def tool(name):
    return ToolParserManager.get(name)


# (what, marker, declared tuple, tokenizers the parser claims)
CLAIMS = [
    ("qwen3coder tool close", "</tool_call>", tool("qwen3coder").tool_close_prefixes, QWEN),
    ("qwen3coder value close", "</parameter>", tool("qwen3coder").arg_value_close_prefixes, QWEN),
    ("glm47 tool close", "</tool_call>", tool("glm47").tool_close_prefixes, GLM),
    ("glm47 value close", "</arg_value>", tool("glm47").arg_value_close_prefixes, GLM),
    ("glm45 value close", "</arg_value>", tool("glm45").arg_value_close_prefixes, GLM),
    ("minimax-m2 tool close", "</minimax:tool_call>", tool("minimax-m2").tool_close_prefixes, MINIMAX),
    ("minimax-m2 value close", "</parameter>", tool("minimax-m2").arg_value_close_prefixes, MINIMAX),
    ("minimax-m2 think close", "</think>", ReasoningParserManager.get("minimax-m2").end_tag_prefixes, MINIMAX),
    ("glm45 think close", "</think>", ReasoningParserManager.get("glm45").end_tag_prefixes, GLM),
    ("glm45 think open", "<think>", ReasoningParserManager.get("glm45").start_tag_prefixes, GLM),
]


@pytest.mark.parametrize("what,marker,declared,tokenizers", CLAIMS, ids=[c[0] for c in CLAIMS])
def test_declared_prefixes_match_real_tokenizers(what, marker, declared, tokenizers):
    check_declared(declared, marker, tokenizers)


# (tokenizer, marker, the proper prefixes at which a chunk can end, longest first)
FACTS = [
    *[(t, m, ()) for t in QWEN for m in ("<tool_call>", "</tool_call>")],
    *[(t, "<function=", ("<function", "<")) for t in QWEN],  # the '=' joins the name: '=get'
    *[(t, "</function>", ("</function", "</")) for t in QWEN],
    *[(t, "<parameter=", ("<parameter", "<")) for t in QWEN],
    *[(t, m, ()) for t in GLM for m in ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                                         "</arg_value>", "<think>", "</think>")],
    ("minimax-m2", "<minimax:tool_call>", ()),
    ("minimax-m2", '<invoke name="', ("<invoke name", "<invoke", "<")),  # '="' is one token
    ("minimax-m2", "</invoke>", ("</invoke", "</")),
    ("minimax-m2", '<parameter name="', ("<parameter name", "<parameter", "<")),
]


@pytest.mark.parametrize("tokenizer,marker,prefixes", FACTS, ids=[f"{t}-{m}" for t, m, _ in FACTS])
def test_marker_splits(tokenizer, marker, prefixes):
    declared_ok(prefixes, observed_prefixes(tokenizer, marker))
    if not prefixes:
        assert len(load_tokenizer(tokenizer).encode(marker)) == 1
