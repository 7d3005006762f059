"""The real-tokenizer helpers behave as the parser tests assume (skipped without test data)."""

from __future__ import annotations

import pytest

from .support.tokenizers import (
    INTERNLM2_ADDED_TOKENS,
    KNOWN_TOKENIZERS,
    load_tokenizer,
    roundtrips,
    token_chunks,
)

pytestmark = pytest.mark.tokenizer

MIXED_TEXT = (
    "<think>用户想知道天气 🌦️，先查一下。</think>\n\n"
    '好的！Let me check: {"city": "東京", "note": "晴れ ☀️ 👨‍👩‍👧"} — ok 🎉'
)


@pytest.mark.parametrize("tag", ["<tool_call>", "</tool_call>", "<think>", "</think>"])
def test_qwen3_tool_call_and_think_tags_are_single_tokens(tag):
    tok = load_tokenizer("qwen3")
    ids = tok.encode(f"x{tag}y")
    assert len(tok.encode(tag)) == 1
    assert tok.encode(tag)[0] in ids
    assert tok.decode(tok.encode(tag)) == tag


@pytest.mark.parametrize("name", KNOWN_TOKENIZERS)
def test_token_chunks_rebuild_mixed_cjk_and_emoji_text(name):
    tok = load_tokenizer(name)
    chunks = token_chunks(tok, MIXED_TEXT)
    assert len(chunks) == len(tok.encode(MIXED_TEXT))
    assert roundtrips(tok, MIXED_TEXT)
    assert "".join(chunks) == MIXED_TEXT
    assert not any("\ufffd" in chunk for chunk in chunks), "half a character leaked into a chunk"


def test_token_chunks_hold_back_half_characters_until_they_complete():
    tok = load_tokenizer("qwen3")
    # An uncommon emoji is several byte-level tokens; the first ones complete no character.
    chunks = token_chunks(tok, "🦩")
    assert len(chunks) > 1
    assert chunks[:-1] == [""] * (len(chunks) - 1)
    assert chunks[-1] == "🦩"


@pytest.mark.parametrize("marker,token_id", sorted(INTERNLM2_ADDED_TOKENS.items(), key=lambda kv: kv[1]))
def test_internlm2_added_tokens_are_single_ids(marker, token_id):
    tok = load_tokenizer("internlm2")
    assert tok.encode(marker) == [token_id]
    assert tok.decode([token_id]) == marker


def test_internlm2_action_call_keeps_its_markers_in_context():
    tok = load_tokenizer("internlm2")
    text = '好的<|action_start|><|plugin|>\n{"name": "get_weather"}<|action_end|>\n'
    ids = tok.encode(text)
    assert [i for i in ids if i >= 92538] == [92541, 92538, 92540]
    assert "".join(token_chunks(tok, text)) == text


@pytest.mark.parametrize("name,tool_calls_id", [("mistral-v3", 5), ("mistral-v7", 5), ("mistral-tekken", 9)])
def test_mistral_tool_calls_control_token_is_inserted_by_id(name, tool_calls_id):
    tok = load_tokenizer(name)
    text = '[TOOL_CALLS][{"name": "f", "arguments": {}}]'
    ids = tok.encode(text)
    assert ids[0] == tool_calls_id
    assert tool_calls_id not in ids[1:]
    assert tok.decode(ids) == text
