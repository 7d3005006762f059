"""Measurements of lmparse itself: the qwen parser stack, every tool dialect, the JSON
scanner, and the pass-through floor.

Each ``measure_*`` function checks the output once (raising on any difference),
then times fresh instances with ``timing.best_of``.  Chunks are split before the
clock starts; the last chunk is fed with ``final=True``; deltas are discarded,
as a server would after sending them.
"""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable, Iterator

from lmparse import create_parser
from lmparse.messages import DeltaMessage
from lmparse.tools.json_scanner import JsonValueScanner

from .fixtures import TOOLS, CallReply, Reply, chunk_label, split_chunks
from .timing import Settings, best_of, record
from .verify import ReconstructionError, check_call, check_reconstruction

__all__ = [
    "make_qwen_parser",
    "PassThrough",
    "measure_stack",
    "measure_call",
    "measure_scanner",
    "measure_passthrough",
]

_REQUEST = {"tools": TOOLS}


def make_qwen_parser() -> Any:
    return create_parser(tool_parser="qwen", reasoning_parser="qwen3", request=_REQUEST)


class PassThrough:
    """The floor of Python-level per-chunk work: one ``DeltaMessage(content=chunk)`` per chunk,
    behind the same ``stream_chunk`` call shape as a real parser."""

    __slots__ = ()

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> list:
        return [(DeltaMessage(content=text), False)]


def _split(text: str, chunk: int | None) -> tuple[list[str], str, int]:
    chunks = split_chunks(text, chunk)
    return chunks[:-1], chunks[-1], len(chunks)


def _feed_all(parser: Any, body: list[str], last: str) -> None:
    stream = parser.stream_chunk
    for piece in body:
        stream(piece)
    stream(last, final=True)


def _stream_deltas(parser: Any, body: list[str], last: str) -> Iterator:
    """Every delta of the stream, one at a time: checked by folding, never all kept alive."""
    stream = parser.stream_chunk
    for piece in body:
        yield from stream(piece)
    yield from stream(last, final=True)


def _checked_estimate(check: Callable[[], None]) -> float:
    start = time.perf_counter()
    check()
    return time.perf_counter() - start


def measure_stack(reply: Reply, size: int, chunk: int | None, settings: Settings, section: str = "stack") -> dict:
    body, last, count = _split(reply.text, chunk)
    where = f"lmparse qwen stack, {reply.kind} {size} chars, chunk {chunk or 'whole'}"
    estimate = _checked_estimate(
        lambda: check_reconstruction(_stream_deltas(make_qwen_parser(), body, last), reply, where)
    )
    timing = best_of(make_qwen_parser, lambda p: _feed_all(p, body, last), settings, estimate)
    return record(section, "lmparse", reply.kind, size, chunk, len(reply.text), count, timing)


def measure_call(
    make_parser: Callable[[dict], Any], reply: CallReply, chunk: int | None, settings: Settings, section: str
) -> dict:
    """One dialect on one call reply; ``make_parser(request)`` builds a fresh parser."""
    body, last, count = _split(reply.text, chunk)
    request = {"tools": reply.tools}
    where = f"lmparse {reply.dialect}, {reply.kind} {reply.size}, chunk {chunk_label(chunk)}"
    estimate = _checked_estimate(lambda: check_call(_stream_deltas(make_parser(request), body, last), reply, where))
    timing = best_of(lambda: make_parser(request), lambda p: _feed_all(p, body, last), settings, estimate)
    row = record(section, "lmparse", reply.kind, reply.size, chunk, len(reply.text), count, timing)
    row["dialect"] = reply.dialect
    return row


def measure_passthrough(reply: Reply, size: int, chunk: int | None, settings: Settings) -> dict:
    body, last, count = _split(reply.text, chunk)

    def check() -> None:
        folded = "".join(d.content for d, _ in _stream_deltas(PassThrough(), body, last))
        if folded != reply.text:
            raise ReconstructionError(f"pass-through {reply.kind} chunk {chunk}: content differs from input")

    estimate = _checked_estimate(check)
    timing = best_of(PassThrough, lambda p: _feed_all(p, body, last), settings, estimate)
    return record("passthrough", "pass-through", reply.kind, size, chunk, len(reply.text), count, timing)


def _scan_all(scanner: JsonValueScanner, body: list[str], last: str) -> int:
    scan = scanner.scan
    total = 0
    for piece in body:
        total += scan(piece, 0, False)
    return total + scan(last, 0, True)


def measure_scanner(reply: Reply, size: int, chunk: int | None, settings: Settings) -> dict:
    value = reply.argument_value
    body, last, count = _split(value, chunk)

    def check() -> None:
        scanner = JsonValueScanner()
        total = _scan_all(scanner, body, last)
        if total != len(value) or not scanner.done or scanner.broken:
            raise ReconstructionError(
                f"JsonValueScanner {reply.kind} {size} chars, chunk {chunk or 'whole'}: consumed {total} of "
                f"{len(value)} characters, done={scanner.done}, broken={scanner.broken}"
            )

    estimate = _checked_estimate(check)
    timing = best_of(JsonValueScanner, lambda s: _scan_all(s, body, last), settings, estimate)
    return record("scanner", "lmparse", reply.kind, size, chunk, len(value), count, timing)
