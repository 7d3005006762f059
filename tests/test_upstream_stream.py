"""``UpstreamStream``, the I/O shell, over an in-process transport: what fails where (at
``open``, a 502; later, from the iterator), that each failure is counted once and is no
cancellation, that closing early is one, and that the engine's own prompt count is bound."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

httpx = pytest.importorskip("httpx")

from lmparse.serve.engines.base import EngineChunk  # noqa: E402
from lmparse.serve.engines.decoders import UpstreamRefusal  # noqa: E402
from lmparse.serve.engines.upstream import UpstreamEngine, UpstreamError  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402

from .support.upstream import (CACHED, EOS_ID, OVERFLOW_REASON, PROMPT_IDS, REFUSALS, TOKENIZER, recorded,  # noqa: E402
                               refused, request, sse, steps)

CRASHED = sse({"error": "engine crashed"})


class Source(httpx.AsyncByteStream):
    """A response body: ``reads`` in order (an exception is raised where it stands)."""

    def __init__(self, reads: list[bytes | Exception]) -> None:
        self.reads = reads
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for read in self.reads:
            await asyncio.sleep(0)
            if isinstance(read, Exception):
                raise read
            yield read

    async def aclose(self) -> None:
        self.closed = True


def engine(kind: str, *reads: bytes | Exception, status: int = 200) -> tuple[UpstreamEngine, Source]:
    """An engine whose upstream answers ``status`` with ``reads`` (status 0: the connection fails with ``reads[0]``)."""
    source = Source(list(reads))

    def handle(req: httpx.Request) -> httpx.Response:
        if status == 0:
            raise reads[0]
        return httpx.Response(status, stream=source)

    transport = httpx.MockTransport(handle)
    return UpstreamEngine(kind, "http://fake", get_family("qwen3"), TOKENIZER, None, transport=transport), source


class Usage:
    prompt_tokens = cached_tokens = 0


async def run(upstream: UpstreamEngine, stop_after: int = 0) -> tuple[str, list[EngineChunk], Exception | None]:
    """Where the stream ended ("open", "stream", "closed" or "done"), its chunks and its error."""
    stream = upstream.start(request())
    try:
        await stream.open()
    except UpstreamError as exc:
        return "open", [], exc
    chunks: list[EngineChunk] = []
    try:
        async for chunk in stream:
            chunks.append(chunk)
            if len(chunks) == stop_after:
                return "closed", chunks, None
    except UpstreamError as exc:
        return "stream", chunks, exc
    finally:
        await stream.aclose()
    return "done", chunks, None


def test_a_whole_stream_binds_the_engines_prompt_count() -> None:
    upstream, source = engine("vllm", recorded("vllm"))
    usage = Usage()

    async def go() -> list[EngineChunk]:
        stream = upstream.start(request())
        stream.bind_usage(usage)
        await stream.open()
        assert stream.prompt_tokens == len(PROMPT_IDS)  # known from the first event, before the response starts
        return [chunk async for chunk in stream]

    chunks = asyncio.run(go())
    assert chunks[-1].finish_reason == "stop" and chunks[-1].token_ids == [EOS_ID]
    assert usage.prompt_tokens == len(PROMPT_IDS) and source.closed
    assert upstream.stats() == {"streams_started": 1, "streams_cancelled": 0, "tokens_generated": len(steps()) + 1,
                                "upstream_errors": 0}


FAILURES = {
    "unreachable": ("vllm", 0, [httpx.ConnectError("refused")], "open",
                    "upstream vllm at http://fake is unreachable: ConnectError: refused"),
    "http-json": ("vllm", 500, [b'{"error": {"message": "CUDA out of memory"}}'], "open",
                  "upstream vllm answered HTTP 500: CUDA out of memory"),
    "http-text": ("sglang", 503, [b"  overloaded\n"], "open", "upstream sglang answered HTTP 503: overloaded"),
    "first-event-error": ("lmdeploy", 200, [CRASHED], "open", "upstream lmdeploy error: engine crashed"),
    "first-line-not-json": ("llamacpp", 200, [b"<html>\n"], "open",
                            "upstream llamacpp sent a line that is not JSON: '<html>'"),
    "first-read-breaks": ("vllm", 200, [httpx.ReadError("reset")], "open", "upstream vllm failed: ReadError: reset"),
    "first-event-abort": ("vllm", 200, [sse({"choices": [{"text": "", "finish_reason": "abort"}]})], "stream",
                          "vLLM aborted the request"),
    "midstream-error": ("lmdeploy", 200, [recorded("midfail")], "stream", "upstream lmdeploy error: engine crashed"),
    "midstream-break": ("lmdeploy", 200, [recorded("lmdeploy")[:300], httpx.ReadError("reset")], "stream",
                        "upstream lmdeploy failed mid-stream: ReadError: reset"),
    "no-finish": ("llamacpp", 200, [sse({"content": "hi", "tokens": [1], "stop": False})], "stream",
                  "upstream llamacpp ended the stream without a finish reason"),
}


@pytest.mark.parametrize("case", FAILURES)
def test_each_failure_is_counted_once_and_is_no_cancellation(case: str) -> None:
    kind, status, reads, where, message = FAILURES[case]
    upstream, source = engine(kind, *reads, status=status)
    ended, _, error = asyncio.run(run(upstream))
    assert (ended, str(error)) == (where, message)
    assert error.status == 502 and error.kind == "server_error"
    assert upstream.upstream_errors == 1 and upstream.streams_cancelled == 0
    assert source.closed or case == "unreachable"


def test_closing_early_is_a_cancellation_and_closes_the_upstream_response() -> None:
    upstream, source = engine("sglang", recorded("sglang-incremental"))
    ended, chunks, _ = asyncio.run(run(upstream, stop_after=3))
    assert ended == "closed" and len(chunks) == 3 and source.closed
    assert upstream.streams_cancelled == 1 and upstream.upstream_errors == 0


@pytest.mark.parametrize("kind", REFUSALS)
def test_an_engine_refusing_the_request_is_a_400_with_its_reason_and_no_failure(kind: str) -> None:
    status, data = refused(kind)
    upstream, source = engine(kind, data, status=status)
    ended, _, error = asyncio.run(run(upstream))
    assert ended == "open" and isinstance(error, UpstreamRefusal)
    assert (error.status, error.kind, error.message) == (400, "invalid_request_error", OVERFLOW_REASON[kind])
    assert upstream.upstream_errors == 0 and upstream.streams_cancelled == 0 and source.closed


@pytest.mark.parametrize("case, status, data", [
    ("not found", 404, b'{"error": {"message": "model qwen3 does not exist"}}'),
    ("busy", 429, b'{"error": {"message": "too many requests"}}'),
    ("error with a 5xx code first", 200, sse({"error": {"message": "engine crashed", "code": 500}})),
])
def test_other_engine_errors_stay_502s(case: str, status: int, data: bytes) -> None:
    upstream, _ = engine("lmdeploy", data, status=status)
    ended, _, error = asyncio.run(run(upstream))
    assert ended == "open" and not isinstance(error, UpstreamRefusal) and error.status == 502
    assert upstream.upstream_errors == 1


def test_a_client_error_event_after_the_first_tokens_is_a_failure_mid_stream() -> None:
    late = recorded("lmdeploy")[:300].rsplit(b"\n\n", 1)[0] + b"\n\n" + sse({"error": {"message": "bad", "code": 400}})
    upstream, _ = engine("lmdeploy", late)
    ended, chunks, error = asyncio.run(run(upstream))
    assert ended == "stream" and chunks and not isinstance(error, UpstreamRefusal) and error.status == 502


def test_the_engines_cached_prompt_count_is_bound_with_the_prompt_count() -> None:
    upstream, _ = engine("llamacpp", recorded("llamacpp"))
    usage = Usage()

    async def go() -> None:
        stream = upstream.start(request())
        stream.bind_usage(usage)
        await stream.open()
        async for _ in stream:
            pass

    asyncio.run(go())
    assert (usage.prompt_tokens, usage.cached_tokens) == (len(PROMPT_IDS), CACHED["llamacpp"])
