"""The shared stream validator: every parser test goes through here.

``check_parse`` runs one response through a fresh parser for every chunking
(whole, one character per chunk, seeded random splits, and any extra chunkings
such as real-token boundaries), checks the stream invariants on each run, and
checks that the folded stream equals both the complete parse and the expected
result.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable, Iterable, Sequence

from lmparse.messages import DeltaMessage, ParsedMessage
from lmparse.response.base import fold_deltas

from .conservation import check_conservation

Deltas = list[tuple[DeltaMessage, bool]]
Result = tuple[Any, ...]  # (content, reasoning, [(name, arguments)])


class Parser(Protocol):
    """The public surface of a parser that these checks use."""

    @property
    def reasoning_tokens(self) -> int | None: ...

    @property
    def held_chars(self) -> int: ...

    @property
    def dropped(self) -> list[Any]: ...

    def stream_chunk(self, text: str, token_ids: Any = None, final: bool = False) -> Deltas: ...

    def parse_complete(self, text: str) -> ParsedMessage: ...


@dataclass
class Expected:
    content: str | None = None
    reasoning: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments source)

    def as_tuple(self) -> Result:
        return (self.content, self.reasoning, [tuple(c) for c in self.calls])


def result_of(message: ParsedMessage) -> Result:
    """(content, reasoning, [(name, arguments)]) of a complete message."""
    return (message.content, message.reasoning_content, [(tc.function.name, tc.function.arguments) for tc in message.tool_calls])


def folded(deltas: Deltas) -> Result:
    return result_of(fold_deltas(deltas))


def decoded(result: Result) -> Result:
    """A result with each call's arguments decoded, for dialects that convert values."""
    content, reasoning, calls = result
    return content, reasoning, [(name, json.loads(arguments)) for name, arguments in calls]


def check_chunkings(
    make_parser: Callable[[], Parser],
    text: str,
    expected: Result,
    runs: Iterable[Sequence[str]],
    normalize: Callable[[Result], Result] = lambda result: result,
) -> None:
    """Each chunking of ``text`` through a fresh parser keeps the invariants and folds to
    ``expected`` (after ``normalize``)."""
    for chunks in runs:
        deltas = feed(make_parser(), chunks)
        check_invariants(deltas, text)
        got = normalize(folded(deltas))
        assert got == expected, f"{list(chunks)!r}:\n got {got}\nwant {expected}"


def feed(parser: Parser, chunks: Sequence[str], token_ids: Sequence[Sequence[int]] | None = None) -> Deltas:
    out: Deltas = []
    if not chunks:
        return parser.stream_chunk("", final=True)
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        ids = token_ids[i] if token_ids is not None else None
        out.extend(parser.stream_chunk(chunk, token_ids=ids, final=i == last))
    return out


def check_invariants(deltas: Deltas, text: str | None = None, dropped: Sequence[str] = ()) -> None:
    """Identity first, dense ascending indices, one channel per delta, nothing empty; and,
    given the input ``text``, conservation (``check_conservation``; ``dropped``: the markup
    the parser's drop records keep)."""
    seen: list[int] = []
    for delta, has_tools in deltas:
        channels = [delta.content is not None, delta.reasoning_content is not None, bool(delta.tool_calls)]
        assert sum(channels) == 1, f"a delta must carry exactly one channel: {delta!r}"
        assert has_tools == bool(delta.tool_calls), f"tool flag disagrees with the delta: {delta!r}"
        if delta.content is not None:
            assert delta.content, "empty content delta"
        if delta.reasoning_content is not None:
            assert delta.reasoning_content, "empty reasoning delta"
        for tc in delta.tool_calls or ():
            if not seen or tc.index != seen[-1]:
                assert tc.index == len(seen), f"indices must be dense and ascending: {seen} then {tc.index}"
                seen.append(tc.index)
                assert tc.id and tc.type == "function" and tc.function and tc.function.name, (
                    f"first delta of call {tc.index} must carry id, type and name: {tc!r}"
                )
            else:
                assert tc.id is None and tc.type is None and (tc.function is None or tc.function.name is None), (
                    f"identity repeated after the first delta: {tc!r}"
                )
                assert tc.function is not None and tc.function.arguments, f"empty tool delta: {tc!r}"
    ids = [tc.id for d, _ in deltas for tc in d.tool_calls or () if tc.id]
    assert len(ids) == len(set(ids)), "call ids must be unique"
    if text is not None:
        check_conservation(text, deltas, dropped)


def random_chunks(text: str, rng: random.Random, max_size: int = 12) -> list[str]:
    out = []
    i = 0
    while i < len(text):
        k = rng.randint(1, max_size)
        out.append(text[i : i + k])
        i += k
    return out


def chunkings(text: str, seeds: Iterable[int] = range(6)) -> dict[str, list[str]]:
    found = {"whole": [text], "chars": list(text)}
    for seed in seeds:
        found[f"random{seed}"] = random_chunks(text, random.Random(seed))
    return found


def check_parse(
    make_parser: Callable[[], Parser],
    text: str,
    expected: Expected | None = None,
    extra_chunkings: dict[str, list[str]] | None = None,
) -> Result:
    """Parse ``text`` every way; return the folded result (checked against ``expected``)."""
    reference = result_of(make_parser().parse_complete(text))
    if expected is not None:
        assert reference == expected.as_tuple(), f"complete parse of {text!r}:\n got {reference}\nwant {expected.as_tuple()}"
    runs = chunkings(text)
    runs.update(extra_chunkings or {})
    for name, chunks in runs.items():
        assert "".join(chunks) == text
        token_ids = getattr(chunks, "token_ids", None)  # real-token chunkings carry their ids
        parser = make_parser()
        deltas = feed(parser, chunks, token_ids)
        check_invariants(deltas, text)
        got = folded(deltas)
        assert got == reference, f"{name} chunking of {text!r} ({chunks!r}):\n got {got}\nwant {reference}"
        check_reasoning_tokens(parser.reasoning_tokens, token_ids)
    return reference


def check_reasoning_tokens(count: int | None, token_ids: Sequence[Sequence[int]] | None) -> None:
    """Counted only when ids came with the text, and never more than the tokens fed."""
    if token_ids is None:
        assert count is None, f"reasoning_tokens {count} without token ids"
        return
    assert count is not None and 0 <= count <= sum(len(ids) for ids in token_ids), f"reasoning_tokens {count}"


def args_equal(a: str, b: str) -> bool:
    return bool(json.loads(a) == json.loads(b))


def stream_in_steps(
    parser: Parser, text: str, value_start: int, probe: str, step: int = 1024
) -> tuple[Deltas, int | None, int]:
    """Feed ``text`` in ``step``-sized chunks; return ``(deltas, first, max_pending)`` where
    ``first`` is how far past ``value_start`` the input had got when an arguments fragment
    holding ``probe`` first came out (None if never), and ``max_pending`` is the largest
    the router's held suffix grew."""
    deltas: Deltas = []
    first, max_pending = None, 0
    for at in range(0, len(text), step):
        out = parser.stream_chunk(text[at : at + step], final=at + step >= len(text))
        deltas.extend(out)
        max_pending = max(max_pending, parser.held_chars)
        if first is None and any(
            probe in (tc.function.arguments or "") for d, _ in out for tc in d.tool_calls or () if tc.function
        ):
            first = at + step - value_start
    return deltas, first, max_pending


def arguments_after(parser: Parser, chunks: list[str]) -> list[str]:
    """The tool-call argument text a parser has emitted so far, after each chunk."""
    seen, out = "", []
    for chunk in chunks:
        for delta, _ in parser.stream_chunk(chunk):
            for tc in delta.tool_calls or ():
                seen += tc.function.arguments or ""
        out.append(seen)
    return out


def check_round_trip(make: Callable[[], Parser], text: str, want: Result, seed: int) -> None:
    """A rendered reply parses to ``want`` (decoded) whole, a character at a time and at random splits."""
    assert decoded(result_of(make().parse_complete(text))) == want
    check_chunkings(make, text, want, (list(text), random_chunks(text, random.Random(seed), 9)), decoded)
