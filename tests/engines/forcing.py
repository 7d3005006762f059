"""Making a random-weight model say a given reply: a GBNF grammar naming its token ids.

llama.cpp's grammars can match a token by id (``<[151657]>``), which pins the tokenization
too, so the reply arrives as the same token ids a real Qwen3 would send.  One exception: a
token that holds only part of a UTF-8 character (byte-level BPE splits ``晴`` into two
tokens) fails llama.cpp's token-level matching, so a run of such tokens is written as a
string literal instead; the model then picks some tokenization of those characters.  Once the
grammar is complete llama.cpp allows only end-of-generation tokens, and a logit bias on
``<|im_end|>`` picks that one among them.
"""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path
from typing import NamedTuple


@cache
def _byte_of_char() -> dict[str, int]:
    """The inverse of byte-level BPE's byte -> printable character table (GPT-2's)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


@cache
def qwen3_tokenizer(testdata: Path):  # -> tokenizers.Tokenizer
    from tokenizers import Tokenizer

    return Tokenizer.from_str(gzip.decompress((testdata / "qwen3" / "tokenizer.json.gz").read_bytes()).decode())


def token_bytes(tokenizer, token_id: int) -> bytes:
    """What token ``token_id`` stands for, as bytes (an added token is its own text)."""
    piece = tokenizer.id_to_token(token_id)
    if token_id in tokenizer.get_added_tokens_decoder():
        return piece.encode()
    table = _byte_of_char()
    return bytes(table[c] for c in piece)


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped.replace("\t", "\\t") + '"'


class Forced(NamedTuple):
    """A reply, its token ids and the grammar that makes llama-server produce it."""

    text: str
    ids: list[int]
    grammar: str


def force(tokenizer, text: str) -> Forced:
    """The grammar for ``text``: token ids where a token is whole characters, literals for
    the runs of tokens that split a character."""
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    items: list[str] = []
    pending = b""
    for token_id in ids:
        raw = token_bytes(tokenizer, token_id)
        if not pending:
            try:
                raw.decode()
            except UnicodeDecodeError:
                pass
            else:
                items.append(f"<[{token_id}]>")
                continue
        pending += raw
        try:
            items.append(_literal(pending.decode()))
            pending = b""
        except UnicodeDecodeError:
            continue
    assert not pending, f"{text!r} does not end on a character boundary"
    return Forced(text, ids, "root ::= " + " ".join(items) + "\n")
