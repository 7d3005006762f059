"""Where real tokenizers split a marker: the check behind every declared prefix tuple.

The marker is encoded between many left and right contexts; wherever a real token
boundary falls strictly inside it, the marker's text up to that boundary is a prefix
that can end a decoded chunk.  A declared tuple must list exactly those, longest first.
"""

from __future__ import annotations

from .tokenizers import load_tokenizer, roundtrips, token_chunks

LEFT = ["", "a", "Hello", ".", " ", "\n", "\n\n", "}", "]", '"', "。", "的", "x ", ":", "1", "<", ">", "😀", "\t", "ok.\n"]
RIGHT = ["", "a", " ", "\n", "\n\n", "{", "[", '"', "<", ">", "x", "。", "1", "\t", "}", "/"]


def observed_prefixes(tokenizer_name: str, marker: str) -> set[str]:
    tok = load_tokenizer(tokenizer_name)
    found: set[str] = set()
    for left in LEFT:
        for right in RIGHT:
            text = left + marker + right
            if not roundtrips(tok, text):
                continue
            start, end = len(left), len(left) + len(marker)
            pos = 0
            for chunk in token_chunks(tok, text):
                pos += len(chunk)
                if start < pos < end:
                    found.add(marker[: pos - start])
    return found


def declared_ok(declared: tuple[str, ...], observed: set[str]) -> None:
    assert list(declared) == sorted(declared, key=len, reverse=True), "prefixes must be listed longest first"
    assert set(declared) == observed, f"declared {declared}, observed {sorted(observed, key=len, reverse=True)}"


def check_declared(declared: tuple[str, ...], marker: str, tokenizers) -> None:
    """``declared`` equals the union of the prefixes every named tokenizer produces."""
    observed: set[str] = set()
    for name in tokenizers:
        observed |= observed_prefixes(name, marker)
    declared_ok(declared, observed)
