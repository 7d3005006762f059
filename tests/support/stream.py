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
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from lmparse.messages import DeltaMessage
from lmparse.response.base import fold_deltas

Deltas = list[tuple[DeltaMessage, bool]]


@dataclass
class Expected:
    content: str | None = None
    reasoning: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments source)

    def as_tuple(self):
        return (self.content, self.reasoning, [tuple(c) for c in self.calls])


def result_of(message: DeltaMessage) -> tuple:
    """(content, reasoning, [(name, arguments)]) of a complete message."""
    return (message.content, message.reasoning_content, [(tc.function.name, tc.function.arguments) for tc in message.tool_calls])


def folded(deltas: Deltas) -> tuple:
    return result_of(fold_deltas(deltas))


def decoded(result: tuple) -> tuple:
    """A result with each call's arguments decoded, for dialects that convert values."""
    content, reasoning, calls = result
    return content, reasoning, [(name, json.loads(arguments)) for name, arguments in calls]


def check_chunkings(
    make_parser: Callable[[], Any],
    text: str,
    expected: tuple,
    runs: Iterable[Sequence[str]],
    normalize: Callable[[tuple], tuple] = lambda result: result,
) -> None:
    """Each chunking of ``text`` through a fresh parser keeps the invariants and folds to
    ``expected`` (after ``normalize``)."""
    for chunks in runs:
        deltas = feed(make_parser(), chunks)
        check_invariants(deltas, text)
        got = normalize(folded(deltas))
        assert got == expected, f"{list(chunks)!r}:\n got {got}\nwant {expected}"


def feed(parser, chunks: Sequence[str], token_ids: Sequence[Sequence[int]] | None = None) -> Deltas:
    out: Deltas = []
    if not chunks:
        return parser.stream_chunk("", final=True)
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        ids = token_ids[i] if token_ids is not None else None
        out.extend(parser.stream_chunk(chunk, token_ids=ids, final=i == last))
    return out


def check_invariants(deltas: Deltas, text: str | None = None) -> None:
    """Identity first, dense ascending indices, one channel per delta, nothing empty; and,
    given the input ``text``, conservation (``check_conservation``)."""
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
        check_conservation(text, deltas)


# ---- conservation: every input character ends in exactly one place --------------------------

ESCAPED = frozenset("\\\"'\n\t")  # characters a wire may write as escapes
MARKUP = frozenset("<>[]{}()|｜`\"'\\=:,;")  # syntax runs hold one of these (so prose punctuation lost next to syntax goes unseen)


def _segments(deltas: Deltas) -> list[tuple[object, str]]:
    """The stream as runs: ("content" | "reasoning" | call index, text); a call's text is its
    name, a NUL, then its arguments."""
    runs: list[tuple[object, list[str]]] = []
    for delta, _ in deltas:
        for tc in delta.tool_calls or ():
            if not runs or runs[-1][0] != tc.index:
                runs.append((tc.index, [tc.function.name or "", "\0"]))
            runs[-1][1].append(tc.function.arguments or "")
        for key, piece in (("content", delta.content), ("reasoning", delta.reasoning_content)):
            if piece is not None:
                if not runs or runs[-1][0] != key:
                    runs.append((key, []))
                runs[-1][1].append(piece)
    return [(key, "".join(parts)) for key, parts in runs]


def _is_syntax(run: str) -> bool:
    return not run or run.isspace() or not MARKUP.isdisjoint(run)


def _is_block(run: str) -> bool:
    """What a text piece may skip inside itself: a separator, or a dropped block (which
    starts with its open marker's markup)."""
    return not run or run.isspace() or run[0] in MARKUP or run[0].isspace()


def _runs(text: str, piece: str, pos: int, first: bool, budget: list[int]) -> list[tuple[int, int]] | None:
    """``piece`` spelled by runs ``(at, size)`` of ``text`` in order from ``pos``, longest
    runs first, such that what lies between two runs is a separator or a whole dropped
    block: a piece that spans a filtered call is split where the call was.  None if
    there is no such spelling (or the search ran out of ``budget``)."""
    if not piece:
        return []
    for size in range(len(piece), 0, -1):
        at = text.find(piece[:size], pos)
        while at >= 0:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if first or (at > pos and _is_block(text[pos:at])):  # an empty gap: one longer run
                rest = _runs(text, piece[size:], at + size, False, budget)
                if rest is not None:
                    return [(at, size), *rest]
            at = text.find(piece[:size], at + 1)
    return None


def _take(text: str, piece: str, start: int, taken: list[int]) -> int:
    """Match ``piece`` in ``text`` from ``start`` (as runs with separators or dropped blocks
    between them, ending as early as possible, else as a subsequence); record the
    positions; return the end, or -1."""
    at = text.find(piece, start)
    # A piece split around a dropped block may end before the piece's first whole occurrence
    # (``assista<|return|>nt ... assistant``): the earliest-ending spelling wins.
    runs = (_runs(text[: at + len(piece) - 1], piece, start, True, [200]) or [(at, len(piece))]) if at >= 0 else None
    runs = runs or _runs(text, piece, start, True, [4000])
    if runs is None:  # no spelling with syntax gaps: any in-order one (the leftover check judges)
        runs, pos = [], start
        for ch in piece:
            at = text.find(ch, pos)
            if at < 0:
                return -1
            runs.append((at, 1))
            pos = at + 1
    for at, size in runs:
        taken.extend(range(at, at + size))
    return runs[-1][0] + runs[-1][1] if runs else start


def _leaves(value: object) -> Iterable[tuple[str, ...]]:
    """The spellings each key and leaf of a decoded arguments object may have had on the wire,
    in order. Numbers are not tracked (a converted value may be re-spelled: ``1.5e3`` -> 1500.0)."""
    if isinstance(value, list) and all(isinstance(p, tuple) for p in value) and value:
        for k, v in value:  # an object, decoded as pairs so duplicate keys keep their order
            yield (k,)
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, str):
        yield (value,)
    elif isinstance(value, bool):
        yield (json.dumps(value), repr(value))
    elif value is None:
        yield ("null", "None")


def _take_arguments(text: str, arguments: str, start: int, taken: list[int]) -> int:
    """Arguments forwarded as written are a substring (or, unwrapped or cut short, a
    subsequence) of the input: return where they end.  Converted ones (XML-like values,
    Python literals) are neither: return -1 and account every key, string value, boolean
    and null of the decoded object as found after the call began."""
    if arguments == "{}":
        return start  # nothing to account (and "{}" may stand for no arguments field at all)
    if arguments in text[start:]:
        return _take(text, arguments, start, taken)
    try:
        decoded = json.loads(arguments, object_pairs_hook=list)
    except ValueError:
        return _take(text, arguments.removesuffix("}"), start, taken)  # cut short; final may close it
    if json.dumps(arguments, ensure_ascii=False)[1:-1] in text[start:]:
        return _take(text, arguments, start, taken)  # double-encoded on the wire, unwrapped
    for spellings in _leaves(decoded):
        # A string with characters the wire escapes need only appear in order.
        found = [s for s in spellings if s in text[start:]
                 or (ESCAPED.intersection(s) and _take(text, s, start, []) >= 0)]
        assert found or not spellings[0].isprintable(), (
            f"argument leaf {spellings[0]!r} of {arguments!r} is not in the input after {start}")
    return -1


def _find_name(text: str, name: str, start: int) -> tuple[int, str]:
    """Where a call's name is written after ``start``, and how: a whole word if it can be
    (``f`` is not the ``f`` of ``<function=``), else anywhere; as is, or JSON-escaped."""
    forms = dict.fromkeys((name, json.dumps(name)[1:-1], json.dumps(name, ensure_ascii=False)[1:-1]))
    for pattern in (r"(?<!\w){}(?!\w)", "{}"):
        found = [(m.start(), written) for written in forms
                 if (m := re.compile(pattern.format(re.escape(written))).search(text, start))]
        if found:
            return min(found)
    return -1, name


def check_conservation(text: str, deltas: Deltas) -> None:
    """Every input character ends in exactly one of: content, reasoning, a call's name or
    arguments, or recognised syntax.  Content and reasoning are matched in stream order as
    subsequences of the input (one pointer for the whole stream, so nothing is duplicated,
    invented or reordered); each call's name and arguments are matched after where its call
    began; what is left over must be syntax: every unmatched run of the input holds a markup
    character or is whitespace (separators and formatting).  Where a call's values were
    converted (XML-like, Python literals), its keys and values are checked present and the
    leftover check is skipped."""
    taken: list[int] = []
    pos, converted = 0, False
    for key, piece in _segments(deltas):
        if isinstance(key, int):
            name, arguments = piece.split("\0", 1)
            name_at, name = _find_name(text, name, pos)
            assert name_at >= 0, f"call {key}'s name {name!r} is not in the input after {pos}"
            taken.extend(range(name_at, name_at + len(name)))
            after_name = name_at + len(name)  # arguments follow the name, unless written first
            end = _take_arguments(text, arguments, after_name if _take(text, arguments, after_name, []) >= 0 else pos, taken)
            converted = converted or end < 0
            pos = max(end, name_at + len(name))
        else:
            end = _take(text, piece, pos, taken)
            assert end >= 0, f"{key} {piece!r} is not in the input, in order, after {pos}"
            pos = end
    assert len(taken) == len(set(taken)), "an input character was emitted twice"

    if converted:
        return  # converted values leave their syntax unaccounted character by character
    used = set(taken)
    left, start = [], None
    for i in range(len(text) + 1):
        if i < len(text) and i not in used:
            start = i if start is None else start
        elif start is not None:
            left.append(text[start:i])
            start = None
    for run in left:
        assert _is_syntax(run), f"input {run!r} ended in no channel and is not syntax"


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
    make_parser: Callable[[], object],
    text: str,
    expected: Expected | None = None,
    extra_chunkings: dict[str, list[str]] | None = None,
) -> tuple:
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
        check_reasoning_tokens(parser.reasoning_tokens, token_ids, got[1])
    return reference


def check_reasoning_tokens(count: int | None, token_ids: Sequence[Sequence[int]] | None, reasoning: str | None) -> None:
    """Counted only when ids came with the text, and never more than the tokens fed."""
    if token_ids is None:
        assert count is None, f"reasoning_tokens {count} without token ids"
        return
    assert count is not None and 0 <= count <= sum(len(ids) for ids in token_ids), f"reasoning_tokens {count}"


def args_equal(a: str, b: str) -> bool:
    return json.loads(a) == json.loads(b)


def stream_in_steps(parser, text: str, value_start: int, probe: str, step: int = 1024):
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
