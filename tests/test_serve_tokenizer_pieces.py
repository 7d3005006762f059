"""The serving tokenizer encodes a long text in pieces (so no single library call holds the
GIL for long) and gets exactly the ids one call on the whole text gives."""

from __future__ import annotations

import random

import pytest

from lmparse.serve import tokenizer as serve_tokenizer
from lmparse.serve.families import FAMILIES

from .support.tokenizers import HF_TOKENIZERS
from .support.tokenizers import load_tokenizer as reference_tokenizer

pytestmark = pytest.mark.tokenizer

SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|start|>", "<|end|>", "<|channel|>", "<|message|>",
            "<tool_call>", "</tool_call>", "<think>", "</think>", "<|user|>", "<|assistant|>", "<｜User｜>",
            "<｜Assistant｜>", "<|begin_of_text|>", "<|eot_id|>", "[INST]", "]~b]", "[e~["]


def _text(size: int, seed: int) -> str:
    """Chat-like text with special-token strings (real ones for some tokenizer, plain text
    for the others) between lines of words, spaces, CJK, emoji and numbers."""
    rng = random.Random(seed)
    parts, total = [], 0
    while total < size:
        part = (rng.choice(SPECIALS) + rng.choice(["user", "assistant", "", " ", "\n"])
                + f"{rng.choice(['', ' ', '  '])}message {total} 天気 🌦️ 'll {rng.random()}" + "\n" * rng.randint(0, 3))
        parts.append(part)
        total += len(part)
    return "".join(parts)


def _serving(data_name: str):
    tok = serve_tokenizer.load_tokenizer(data_name, data_name)
    if not tok.real:
        pytest.skip(f"{data_name}: no real tokenizer here")
    return tok


@pytest.mark.parametrize("name", sorted(HF_TOKENIZERS))
def test_hf_pieces_give_the_ids_of_the_whole(name):
    reference = reference_tokenizer(name)  # one tokenizers call on the whole text
    tok = _serving(name)
    text = _text(4 * serve_tokenizer._PIECE + 1000, hash(name) % 1000)
    assert len(serve_tokenizer._cuts(text, serve_tokenizer._boundary(SPECIALS))) > 3  # it really cuts
    assert tok.steps  # noqa: B018 (the serving tokenizer's own encode is what counts)
    assert tok.count(text) == len(reference.encode(text))
    assert tok._encode(text) == reference.encode(text)


def test_harmony_pieces_give_the_ids_of_the_whole():
    harmony = pytest.importorskip("openai_harmony")
    if not any(f.tokenizer == "gpt-oss" for f in FAMILIES.values()):
        pytest.skip("no gpt-oss family")
    tok = _serving("gpt-oss")
    encoding = harmony.load_harmony_encoding(harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
    text = _text(4 * serve_tokenizer._PIECE + 1000, 7)
    assert tok._encode(text) == encoding.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", sorted(HF_TOKENIZERS))
def test_byte_level_shortcut_streams_the_steps_of_decoding_every_token(name):
    # After settled text a byte-level tokenizer streams a whole-character token's own text
    # without a decode; the steps must be those of decoding [previous, this] each time.
    tok = _serving(name)
    general = serve_tokenizer.RealTokenizer(name, tok._encode, tok._decode, tok._count)  # no shortcut
    text = _text(20000, hash(name) % 997) + "é" * 3 + "🌦️" + "\ufffd end"
    assert tok.steps(text) == general.steps(text)
    if tok._byte_level is None:
        pytest.skip(f"{name}: not a byte-level decoder")
    assert tok._byte_level  # its added tokens take the decoding path
