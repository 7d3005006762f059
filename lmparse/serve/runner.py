"""ChatRunner: one request's lifecycle between an engine stream and an API adapter.

It feeds each engine chunk to the request's parser, attaches the chunk's transport
metadata (token ids, logprobs, finish reason) to the last delta that chunk produced
(or to a metadata-only delta when it produced none), turns ``stop`` into
``tool_calls`` only when a call was emitted, counts usage, and closes the engine
stream when the consumer stops early (a client that went away cancels generation).
``steps`` hands the deltas over a list per engine step: the tokens an engine makes in
one step are parsed in one go, and a streaming adapter sends their events as one body.

Both adapters consume the same ``RunnerDelta`` sequence for streaming and for whole
responses, so an SDK's accumulated stream equals the non-streaming reply by
construction.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing

from ..messages import DeltaMessage
from ..response.base import ResponseParser
from .engines.base import EngineChunk, EngineStream
from .errors import RequestError, internal_message, public
from .metrics import Metrics
from .tool_choice import CallCheck

__all__ = ["ChatRunner", "RunnerDelta", "Usage", "HeldSpace", "GenerationInterrupted"]

logger = logging.getLogger("lmparse.serve")


class GenerationInterrupted(RequestError):
    """The server ended a generation before its finish (it is shutting down): a 503 before
    the response starts, the API's error event in a stream."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, None, status=503, kind="server_error")


class RunnerDelta:
    __slots__ = ("message", "has_tool_calls", "token_ids", "logprobs", "finish_reason")

    def __init__(self, message: DeltaMessage, has_tool_calls: bool) -> None:
        self.message = message
        self.has_tool_calls = has_tool_calls
        self.token_ids: list[int] | None = None
        self.logprobs: list[dict] | None = None
        self.finish_reason: str | None = None

    def __repr__(self) -> str:
        return f"RunnerDelta({self.message!r}, finish={self.finish_reason!r})"


class HeldSpace:
    """Whitespace that would open a new text item (the ``\n\n`` between ``</think>`` and a
    tool call), held by the item-based adapters (Responses, Messages): it goes out in front
    of the text that follows it, or is dropped when another kind of item opens first."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[str] = []

    def hold(self, text: str) -> bool:
        """Keep ``text`` if it is only whitespace (True); otherwise leave it to the caller."""
        if text.isspace():
            self._parts.append(text)
            return True
        return False

    def before(self, text: str) -> str:
        """``text`` with the held whitespace in front of it."""
        if self._parts:
            self._parts.append(text)
            text = "".join(self._parts)
            self._parts.clear()
        return text

    def drop(self) -> None:
        self._parts.clear()


class Usage:
    __slots__ = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")

    def __init__(self, prompt_tokens: int = 0, completion_tokens: int = 0, reasoning_tokens: int = 0) -> None:
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.reasoning_tokens = reasoning_tokens
        self.cached_tokens = 0  # of the prompt's, served from the engine's prefix cache (as it reports)

    def openai(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }


class ChatRunner:
    def __init__(self, stream: EngineStream, parser: ResponseParser, metrics: Metrics | None = None,
                 request_id: str = "", check: CallCheck | None = None) -> None:
        self._stream = stream
        self._check = check  # tool_choice required a call: judged at the finish
        self._parser = parser
        self._metrics = metrics
        self.request_id = request_id
        self._task: asyncio.Task | None = None  # the task running ``run``, for ``interrupt``
        self._interrupted: str | None = None
        self.usage = Usage(prompt_tokens=stream.prompt_tokens)
        self.finish_reason: str | None = None
        self.stop_sequence: str | None = None
        self.tool_calls = 0
        self.parse_cpu = 0.0
        self.completed = False
        self.failed = False  # the engine failed, or the server ended the generation
        self._args_started: set[int] = set()
        # Tokens of chunks that produced only reasoning: the count when the parser has
        # no ids to count with (stand-in ids are never given to an id-driven parser).
        self._reasoning_chunk_tokens = 0

    async def run(self) -> AsyncGenerator[RunnerDelta, None]:
        """The deltas of the response one by one (``steps`` has them per engine step).
        Use it under ``contextlib.aclosing`` so an early exit closes the engine now."""
        async with aclosing(self.steps()) as steps:
            async for step in steps:
                for delta in step:
                    yield delta

    async def steps(self) -> AsyncGenerator[list[RunnerDelta], None]:
        """The deltas of the response, a non-empty list per engine step (a streaming
        adapter sends a step's events at once); the last delta carries the finish reason.
        Use it under ``contextlib.aclosing`` so an early exit closes the engine now."""
        stream = self._stream
        ids_to_parser = stream.parser_token_ids
        self._task = asyncio.current_task()
        try:
            if self._interrupted is not None:
                raise GenerationInterrupted(self._interrupted)
            final = False
            async for chunks in stream.steps():
                out: list[RunnerDelta] = []
                for chunk in chunks:
                    final = self._chunk(chunk, ids_to_parser, out)
                    if final:
                        break
                if out:
                    yield out
                if final:
                    break
            if self.finish_reason is None:  # the engine ended without saying why
                out = self._parse("", None, True)
                self._finish("stop")
                if not out:
                    out = [RunnerDelta(DeltaMessage(), False)]
                out[-1].finish_reason = self.finish_reason
                yield out
            self.completed = True
        except asyncio.CancelledError:
            if self._interrupted is None:
                raise  # the client left: the cancellation goes on up
            uncancel = getattr(self._task, "uncancel", None)  # Python 3.11+
            if uncancel is not None:
                uncancel()
            self.failed = True
            raise GenerationInterrupted(self._interrupted) from None
        except Exception:
            self.failed = True
            raise
        finally:
            await stream.aclose()
            self._record()

    def _chunk(self, chunk: EngineChunk, ids_to_parser: bool, out: list[RunnerDelta]) -> bool:
        """Parse one chunk onto ``out``, its transport metadata on the last delta it made;
        True for the last chunk."""
        finish = chunk.finish_reason
        final = finish is not None
        ids = chunk.token_ids
        deltas = self._parse(chunk.text, ids if ids_to_parser else None, final)
        count = len(ids) if ids is not None else 1 if chunk.text else 0
        self.usage.completion_tokens += count
        # (the reasoning tokens by chunk, for when the parser counts none: it counts the ids it gets)
        if deltas and not (ids and ids_to_parser) and all(
                d.message.reasoning_content is not None and d.message.content is None and not d.has_tool_calls
                for d in deltas):
            self._reasoning_chunk_tokens += count
        if finish is not None:
            self.stop_sequence = chunk.stop_sequence
            self._finish(finish)
        if deltas or ids or chunk.logprobs or final:
            if not deltas:
                deltas = [RunnerDelta(DeltaMessage(), False)]  # metadata only
            last = deltas[-1]
            last.token_ids, last.logprobs = ids, chunk.logprobs
            last.finish_reason = self.finish_reason if final else None
            out += deltas
        return final

    def interrupt(self, reason: str) -> None:
        """End the generation now but cleanly: waiting on the engine, it raises
        ``GenerationInterrupted`` to the adapter, which ends its stream with the API's
        error event (graceful shutdown uses this once its grace period is over)."""
        self._interrupted = reason
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def failure(self, exc: Exception) -> str:
        """What a client is told when the generation failed mid-stream (``errors.public``
        decides, as for an error before the stream); a detail it hides is logged."""
        if isinstance(exc, RequestError) and public(exc, self.request_id) is exc:
            return exc.message
        logger.error("request %s: generation failed mid-stream: %s: %s", self.request_id, type(exc).__name__, exc)
        return internal_message(self.request_id)

    def _parse(self, text: str, ids: list[int] | None, final: bool) -> list[RunnerDelta]:
        # The parser runs on the loop's thread without awaiting: its elapsed time is its CPU
        # time (unless the process was preempted), at a tenth of thread_time's cost.
        started = time.perf_counter()
        deltas = self._parser.stream_chunk(text, ids, final)
        self.parse_cpu += time.perf_counter() - started
        out = []
        for message, has_tools in deltas:
            if has_tools:
                self._tidy_calls(message)
            out.append(RunnerDelta(message, has_tools))
        return out

    def _tidy_calls(self, message: DeltaMessage) -> None:
        """Count calls, and make each call's first argument fragment start at ``{``: SDKs
        parse the accumulated arguments as partial JSON and reject leading whitespace."""
        started = self._args_started
        check = self._check
        for call in message.tool_calls or ():
            if call.id is not None:
                self.tool_calls += 1
            fn = call.function
            if check is not None and fn is not None:
                check.note(call.index, fn.name, fn.arguments)
            if fn is not None and fn.arguments and call.index not in started:
                fn.arguments = fn.arguments.lstrip()
                if fn.arguments:
                    started.add(call.index)

    def _finish(self, reason: str) -> None:
        if self._check is not None and reason == "stop":  # a reply cut by ``length`` says so itself
            self._check.verify()
        self.finish_reason = "tool_calls" if reason == "stop" and self.tool_calls else reason
        counted = self._parser.reasoning_tokens
        self.usage.reasoning_tokens = counted if counted is not None else self._reasoning_chunk_tokens

    def _record(self) -> None:
        m = self._metrics
        if m is None:
            return
        m.inc("lmparse_prompt_tokens_total", self.usage.prompt_tokens)
        m.inc("lmparse_streamed_tokens_total", self.usage.completion_tokens)
        m.inc("lmparse_reasoning_tokens_total", self.usage.reasoning_tokens)
        m.inc("lmparse_tool_calls_emitted_total", self.tool_calls)
        for dropped in self._parser.dropped:  # cut-off markup apart from calls refused
            m.inc("lmparse_tool_calls_dropped_total", kind="rejected" if dropped.text is None else "truncated")
        m.inc("lmparse_parse_cpu_seconds_total", self.parse_cpu)
        m.inc("lmparse_engine_completed_total" if self.completed else
              "lmparse_engine_failed_total" if self.failed else "lmparse_engine_cancelled_total")
