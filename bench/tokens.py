"""Real-tokenizer chunkings: where a serving engine's decoded pieces end in a reply.

One token per chunk is what an engine streams at stream interval 1; groups of 2-16
tokens (sizes drawn from a fixed seed) are what MTP, speculative decoding and larger
stream intervals hand over.  The tokenizers are the test data's Hugging Face
``tokenizer.json`` files (``$LMPARSE_TESTDATA``, else the fetch script's cache), read
with the ``tokenizers`` package (the dev extra); special tokens written in the text
encode as single tokens, so markers are never split, as in a real stream.
"""

from __future__ import annotations

import functools
import gzip
import random
from typing import Any

__all__ = ["TOKEN_CHUNKINGS", "tokenizer_for", "token_cuts", "group_cuts"]

GROUP_SEED = 20261201
GROUP_SIZES = (2, 16)
TOKEN_CHUNKINGS = ("tokens-1", "tokens-2-16")
# Our dialect label -> the test-data tokenizer of its model family.  A family with no
# tokenizer in the test data (Kimi-K2, InternLM's SentencePiece model) uses Qwen3's:
# the cut positions then are a plausible BPE's, and the markers are still whole.
_FAMILY_TOKENIZER = {
    "glm47": "glm-4.7-flash",
    "glm45": "glm-4.5",
    "deepseek-v32": "deepseek-v3.2",
    "deepseek-v4": "deepseek-v4",
    "llama3": "llama-3.2",
}
FALLBACK = "qwen3"


def tokenizer_for(label: str) -> str:
    """The tokenizer a dialect's token streams are cut with."""
    return _FAMILY_TOKENIZER.get(label, FALLBACK)


@functools.cache
def _load(name: str) -> Any:
    from tokenizers import Tokenizer  # the dev extra; only the real-token rows need it

    from lmparse.serve.tokenizer import testdata_dir  # (here: the peer runners import this module without lmparse)

    root = testdata_dir()
    if root is None:
        raise FileNotFoundError("no tokenizer test data: set LMPARSE_TESTDATA or run `make testdata`")
    path = root / name / "tokenizer.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return Tokenizer.from_str(handle.read())


def token_cuts(text: str, tokenizer: str) -> list[int]:
    """Where each token of ``text`` ends (strictly increasing, the text's end left out).
    A character split over several byte-level tokens ends at its last one."""
    offsets = _load(tokenizer).encode(text, add_special_tokens=False).offsets
    cuts: list[int] = []
    last = 0
    for _start, end in offsets:
        if end > last:
            cuts.append(end)
            last = end
    if cuts and cuts[-1] >= len(text):
        cuts.pop()
    return cuts


def group_cuts(cuts: list[int], low: int = GROUP_SIZES[0], high: int = GROUP_SIZES[1],
               seed: int = GROUP_SEED) -> list[int]:
    """Every cut that ends a group of ``low``..``high`` tokens (sizes from a fixed seed)."""
    rng = random.Random(seed)
    grouped = []
    i = rng.randint(low, high) - 1
    while i < len(cuts):
        grouped.append(cuts[i])
        i += rng.randint(low, high)
    return grouped


def cut(text: str, cuts: list[int]) -> list[str]:
    """The chunks of ``text`` that end at ``cuts``."""
    starts = [0, *cuts]
    return [text[a:b] for a, b in zip(starts, [*cuts, len(text)], strict=False) if b > a] or [text]
