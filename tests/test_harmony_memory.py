"""gpt-oss on token ids: a long message costs memory for what is in flight, not its length.

openai-harmony's StreamableParser keeps every token of its message, and reading the
finished message built it whole once more (a 1 MB answer peaked at 8.4 MB of Python
allocations).  The body moves to a fresh parser every ``BODY_WINDOW`` tokens, at a token
that is whole characters by itself; the text must come out the same, character for
character, multi-byte characters included."""

from __future__ import annotations

import hashlib
import tracemalloc
from typing import Any

import pytest

from lmparse import create_parser
from lmparse.response.harmony import load_encoding

from .support.harmony import harmony_vocab_dir

pytest.importorskip("openai_harmony")

WORDS = "the quick brown fox jumps over the lazy dog. 日本語のテキスト 😀 naïve café — "


@pytest.fixture(scope="module")
def encoding() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_ENCODINGS_BASE", str(harmony_vocab_dir()))
        yield load_encoding()


def streamed(encoding: Any, channel: str, size: int) -> tuple[int, str, str, int | None, int]:
    """Peak traced allocation while a message of ``size`` characters streams by 64-token
    chunks; the sha256 of what came out and of the body; the reasoning-token count and the
    body's own token count."""
    body = WORDS * (size // len(WORDS))
    ids = encoding.encode(f"<|channel|>{channel}<|message|>{body}<|end|>", allowed_special="all")
    chunks = [(encoding.decode(ids[i:i + 64]), ids[i:i + 64]) for i in range(0, len(ids), 64)]
    parser = create_parser(response_parser="gpt-oss", request={})
    digest = hashlib.sha256()
    tracemalloc.start()
    try:
        for i, (text, chunk) in enumerate(chunks):
            for delta, _ in parser.stream_chunk(text, token_ids=chunk, final=i == len(chunks) - 1):
                digest.update((delta.content or delta.reasoning_content or "").encode())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    body_tokens = len(encoding.encode(body, allowed_special="all"))
    return peak, digest.hexdigest(), hashlib.sha256(body.encode()).hexdigest(), parser.reasoning_tokens, body_tokens


@pytest.mark.parametrize("channel", ["final", "analysis"])
def test_a_message_eight_times_longer_needs_less_than_twice_the_memory(encoding: Any, channel: str) -> None:
    small_peak, small_out, small_body, small_reasoning, small_tokens = streamed(encoding, channel, 128 << 10)
    large_peak, large_out, large_body, large_reasoning, large_tokens = streamed(encoding, channel, 1 << 20)
    assert (small_out, large_out) == (small_body, large_body)  # the same text, every character
    assert large_peak < 2 * small_peak, (small_peak, large_peak)
    if channel == "analysis":  # every body token counted once across the parsers
        assert (small_reasoning, large_reasoning) == (small_tokens, large_tokens)
