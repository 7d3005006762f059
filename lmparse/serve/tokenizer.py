"""Tokenizers: a model directory's own (``load_model_tokenizer``), a family's real one
from the test data for the simulated engine, else a pseudo-tokenizer that keeps the
family's markers atomic.

A tokenizer here does two things: count a prompt's tokens, and replay a reply the way
a serving engine streams it, one ``(text, token_id, token_text)`` step per generated
token.  Real tokenizers come from the tokenizer test data (``$LMPARSE_TESTDATA`` or
``~/.cache/lmparse/testdata/tokenizers``, see scripts/fetch_testdata.py) through the
``tokenizers`` package, and gpt-oss's from openai-harmony's o200k_harmony encoding.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import zlib
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["Tokenizer", "RealTokenizer", "PseudoTokenizer", "testdata_dir", "load_tokenizer", "load_model_tokenizer",
           "windows", "WINDOW"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_TESTDATA = Path.home() / ".cache" / "lmparse" / "testdata" / "tokenizers"
_REPLACEMENT = "\ufffd"  # a decoder's half a UTF-8 character

Step = tuple[str, int, str]  # (streamed text, token id, the token's own text)
T = TypeVar("T")

WINDOW = 4096  # characters tokenized at a time when a reply streams
_LOOKAHEAD = 64  # characters past a cut that must leave the tokens before it as they are
_TRIES = 3  # cuts tried per window before one is forced
# Where tokenizers start a new word: a space or newline before a letter, after other text.
_CUT = re.compile(r"(?<=\S) (?=[^\W\d_])|(?<=\n)(?=[^\W\d_])")


def windows(pieces: Iterable[str], encode: Callable[[str], list[T]]) -> Iterator[list[T]]:
    """``encode`` of the concatenated ``pieces``, one bounded window at a time.

    A window ends at a word start (``_CUT``) only if encoding ``_LOOKAHEAD`` more characters
    leaves its tokens unchanged: the pre-tokenizers of the BPE families never join text
    across such a cut, so the tokens are the ones one encoding of the whole text gives
    (tests/test_serve_memory.py checks it on every tokenizer in the test data).  Text with
    no such cut in a window (a megabyte of one word) is cut at ``WINDOW``: the text stays
    exact, only the ids at that edge may differ from a whole encoding.  Work and memory are
    per window: never more than about ``2 * WINDOW`` characters are held."""
    text, pos, pending, size = "", 0, [], 0
    for piece in pieces:
        pending.append(piece)
        size += len(piece)
        if size < WINDOW + _LOOKAHEAD:
            continue
        text, pos = text[pos:] + "".join(pending), 0
        pending.clear()
        while len(text) - pos >= WINDOW + _LOOKAHEAD:
            pos, tokens = _cut(text, pos, encode)
            yield tokens
        size = len(text) - pos
    rest = text[pos:] + "".join(pending)
    if rest:
        yield encode(rest)


def _cut(text: str, pos: int, encode: Callable[[str], list[T]]) -> tuple[int, list[T]]:
    """The end of the window starting at ``pos`` and its tokens."""
    ends = [m.start() for m in _CUT.finditer(text, pos + WINDOW // 2, pos + WINDOW)]
    for end in reversed(ends[-_TRIES:]):
        # One encoding of the window and its lookahead: the cut holds when it ends with the
        # lookahead's own tokens, and the tokens before them are then the window's.
        extended, tail = encode(text[pos:end + _LOOKAHEAD]), encode(text[end:end + _LOOKAHEAD])
        if tail and extended[-len(tail):] == tail:
            return end, extended[:-len(tail)]
    return pos + WINDOW, encode(text[pos:pos + WINDOW])


def testdata_dir() -> Path | None:
    """``$LMPARSE_TESTDATA`` if set, else the fetch script's cache if it exists."""
    configured = os.environ.get("LMPARSE_TESTDATA")
    if configured:
        return Path(configured)
    return DEFAULT_TESTDATA if DEFAULT_TESTDATA.is_dir() else None


class Tokenizer:
    name: str = "?"
    real: bool = False  # ids are the model's own (else pseudo ids: only their count means anything)

    def count(self, text: str) -> int:
        raise NotImplementedError

    def stream(self, pieces: Iterable[str]) -> Iterator[Step]:
        """The steps of the text ``pieces`` make, tokenized a window at a time as they come."""
        raise NotImplementedError

    def steps(self, text: str) -> list[Step]:
        return list(self.stream((text,)))

    def decode_one(self, token_id: int) -> str | None:
        """A token id's own text (None: these are not the model's ids, or not one of them)."""
        return None


class RealTokenizer(Tokenizer):
    """Any encode/decode pair; decoding streams incrementally like a serving engine."""

    real = True

    def __init__(self, name: str, encode: Callable[[str], list[int]], decode: Callable[[Sequence[int]], str],
                 count: Callable[[str], int] | None = None, byte_level: frozenset[int] | None = None) -> None:
        self.name = name
        self._encode = encode
        self._decode = decode
        self._count = count
        # For a byte-level decoder (text = the UTF-8 of the tokens' bytes joined), the ids
        # that are not plain byte tokens (added and special tokens): after settled text, any
        # other token that is whole characters by itself streams its own text, no decode.
        self._byte_level = byte_level
        # Each id's own text, decoded once: bounded by the vocabulary, and two of the three
        # decodes a streamed token needs are of one id alone.
        self._texts: dict[int, str] = {}

    def count(self, text: str) -> int:
        """How many tokens ``text`` is.  A long text (a prompt quoting a document) is counted a
        window at a time (``windows``), as a reply is streamed: one encoding of all of it would
        hold the tokenizer's whole working state at once (the tokenizers library's: about 180
        bytes a character, +93 MB for a 512 KB prompt, outside Python's own heap), where a
        window's is a few hundred kB whatever the length.  The count is the whole encoding's
        wherever a window ends at a word start, i.e. everywhere but in a run of ``WINDOW``
        characters without one."""
        if len(text) > WINDOW + _LOOKAHEAD:
            return sum(len(ids) for ids in windows((text,), self._encode))
        return self._count(text) if self._count is not None else len(self._encode(text))

    def decode_one(self, token_id: int) -> str | None:
        try:
            return self._decode([token_id])
        except Exception:  # an id outside the vocabulary
            return None

    def stream(self, pieces: Iterable[str]) -> Iterator[Step]:
        """Chunk k is the text that token k completes, over a bounded decode window
        (``recent``: the ids from the last emitted piece's start on; ``read`` of them are
        emitted), as engines detokenize; half a character waits (""), and a held tail is
        flushed with the last token."""
        decode, texts = self._decode, self._texts
        added = self._byte_level
        recent: list[int] = []
        read = 0
        emitted = ""
        last: Step | None = None
        for ids in windows(pieces, self._encode):
            for token_id in ids:
                own = texts.get(token_id)
                if own is None:
                    own = texts[token_id] = decode([token_id])
                if (added is not None and read == len(recent) <= 1 and own and _REPLACEMENT not in own
                        and token_id not in added and not (recent and recent[0] in added)):
                    # Byte-level, after settled text: decoding [previous, this] would give
                    # the previous text and then this token's own.
                    if last is not None:
                        yield last
                    last = (own, token_id, own)
                    recent = [token_id]
                    read, emitted = 1, own
                    continue
                recent.append(token_id)
                window = decode(recent)
                piece = ""
                if len(window) > len(emitted) and not window.endswith(_REPLACEMENT):
                    piece = window[len(emitted):]
                    del recent[:read]  # settled ids are never decoded again
                    read = len(recent)
                    emitted = own if read == 1 else decode(recent)
                if last is not None:
                    yield last
                last = (piece, token_id, own)
        if last is not None:
            if read < len(recent):
                last = (last[0] + decode(recent)[len(emitted):], last[1], last[2])
            yield last


# Marker shapes the pseudo-tokenizer keeps whole, on top of a family's declared markers:
# <|special|>, DeepSeek's full-width <｜...｜> and ｜DSML｜, XML-ish tags, Mistral's [CONTROL].
_GENERIC_MARKERS = (
    r"<\|[^|<>\s]{1,48}\|>",
    r"<｜[^｜<>]{1,48}｜>",
    r"｜DSML｜",
    r"</?[A-Za-z_][\w:.-]{0,40}>",
    r"<(?:function|parameter)=",
    r"\[/?[A-Z][A-Z_]{1,20}\]",
)
# Other text: a word start with its space, in pieces of at most four letters, digits
# in threes, runs of whitespace, any other single character.
_PLAIN_PIECE = r" ?[^\W\d_]{1,4}|[^\W\d_]{1,4}|\d{1,3}|\s+|."


class PseudoTokenizer(Tokenizer):
    """Deterministic stand-in: markers are one token each, other text short pieces;
    ids are stable hashes of the piece (markers get small ids of their own)."""

    real = False

    def __init__(self, name: str, markers: Iterable[str] = ()) -> None:
        self.name = name
        exact = sorted({m for m in markers if m}, key=len, reverse=True)
        self._marker_ids = {m: 100 + i for i, m in enumerate(exact)}
        alternatives = [re.escape(m) for m in exact] + list(_GENERIC_MARKERS) + [_PLAIN_PIECE]
        self._pattern = re.compile("|".join(alternatives), re.S)

    def _id(self, piece: str) -> int:
        known = self._marker_ids.get(piece)
        return known if known is not None else 1000 + zlib.crc32(piece.encode()) % 1_000_000

    def count(self, text: str) -> int:
        return sum(1 for _ in self._pattern.finditer(text))

    def _pieces(self, text: str) -> list[str]:
        return self._pattern.findall(text)

    def stream(self, pieces: Iterable[str]) -> Iterator[Step]:
        for window in windows(pieces, self._pieces):
            for piece in window:
                yield piece, self._id(piece), piece


_PIECE = 32 * 1024  # characters per encode call when a long text is cut (a few ms of work each)


def _cuts(text: str, boundary: re.Pattern[str] | None) -> list[str]:
    """``text`` cut into pieces of about ``_PIECE`` characters, each cut just before a match of
    ``boundary`` (a special token: tokenizers split those out before anything else, so the
    pieces' ids joined are exactly the ids of the whole)."""
    pieces, pos = [], 0
    while boundary is not None and len(text) - pos > _PIECE:
        found = boundary.search(text, pos + _PIECE)
        if found is None:
            break
        pieces.append(text[pos:found.start()])
        pos = found.start()
    pieces.append(text[pos:])
    return pieces


def _boundary(tokens: Iterable[str]) -> re.Pattern[str] | None:
    tokens = sorted(set(tokens), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, tokens))) if tokens else None


def _load_hf(path: Path) -> tuple[Callable, Callable, Callable, frozenset[int] | None]:
    """A ``tokenizer.json`` (gzipped when its name ends in ``.gz``, as the test data keeps them)."""
    from tokenizers import Tokenizer as HfTokenizer

    raw = path.read_bytes()
    tok = HfTokenizer.from_str((gzip.decompress(raw) if path.suffix == ".gz" else raw).decode())
    # Added tokens that take no neighbouring whitespace are split out first: cuts before them are exact.
    boundary = _boundary(t.content for t in tok.get_added_tokens_decoder().values()
                         if not (t.lstrip or t.rstrip or t.single_word) and t.content)

    def encodings(text: str) -> list[Any]:
        """encode_batch gives the same ids as encode but releases the GIL while it works (so a
        long prompt counted in the worker pool does not stall the event loop's thread), and
        encodes a long prompt's pieces in parallel."""
        return tok.encode_batch(_cuts(text, boundary), add_special_tokens=False)

    def encode(text: str) -> list[int]:
        parts = encodings(text)
        return parts[0].ids if len(parts) == 1 else [i for e in parts for i in e.ids]

    # A count is the encodings' length: no list of Python ints (9 MB for a 1 MB prompt).
    byte_level = frozenset(tok.get_added_tokens_decoder()) if type(tok.decoder).__name__ == "ByteLevel" else None
    return (encode, lambda ids: tok.decode(ids if isinstance(ids, list) else list(ids), skip_special_tokens=False),
            lambda text: sum(len(e) for e in encodings(text)), byte_level)


# A tokenizer directory holding this file is openai-harmony's o200k_harmony (gpt-oss), not a
# Hugging Face tokenizer.json.
_HARMONY_ENCODING = "o200k_base.tiktoken"


def _load_harmony(directory: Path | None) -> tuple[Callable, Callable]:
    # openai-harmony reads o200k_base.tiktoken from $TIKTOKEN_ENCODINGS_BASE; point it at
    # the test data's copy so nothing is downloaded.
    if "TIKTOKEN_ENCODINGS_BASE" not in os.environ:
        if directory is None or not (directory / _HARMONY_ENCODING).is_file():
            # Never let openai-harmony reach for its download URL: no data, no real tokens.
            raise FileNotFoundError(f"{_HARMONY_ENCODING} is not in the tokenizer test data")
        os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(directory)
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    boundary = _boundary(enc.special_tokens_set)

    def encode(text: str) -> list[int]:
        """openai-harmony holds the GIL while it encodes, so one call on a prompt of megabytes
        would stall the event loop's thread: a long text is encoded a piece at a time."""
        return [i for piece in _cuts(text, boundary) for i in enc.encode(piece, allowed_special="all")]

    return encode, lambda ids: enc.decode(list(ids))


def load_tokenizer(data_name: str | None, family: str, markers: Iterable[str] = ()) -> Tokenizer:
    """The family's real tokenizer if its data and library are present, else a pseudo one."""
    root = testdata_dir()
    try:
        if data_name and root is not None and (root / data_name / _HARMONY_ENCODING).is_file():
            return RealTokenizer(data_name, *_load_harmony(root / data_name))
        if data_name and root is not None:
            path = root / data_name / "tokenizer.json.gz"
            if path.is_file():
                return RealTokenizer(data_name, *_load_hf(path))
    except Exception as exc:  # a missing library or data: the pseudo-tokenizer still works
        logger.warning("family %s: real tokenizer %s unavailable (%s); using pseudo-tokens", family, data_name, exc)
    return PseudoTokenizer(f"pseudo:{family}", markers)


def load_model_tokenizer(model_dir: Path) -> RealTokenizer:
    """A Hugging Face model directory's ``tokenizer.json`` (or ``tokenizer.json.gz``, as
    ``lmparse check-tokenizer`` and the test data take it), through the ``tokenizers`` package."""
    found = [p for p in (model_dir / "tokenizer.json", model_dir / "tokenizer.json.gz") if p.is_file()]
    if not found:
        raise ValueError(f"--model {model_dir}: no tokenizer.json (or tokenizer.json.gz) in it "
                         "(a Hugging Face model directory has one)")
    path = found[0]
    return RealTokenizer(model_dir.name or str(model_dir), *_load_hf(path))
