"""The embedded default engine: a deterministic stand-in model that needs no weights.

It decides a reply from the conversation (``answer.decide``), writes it in the family's
wire format with the parsers' own renderers (tool dialect ``render``, reasoning
descriptor ``render``, Harmony for gpt-oss), and streams it tokenized with the family's
tokenizer at a configurable rate (a token per step; at full speed a few per step, as an
engine's stream interval or speculative decoding hands them over), with fake but
well-formed logprobs.
The prompt is rendered with the family's chat template for the usage count.

The reply is produced, searched for stop sequences and tokenized as it streams, a
bounded window at a time: memory is what is in flight, not the answer's length, and
no step holds the event loop for longer than one window's work.
"""

from __future__ import annotations

import asyncio
import secrets
from itertools import islice
from collections.abc import AsyncIterator, Iterable, Iterator

from ...factory import PROMPT_TAIL
from ...registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from ..families import Family
from ..templates import ChatTemplate, render_chatml
from ..tokenizer import Step, Tokenizer
from .answer import PIECE, Reply, decide, slices
from .base import Engine, EngineChunk, EngineStream, GenerationRequest

__all__ = ["SimulatedEngine", "StopScan", "harmony_parts"]

# Stands for the content while the rest of a reply is rendered around it; random, so no
# request can write it.
_HOLE = f"\x00content-{secrets.token_hex(8)}\x00"
# At full speed (no token rate) a stream hands over this many tokens per step, and the event
# loop runs between steps: the server learns that a client left only when the loop runs.
_YIELD_EVERY = 4


def harmony_parts(reply: Reply, content: str | None = None) -> list[tuple[str, ...]]:
    """The reply as gpt-oss messages, for ``lmparse.response.harmony.render_reply``
    (``content`` in place of the reply's own when given)."""
    parts: list[tuple[str, ...]] = []
    if reply.reasoning is not None:
        parts.append(("analysis", reply.reasoning))
    parts += [("call", name, arguments) for name, arguments in reply.calls]
    if reply.calls and reply.calls_in_reasoning and reply.reasoning_after:
        parts.append(("analysis", reply.reasoning_after))
    if reply.parts is not None:
        parts.append(("final", content if content is not None else reply.content or ""))
    return parts


def _fake_logprob(step: Step, top: int) -> dict:
    """A deterministic, well-formed ``ChatCompletionTokenLogprob`` entry."""
    _, token_id, token = step
    logprob = -(((token_id * 2654435761) >> 7) % 2000) / 1000.0
    alternatives = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
    for rank in range(1, top):
        alt = f"<alt{rank}>"
        alternatives.append({"token": alt, "logprob": round(logprob - rank, 3), "bytes": list(alt.encode())})
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()), "top_logprobs": alternatives[:top]}


class StopScan:
    """Text pieces up to the first stop sequence, found as they stream.

    The earliest occurrence wins (the smaller string on a tie), as a search of the whole
    text would decide.  Only the last ``keep`` characters (the longest stop's length - 1)
    are held back; each search covers the held text and at least as much new text, so
    the work is linear in the text."""

    __slots__ = ("stops", "keep", "found")

    def __init__(self, stops: Iterable[str]) -> None:
        self.stops = sorted({s for s in stops if s})
        self.keep = max(map(len, self.stops), default=1) - 1
        self.found: str | None = None

    def _first(self, text: str) -> tuple[int, str] | None:
        hits = [(at, s) for s in self.stops for at in [text.find(s)] if at >= 0]
        return min(hits) if hits else None

    def scan(self, pieces: Iterable[str]) -> Iterator[str]:
        if not self.stops:
            yield from pieces
            return
        held, pending, size = "", [], 0
        for piece in pieces:
            pending.append(piece)
            size += len(piece)
            if size < max(self.keep, PIECE):
                continue
            text = held + "".join(pending)
            pending.clear()
            size = 0
            safe = len(text) - self.keep  # a stop starting before here lies wholly in text
            hit = self._first(text)
            if hit is not None and hit[0] <= safe:
                self.found = hit[1]
                yield text[:hit[0]]
                return
            yield text[:safe]
            held = text[safe:]
        text = held + "".join(pending)
        hit = self._first(text)
        if hit is not None:
            self.found = hit[1]
            text = text[:hit[0]]
        yield text


class SimulatedEngine(Engine):
    name = "simulated"

    def __init__(self, family: Family, tokenizer: Tokenizer, template: ChatTemplate | None = None,
                 token_rate: float = 0.0) -> None:
        self.family = family
        self.tokenizer = tokenizer
        self.template = template
        self.token_rate = token_rate  # tokens per second; 0 streams as fast as the loop allows
        self._tool = ToolParserManager.get(family.tool_parser) if family.tool_parser else None
        self._reasoning = ReasoningParserManager.get(family.reasoning_parser) if family.reasoning_parser else None
        self._harmony = ResponseParserManager.get(family.response_parser).frames_reply
        # Counted for /metrics: a stream closed before its last token was cancelled.
        self.streams_started = self.streams_cancelled = self.tokens_generated = 0

    # ---- the reply ------------------------------------------------------------------------

    def thinking_on(self, request: GenerationRequest) -> bool:
        if self._harmony:
            return request.thinking is not False
        if self._reasoning is None:
            return False
        # The family's own initial mode decides; a model that opens reasoning itself
        # (an explicit start tag) thinks when the request asks for it.
        descriptor = self._reasoning(request.parser_request)
        return descriptor.starts_in_reasoning() or (descriptor.start_tag is not None and request.thinking is True)

    def reply_text(self, request: GenerationRequest) -> str:
        return "".join(self.reply_pieces(request))

    def reply_pieces(self, request: GenerationRequest) -> Iterator[str]:
        """The reply's text in pieces of at most ``PIECE`` characters.  The decision and
        the frame around the content are made now; the content is written as it is read."""
        reply = decide(request, self.thinking_on(request), self.family.name)
        hole = _HOLE if reply.parts is not None else None
        if self._harmony:
            from ...response.harmony import render_reply

            frame = render_reply(harmony_parts(reply, hole), header="model")
        else:
            frame = self.render(reply, hole)
        before, found, after = frame.partition(_HOLE) if hole else (frame, "", "")

        def pieces() -> Iterator[str]:
            yield from slices(before)
            if found:
                yield from reply.content_pieces()
            yield from slices(after)

        return pieces()

    def render(self, reply: Reply, content: str | None = None) -> str:
        """The reply in the family's wire format (``content`` in place of the reply's own)."""
        calls = self._tool.render(reply.calls) if reply.calls and self._tool is not None else ""
        parts = []
        if reply.reasoning is not None and self._reasoning is not None:
            if calls and reply.calls_in_reasoning:
                start = (self._reasoning.start_tag or "") + self._reasoning.start_label
                reopen = start if self._reasoning.tool_call_ends_reasoning else ""  # the call closed it
                parts.append(f"{start}{reply.reasoning}{calls}{reopen}{reply.reasoning_after}{self._reasoning.end_tag}")
                calls = ""
            else:
                parts.append(self._reasoning.render(reply.reasoning))
        if reply.parts is not None:
            parts.append(content if content is not None else reply.content or "")
        parts.append(calls)
        return "".join(parts)

    def prompt(self, request: GenerationRequest) -> str:
        if self.template is not None:
            try:
                return self.template.render(request.messages, request.tools, request.thinking,
                                            request.reasoning_effort)
            except Exception:  # a template that rejects this conversation: the count is approximate
                pass
        return render_chatml(request.messages, request.tools)

    def count_prompt(self, request: GenerationRequest) -> int:
        return self.tokenizer.count(self.prompt(request))

    # ---- streaming --------------------------------------------------------------------------

    def start(self, request: GenerationRequest) -> EngineStream:
        prompt = self.prompt(request)
        prompt_tokens = self.tokenizer.count(prompt)
        scan = StopScan(request.stop)
        steps = self.tokenizer.stream(scan.scan(self.reply_pieces(request)))
        top = request.top_logprobs if request.logprobs else None
        # Stand-in ids only count tokens; gpt-oss's parser reads real ids, so it gets none.
        real_ids = self.tokenizer.real
        stream = EngineStream(prompt_tokens, self._stream(_chunks(steps, request.max_tokens, scan, top)),
                              parser_token_ids=real_ids or not self._harmony, stepped=True)
        stream.prompt_tail = prompt[-PROMPT_TAIL:]
        return stream

    async def _stream(self, chunks: Iterator[EngineChunk]) -> AsyncIterator[list[EngineChunk]]:
        """The chunks a step at a time: one token per step at a token rate; at full speed
        ``_YIELD_EVERY`` tokens per step, each step after a trip through the event loop
        (the server notices a client that left, and the other streams run; a trip per
        token would cost each one that much)."""
        self.streams_started += 1
        loop = asyncio.get_running_loop()
        interval = 1.0 / self.token_rate if self.token_rate > 0 else 0.0
        per_step = 1 if interval else _YIELD_EVERY
        due = loop.time()
        done = False
        try:
            while step := list(islice(chunks, per_step)):
                if interval:
                    due += interval
                    delay = due - loop.time()
                    await asyncio.sleep(delay if delay > 0 else 0)
                else:
                    await asyncio.sleep(0)
                for chunk in step:
                    self.tokens_generated += len(chunk.token_ids or ())
                done = step[-1].finish_reason is not None
                yield step
        finally:
            if not done:
                self.streams_cancelled += 1

    def stats(self) -> dict[str, int]:
        return {"streams_started": self.streams_started, "streams_cancelled": self.streams_cancelled,
                "tokens_generated": self.tokens_generated}


def _chunks(steps: Iterator[Step], max_tokens: int | None, scan: StopScan, top: int | None) -> Iterator[EngineChunk]:
    """One chunk per token; the last carries the finish reason: ``length`` when
    ``max_tokens`` cut the reply, else ``stop`` (with the stop sequence that ended it)."""
    held: Step | None = None
    count = 0
    finish = "stop"
    for step in steps:
        if max_tokens is not None and count >= max_tokens:
            finish = "length"
            break
        if held is not None:
            yield EngineChunk(held[0], [held[1]], [_fake_logprob(held, top)] if top is not None else None)
        held, count = step, count + 1
    stop_sequence = scan.found if finish == "stop" else None
    if held is None:
        yield EngineChunk("", [], [] if top is not None else None, finish, stop_sequence)
    else:
        yield EngineChunk(held[0], [held[1]], [_fake_logprob(held, top)] if top is not None else None,
                          finish, stop_sequence)
