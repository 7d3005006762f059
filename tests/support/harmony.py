"""Harmony test helpers: the offline o200k_harmony encoding and real token streams.

The encoding comes from the test data (``<testdata>/gpt-oss/o200k_base.tiktoken``, see
TOKENIZERS.md): ``TIKTOKEN_ENCODINGS_BASE`` points openai-harmony at it, so nothing is
downloaded. ``token_stream`` replays a reply the way an engine streams it: the token ids,
and for each token the text it completes (incremental decoding, as
``tests.support.tokenizers.token_chunks`` does for the other families).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Iterator, Sequence

import pytest

from lmparse.messages import DeltaMessage

from .tokenizers import RealTokenizer, testdata_dir, token_chunks

Deltas = list[tuple[DeltaMessage, bool]]
VOCAB_FILE = "o200k_base.tiktoken"


def harmony_vocab_dir() -> Path:
    """The directory holding ``o200k_base.tiktoken``; skips the test when it is absent."""
    root = testdata_dir()
    if root is None:
        pytest.skip("gpt-oss: no tokenizer test data (run `make testdata` or set LMPARSE_TESTDATA)")
    directory = root / "gpt-oss"
    if not (directory / VOCAB_FILE).is_file():
        pytest.skip(f"gpt-oss: {directory / VOCAB_FILE} is missing (run `make testdata`)")
    return directory


def as_tokenizer(encoding: Any) -> RealTokenizer:
    return RealTokenizer(
        "o200k_harmony",
        lambda text: encoding.encode(text, allowed_special="all"),
        lambda ids: encoding.decode(list(ids)),
    )


def token_stream(encoding: Any, text: str) -> tuple[list[int], list[str]]:
    """The ids of ``text`` and, per id, the decoded text that id completes."""
    tok = as_tokenizer(encoding)
    return tok.encode(text), token_chunks(tok, text)


def grouped(ids: Sequence[int], texts: Sequence[str], size: int) -> Iterator[tuple[list[int], str]]:
    """Engine chunks of ``size`` tokens each: their ids and their text."""
    for i in range(0, len(ids), size):
        yield list(ids[i : i + size]), "".join(texts[i : i + size])


def feed_tokens(parser: Any, ids: Sequence[int], texts: Sequence[str], size: int) -> Deltas:
    out: Deltas = []
    chunks = list(grouped(ids, texts, size))
    if not chunks:
        return parser.stream_chunk("", token_ids=[], final=True)
    for i, (chunk_ids, chunk_text) in enumerate(chunks):
        out.extend(parser.stream_chunk(chunk_text, token_ids=chunk_ids, final=i == len(chunks) - 1))
    return out
