"""Token-aligned prefix tuples of the DSML and section/call dialects, against the real tokenizers.

DSML's tags are several tokens around the single ``｜DSML｜`` token in both V3.2 and V4
(which share the base vocabulary), so each dialect's tuples are checked against both.
The section markers of DeepSeek-V3 / V3.1 are single tokens (empty tuples).  Kimi-K2
has no public vocabulary: its markers are single tokens by their known ids
(163595-163599), so its tuple is empty by declaration.
"""

from __future__ import annotations

import pytest

from lmparse import ToolParserManager
from lmparse.tools.dialects import deepseek_v3, deepseek_v31, dsml, kimi_k2

from .support.tokenizers import load_tokenizer
from .support.prefixes import check_declared, observed_prefixes

DSML_TOKENIZERS = ("deepseek-v3.2", "deepseek-v4")
V32 = ToolParserManager.get("deepseek-v32")
V4 = ToolParserManager.get("deepseek-v4")
V41 = ToolParserManager.get("deepseek-v41")

# (what, marker, declared tuple, tokenizers the parser claims)
CLAIMS = [
    ("v3.2 block close", V32.tool_close_tag, V32.tool_close_prefixes, DSML_TOKENIZERS),
    ("v3.2 parameter close", V32.arg_value_close, V32.arg_value_close_prefixes, DSML_TOKENIZERS),
    ("v4 block close", V4.tool_close_tag, V4.tool_close_prefixes, DSML_TOKENIZERS),
    ("v4 parameter close", V4.arg_value_close, V4.arg_value_close_prefixes, DSML_TOKENIZERS),
    ("deepseek-v3 section end", deepseek_v3.CALLS_END, ToolParserManager.get("deepseek-v3").tool_close_prefixes,
     ("deepseek-r1",)),
    ("deepseek-v31 section end", deepseek_v31.CALLS_END, ToolParserManager.get("deepseek-v31").tool_close_prefixes,
     ("deepseek-v3.1",)),
    # V4.1's vocabulary is unpublished: measured with V4's, which it is assumed to share.
    ("v4.1 block close", V41.tool_close_tag, V41.tool_close_prefixes, ("deepseek-v4",)),
    ("v4.1 parameter close", V41.arg_value_close, V41.arg_value_close_prefixes, ("deepseek-v4",)),
]


@pytest.mark.parametrize("what,marker,declared,tokenizers", CLAIMS, ids=[c[0] for c in CLAIMS])
def test_declared_prefixes_match_real_tokenizers(what, marker, declared, tokenizers):
    check_declared(declared, marker, tokenizers)


SINGLE_TOKENS = [
    *((name, dsml.DSML) for name in DSML_TOKENIZERS),
    *(("deepseek-r1", m) for m in (deepseek_v3.CALLS_BEGIN, deepseek_v3.CALL_BEGIN, deepseek_v3.SEP,
                                   deepseek_v3.CALL_END, deepseek_v3.CALLS_END, deepseek_v3.FENCE_CLOSE)),
    *(("deepseek-v3.1", m) for m in (deepseek_v31.CALLS_BEGIN, deepseek_v31.CALL_BEGIN, deepseek_v31.SEP,
                                     deepseek_v31.CALL_END, deepseek_v31.CALLS_END)),
]


@pytest.mark.parametrize("tokenizer,marker", SINGLE_TOKENS, ids=[f"{t}-{m}" for t, m in SINGLE_TOKENS])
def test_single_token_markers(tokenizer, marker):
    assert len(load_tokenizer(tokenizer).encode(marker)) == 1
    assert observed_prefixes(tokenizer, marker) == set()


@pytest.mark.parametrize("tokenizer", DSML_TOKENIZERS)
def test_dsml_close_tag_splits_where_the_brief_says(tokenizer):
    tok = load_tokenizer(tokenizer)
    pieces = [tok.decode([i]) for i in tok.encode(V32.tool_close_tag)]
    assert pieces == ["</", dsml.DSML, "function", "_c", "alls", ">"]


def test_kimi_markers_are_declared_single_tokens():
    # No Kimi vocabulary is available: the markers are single tokens by id, so no proper
    # prefix can end a chunk at a token boundary.
    parser = ToolParserManager.get("kimi-k2")
    assert parser.tool_close_prefixes == ()
    assert parser.tool_close_tag == kimi_k2.SECTION_END and parser.tool_open_tags == (kimi_k2.SECTION_BEGIN,)
