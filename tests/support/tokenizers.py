"""Real tokenizers for tests: load one by its test-data name, cut text at its token boundaries.

The data comes from ``scripts/fetch_testdata.py`` (``make testdata``) or from the directory
named by ``$LMPARSE_TESTDATA``. Every tokenizer is wrapped in the same small surface:
``encode(text)`` adds no BOS/EOS and turns special or added tokens written in the text into
their single ids; ``decode(ids)`` keeps special tokens as text. ``token_chunks`` then replays
the text the way a serving engine streams it, one decoded piece per generated token.

``load_tokenizer`` calls ``pytest.skip`` (naming what is missing) when the data or the
library is absent, so call it inside a test, or catch ``pytest.skip.Exception``.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import os
import re
from pathlib import Path
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

DEFAULT_TESTDATA = Path.home() / ".cache" / "lmparse" / "testdata" / "tokenizers"

# name -> data file; HF tokenizer.json files are stored gzipped.
HF_TOKENIZERS = {
    name: f"{name}/tokenizer.json.gz"
    for name in ("qwen2.5", "qwen3", "glm-4.5", "glm-4.7-flash", "deepseek-r1", "deepseek-v3.1",
                 "deepseek-v3.2", "deepseek-v4", "minimax-m2", "llama-3.2", "gemma-4")
}
SENTENCEPIECE_TOKENIZERS = {
    "internlm2": "internlm2/tokenizer.model",
    "mistral-v3": "mistral/mistral_instruct_tokenizer_240323.model.v3",
    "mistral-v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
}
TEKKEN_TOKENIZERS = {"mistral-tekken": "mistral/tekken_240911.json.gz"}
DATA_FILES = {**HF_TOKENIZERS, **SENTENCEPIECE_TOKENIZERS, **TEKKEN_TOKENIZERS}
LIBRARY = {
    **dict.fromkeys(HF_TOKENIZERS, "tokenizers"),
    **dict.fromkeys(SENTENCEPIECE_TOKENIZERS, "sentencepiece"),
    **dict.fromkeys(TEKKEN_TOKENIZERS, "tiktoken"),
}
KNOWN_TOKENIZERS = tuple(DATA_FILES)

# InternLM2's HF tokenizer adds these over the model's [UNUSED_TOKEN_141..146] pieces.
INTERNLM2_ADDED_TOKENS = {
    "<|plugin|>": 92538,
    "<|interpreter|>": 92539,
    "<|action_end|>": 92540,
    "<|action_start|>": 92541,
    "<|im_end|>": 92542,
    "<|im_start|>": 92543,
}
# Tekken files without a "special_tokens" list (240911 is one) use these for ids 0-19 and
# "<SPECIAL_{id}>" for the rest of the special range (as mistral-common does).
TEKKEN_LEGACY_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
REPLACEMENT_CHAR = "\ufffd"  # what a decoder shows for half a UTF-8 character


def testdata_dir() -> Path | None:
    """``$LMPARSE_TESTDATA`` if set, else the fetch script's cache if it exists, else None."""
    configured = os.environ.get("LMPARSE_TESTDATA")
    if configured:
        return Path(configured)
    return DEFAULT_TESTDATA if DEFAULT_TESTDATA.is_dir() else None


def _library_present(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def available_tokenizers() -> tuple[str, ...]:
    """The known tokenizers whose data file and library are both present."""
    root = testdata_dir()
    if root is None:
        return ()
    return tuple(name for name in KNOWN_TOKENIZERS
                 if (root / DATA_FILES[name]).is_file() and _library_present(LIBRARY[name]))


TOKENIZER_NAMES = available_tokenizers()


class RealTokenizer:
    """A uniform encode/decode pair over one real tokenizer."""

    __slots__ = ("name", "_encode", "_decode")

    def __init__(self, name: str, encode: Callable[[str], list[int]],
                 decode: Callable[[Sequence[int]], str]) -> None:
        self.name = name
        self._encode = encode
        self._decode = decode

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: no BOS/EOS; special tokens in the text become single ids."""
        return self._encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` with special tokens kept."""
        return self._decode(list(ids))

    def __repr__(self) -> str:
        return f"RealTokenizer({self.name!r})"


def load_tokenizer(name: str) -> RealTokenizer:
    """The named tokenizer (one of ``KNOWN_TOKENIZERS``); skips the test if it is missing."""
    if name not in DATA_FILES:
        raise ValueError(f"unknown tokenizer {name!r}; known: {', '.join(KNOWN_TOKENIZERS)}")
    root = testdata_dir()
    if root is None:
        pytest.skip(f"tokenizer {name}: no test data (run `make testdata` or set LMPARSE_TESTDATA)")
    path = root / DATA_FILES[name]
    if not path.is_file():
        pytest.skip(f"tokenizer {name}: {path} is missing")
    if not _library_present(LIBRARY[name]):
        pytest.skip(f"tokenizer {name}: the {LIBRARY[name]!r} package is not installed")
    return _load(name, str(path))


@functools.cache
def _load(name: str, path: str) -> RealTokenizer:
    if name in HF_TOKENIZERS:
        return _load_hf(name, Path(path))
    if name in SENTENCEPIECE_TOKENIZERS:
        return _load_sentencepiece(name, Path(path))
    return _load_tekken(name, Path(path))


def _load_hf(name: str, path: Path) -> RealTokenizer:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode())
    return RealTokenizer(
        name,
        lambda text: tok.encode(text, add_special_tokens=False).ids,
        lambda ids: tok.decode(ids, skip_special_tokens=False),
    )


def _with_specials(name: str, specials: dict[str, int], encode_plain: Callable[[str], list[int]],
                   decode_plain: Callable[[list[int]], str]) -> RealTokenizer:
    """Wrap a tokenizer that cannot see special tokens in text: split the text on their
    literal strings and insert their ids; decode the runs between them separately."""
    by_id = {token_id: text for text, token_id in specials.items()}
    # Longest first, so a marker that is a prefix of another never wins.
    alternatives = sorted(specials, key=len, reverse=True)
    splitter = re.compile("(" + "|".join(map(re.escape, alternatives)) + ")")

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        for index, part in enumerate(splitter.split(text)):
            if index % 2:
                ids.append(specials[part])
            elif part:
                ids.extend(encode_plain(part))
        return ids

    def decode(ids: list[int]) -> str:
        pieces, run = [], []
        for token_id in ids:
            if token_id in by_id:
                if run:
                    pieces.append(decode_plain(run))
                    run = []
                pieces.append(by_id[token_id])
            else:
                run.append(token_id)
        if run:
            pieces.append(decode_plain(run))
        return "".join(pieces)

    return RealTokenizer(name, encode, decode)


def _load_sentencepiece(name: str, path: Path) -> RealTokenizer:
    import sentencepiece

    model = sentencepiece.SentencePieceProcessor(model_file=str(path))
    # Control pieces (<s>, </s>, Mistral's [INST], [TOOL_CALLS], ...) never come out of
    # encode() and vanish in decode(): they are inserted and kept by id instead.
    specials = {model.id_to_piece(i): i for i in range(model.get_piece_size()) if model.is_control(i)}
    if name == "internlm2":
        specials.update(INTERNLM2_ADDED_TOKENS)
    return _with_specials(name, specials, model.encode, model.decode)


def _load_tekken(name: str, path: Path) -> RealTokenizer:
    import tiktoken

    data = json.loads(gzip.decompress(path.read_bytes()))
    config = data["config"]
    special_count = config["default_num_special_tokens"]
    inner_size = config["default_vocab_size"] - special_count
    named = [t["token_str"] for t in data.get("special_tokens") or ()] or list(TEKKEN_LEGACY_SPECIALS)
    named += [f"<SPECIAL_{i}>" for i in range(len(named), special_count)]
    ranks = {base64.b64decode(t["token_bytes"]): t["rank"]
             for t in data["vocab"] if t["rank"] < inner_size}
    bpe = tiktoken.Encoding(name=path.stem, pat_str=config["pattern"], mergeable_ranks=ranks,
                            special_tokens={})
    # Ordinary tokens sit after the special range: id = rank + special_count.
    return _with_specials(
        name,
        {text: token_id for token_id, text in enumerate(named)},
        lambda text: [rank + special_count for rank in bpe.encode_ordinary(text)],
        lambda ids: bpe.decode_bytes([i - special_count for i in ids]).decode("utf-8", "replace"),
    )


def token_chunks(tok: RealTokenizer, text: str) -> list[str]:
    """The stream a server sends for ``text``: chunk k is the text completed by token k.

    Decodes incrementally over a bounded window, as serving engines do: ``prefix_offset``
    marks where the window starts (one emission back, so context-sensitive decoders such as
    SentencePiece's leading-space rule see the same context twice) and ``read_offset`` how
    far text has been emitted. A window ending in U+FFFD holds half a UTF-8 character: its
    chunk is "" until a later token completes it. One chunk per token, so some may be "".
    """
    ids = tok.encode(text)
    chunks: list[str] = []
    prefix_offset = read_offset = 0
    emitted = ""  # decode(ids[prefix_offset:read_offset])
    for end in range(1, len(ids) + 1):
        window = tok.decode(ids[prefix_offset:end])
        if len(window) > len(emitted) and not window.endswith(REPLACEMENT_CHAR):
            chunks.append(window[len(emitted):])
            prefix_offset, read_offset = read_offset, end
            emitted = tok.decode(ids[prefix_offset:read_offset])
        else:
            chunks.append("")
    if read_offset < len(ids):  # a held tail (e.g. a literal U+FFFD at the end) is flushed
        chunks[-1] += tok.decode(ids[prefix_offset:])[len(emitted):]
    assert "".join(chunks) == tok.decode(ids), f"{tok.name}: incremental decode drifted"
    return chunks


def roundtrips(tok: RealTokenizer, text: str) -> bool:
    """Whether ``decode(encode(text)) == text`` (normalizers and stripping can break it)."""
    return tok.decode(tok.encode(text)) == text


class TokenChunks(list[str]):
    """A real-token chunking: chunk k is the text token k completed, ``token_ids[k]`` its id."""

    def __init__(self, chunks: list[str], token_ids: list[list[int]]) -> None:
        super().__init__(chunks)
        self.token_ids = token_ids


def real_token_chunkings(text: str, tokenizer_names: Iterable[str]) -> dict[str, list[str]]:
    """Extra chunkings for the stream validator: the text cut at every real token boundary
    of each named tokenizer that is available and reproduces the text exactly; each
    carries its token ids (a ``TokenChunks``)."""
    runs: dict[str, list[str]] = {}
    for name in tokenizer_names:
        try:
            tok = load_tokenizer(name)
        except pytest.skip.Exception:
            continue
        if roundtrips(tok, text):
            runs[f"tokens:{name}"] = TokenChunks(token_chunks(tok, text), [[i] for i in tok.encode(text)])
    return runs


def load_hf_tokenizer(name: str) -> Any:
    """The named Hugging Face tokenizer as a ``tokenizers.Tokenizer`` (for its added tokens);
    skips the test if it is missing."""
    if name not in HF_TOKENIZERS:
        raise ValueError(f"not a Hugging Face tokenizer: {name!r}; known: {', '.join(HF_TOKENIZERS)}")
    load_tokenizer(name)  # (skips when the data or the library is absent)
    root = testdata_dir()
    assert root is not None
    return _raw_hf(str(root / HF_TOKENIZERS[name]))


@functools.cache
def _raw_hf(path: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_str(gzip.decompress(Path(path).read_bytes()).decode())


def added_tokens_in(tok: Any, text: str) -> list[str]:
    """The added tokens ``text`` encodes to, in order."""
    added = {t.content for t in tok.get_added_tokens_decoder().values()}
    pieces = (tok.id_to_token(i) for i in tok.encode(text, add_special_tokens=False).ids)
    return [piece for piece in pieces if piece in added]


def decode_with_spaces(tok: Any, text: str) -> str:
    """``text`` encoded and decoded as an engine with ``spaces_between_special_tokens`` does
    (vLLM's slow-tokenizer detokenizer): each run between added tokens decoded alone, the
    runs and the added tokens joined with one space."""
    added = {t.content for t in tok.get_added_tokens_decoder().values()}
    parts: list[str] = []
    run: list[int] = []
    for token_id in tok.encode(text, add_special_tokens=False).ids:
        piece = tok.id_to_token(token_id)
        if piece in added:
            if run:
                parts.append(tok.decode(run, skip_special_tokens=False))
                run = []
            parts.append(piece)
        else:
            run.append(token_id)
    if run:
        parts.append(tok.decode(run, skip_special_tokens=False))
    return " ".join(parts)
