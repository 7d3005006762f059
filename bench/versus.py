"""Same-run ratios against LMDeploy: ours and the peer timed in alternation, one configuration at a time.

For every case (the Qwen stack on a long JSON string, on many short strings and on long
``<think>`` reasoning; every tool dialect LMDeploy also has, on one long string argument)
and every chunking (N characters, the whole reply, ``parse_complete``, one real token per
chunk, groups of 2-16 tokens), both outputs are checked first; then ``pairs`` times: one
best-of timing of ours, one of the peer's (a long-lived runner in its own virtualenv,
``PeerProcess``).  The ratio is ours MB/s / the peer's MB/s, per pair, and the table shows
the median.  Alongside, without the peer: ours at a tenth of the size (t(size) / t(size/10),
linear is 10) and the slowest single ``stream_chunk`` call of one run at the full size.
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any, NamedTuple
from collections.abc import Callable, Sequence

from .fixtures import (
    QWEN_SPECIAL_TOKENS,
    CallReply,
    Reply,
    build_call,
    build_reasoning_reply,
    build_reply,
    split_chunks,
)
from .peers import PeerProcess
from .timing import Settings, best_of
from .tokens import TOKEN_CHUNKINGS, cut, group_cuts, token_cuts, tokenizer_for
from .verify import check_call, check_reconstruction

__all__ = ["CHAR_CHUNKINGS", "CHUNKINGS", "Case", "VersusMode", "stack_cases", "dialect_cases", "measure_cases"]

CHAR_CHUNKINGS = ("1", "4", "16", "256", "whole", "complete")
CHUNKINGS = (*CHAR_CHUNKINGS, *TOKEN_CHUNKINGS)
# One chunk per call at these: the per-call and per-token rows, measured on the smaller text.
PER_CHARACTER = ("1", "tokens-1")


class VersusMode(NamedTuple):
    size: int  # characters of the long value (argument, or reasoning)
    small: int  # the size linearity compares with (size / 10)
    per_character_size: int  # the size of the chunk-1 and one-token rows (they cost seconds per MB)
    pairs: int  # alternated (ours, peer) timings per configuration
    settings: Settings  # one side's timing within a pair


class Case(NamedTuple):
    label: str
    family: str  # "stack" (the peer runs its qwen3 + default parsers) or "call" (its parser for ``names``)
    build: Callable[[int], Reply | CallReply]  # size -> the reply
    make_parser: Callable[[], Any]
    names: tuple[str, ...]
    special_tokens: tuple[str, ...]
    tokenizer: str


def stack_cases() -> list[Case]:
    from .ours import make_qwen_parser

    def case(label: str, build: Callable[[int], Reply]) -> Case:
        return Case(label, "stack", build, make_qwen_parser, (), QWEN_SPECIAL_TOKENS, "qwen3")

    return [
        case("qwen JSON", lambda size: build_reply("long-string", size)),
        case("qwen short strings", lambda size: build_reply("short-strings", size)),
        case("<think> reasoning", build_reasoning_reply),
    ]


def dialect_cases(dialects: Sequence[Any], peer_names: dict[str, str] | None) -> list[Case]:
    """Every dialect group once per peer parser class it shares a name with, named as the peer
    names it (``peer_names``: name -> the peer's class); every group when ``peer_names`` is None."""
    from .dialects import call_reply

    cases = []
    for dialect in dialects:
        if peer_names is None:
            labels = [dialect.label]
        else:
            shared = [name for name in dialect.names if name in peer_names]
            labels = list({peer_names[name]: name for name in reversed(shared)}.values())[::-1]
        request = {"tools": build_call("string-arg", 1).tools}

        def build(size: int, dialect: Any = dialect) -> CallReply:
            return call_reply(dialect, build_call("string-arg", size))

        for label in labels:
            cases.append(Case(label, "call", build, lambda d=dialect, r=request: d.make_parser(r),
                              (label,), dialect.markers, tokenizer_for(label)))
    return cases


def _chunks(text: str, chunking: str, tokenizer: str) -> tuple[list[str], list[int] | None]:
    """The chunks of one chunking, and the cut positions when they are real tokens."""
    if chunking in TOKEN_CHUNKINGS:
        cuts = token_cuts(text, tokenizer)
        if chunking != "tokens-1":
            cuts = group_cuts(cuts)
        return cut(text, cuts), cuts
    if chunking in ("whole", "complete"):
        return [text], None
    return split_chunks(text, int(chunking)), None


def _deltas(parser: Any, chunks: list[str]) -> Any:
    stream = parser.stream_chunk
    for piece in chunks[:-1]:
        yield from stream(piece)
    yield from stream(chunks[-1], final=True)


def _check(case: Case, reply: Reply | CallReply, chunks: list[str], where: str) -> float:
    """Check ours on these chunks (raises ``ReconstructionError``); the seconds it took."""
    start = time.perf_counter()
    deltas = _deltas(case.make_parser(), chunks)
    if isinstance(reply, CallReply):
        check_call(deltas, reply, where)
    else:
        check_reconstruction(deltas, reply, where)
    return time.perf_counter() - start


def _runner(chunks: list[str], complete: bool, text: str) -> Callable[[Any], object]:
    if complete:
        return lambda parser: parser.parse_complete(text)
    body, last = chunks[:-1], chunks[-1]

    def feed(parser: Any) -> None:
        stream = parser.stream_chunk
        for piece in body:
            stream(piece)
        stream(last, final=True)

    return feed


def _slowest_call(make_parser: Callable[[], Any], chunks: list[str]) -> float:
    """The longest single ``stream_chunk`` call of one run, CPU seconds of this thread (the
    collector left on, as a server runs).  CPU, not wall time: on a shared machine a wall
    clock also counts the scheduler's time slices given to other processes (4 ms each)."""
    parser = make_parser()
    stream = parser.stream_chunk
    clock = time.thread_time
    slowest = 0.0
    gc.collect()
    for i, piece in enumerate(chunks):
        begun = clock()
        stream(piece, final=i == len(chunks) - 1)
        slowest = max(slowest, clock() - begun)
    return slowest


class _Config(NamedTuple):
    case: Case
    chunking: str
    reply: Reply | CallReply
    chunks: list[str]
    cuts: list[int] | None


def _prepare(case: Case, chunking: str, size: int) -> _Config:
    reply = case.build(size)
    chunks, cuts = _chunks(reply.text, chunking, case.tokenizer)
    return _Config(case, chunking, reply, chunks, cuts)


def _peer_prepare(peer: PeerProcess, key: int, config: _Config) -> dict:
    case = config.case
    chunk = None if config.chunking in ("whole", "complete") or config.cuts is not None else int(config.chunking)
    return peer.request(op="prepare", id=key, family=case.family, reply=config.reply._asdict(), names=case.names,
                        special_tokens=case.special_tokens, chunk=chunk, cuts=config.cuts,
                        complete=config.chunking == "complete", label=f"{case.label}, chunking {config.chunking}")


def _measure_one(config: _Config, mode: VersusMode, peer: PeerProcess | None, key: int) -> dict:
    """Check both sides, then alternate ``mode.pairs`` (ours, peer) timings."""
    case, chunking, reply, chunks = config.case, config.chunking, config.reply, config.chunks
    text = reply.text
    estimate = _check(case, reply, chunks, f"lmparse {case.label}, {len(text)} chars, chunking {chunking}")
    run = _runner(chunks, chunking == "complete", text)
    row: dict = {"case": case.label, "chunking": chunking, "chars": len(text), "chunks": len(chunks)}
    theirs = _peer_prepare(peer, key, config) if peer is not None else {"ok": False, "error": "not run"}
    row["peer_chunking"] = theirs.get("chunking")
    row["peer_error"] = None if theirs["ok"] else theirs["error"]
    ours_walls: list[float] = []
    peer_walls: list[float] = []
    for _ in range(mode.pairs if theirs["ok"] else 1):
        ours_walls.append(best_of(case.make_parser, run, mode.settings, estimate).wall)
        if theirs["ok"] and peer is not None:
            timed = peer.request(op="time", id=key, settings=list(mode.settings))
            if not timed["ok"]:
                row["peer_error"] = timed["error"]
                break
            peer_walls.append(timed["wall_s"])
    if peer is not None:
        peer.request(op="forget", id=key)
    row["ours_mbs"] = len(text) / statistics.median(ours_walls) / 1e6
    row["ours_wall_s"] = statistics.median(ours_walls)
    pairs = list(zip(ours_walls, peer_walls, strict=False))
    row["peer_mbs"] = len(text) / statistics.median(peer_walls) / 1e6 if peer_walls else None
    row["ratio"] = statistics.median(p / o for o, p in pairs) if pairs else None
    row["pair_ratios"] = [p / o for o, p in pairs]
    return row


def _ours_only(config: _Config, settings: Settings) -> float:
    """Ours on this configuration, checked, best-of wall seconds."""
    case, reply, chunks = config.case, config.reply, config.chunks
    estimate = _check(case, reply, chunks, f"lmparse {case.label}, {len(reply.text)} chars, chunking {config.chunking}")
    run = _runner(chunks, config.chunking == "complete", reply.text)
    return best_of(case.make_parser, run, settings, estimate).wall


def measure_cases(cases: Sequence[Case], mode: VersusMode, peer: PeerProcess | None,
                  chunkings: Sequence[str] = CHUNKINGS, progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per case x chunking: ours and the peer's median MB/s, the median pair ratio,
    linearity (t(size) / t(small) on the same chunking) and the slowest ``stream_chunk`` call."""
    rows = []
    key = 0
    for case in cases:
        for chunking in chunkings:
            size = mode.per_character_size if chunking in PER_CHARACTER else mode.size
            if progress is not None:
                progress(f"  versus     {case.label:20} chunking {chunking:11} {size} chars")
            config = _prepare(case, chunking, size)
            key += 1
            row = _measure_one(config, mode, peer, key)
            row["size"] = size
            small = _prepare(case, chunking, max(1, size // (mode.size // mode.small)))
            row["small_chars"] = len(small.reply.text)
            row["small_wall_s"] = _ours_only(small, mode.settings)
            row["linearity"] = row["ours_wall_s"] / row["small_wall_s"]
            row["slowest_call_s"] = None if chunking == "complete" else _slowest_call(case.make_parser, config.chunks)
            rows.append(row)
    return rows
