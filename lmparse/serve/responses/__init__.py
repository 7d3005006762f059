"""OpenAI ``/v1/responses`` (the Responses API), on the same ChatRunner and parsers.

``request`` converts a request (input items, reasoning, text.format, previous_response_id),
``tools`` its tools and tool_choice; ``events`` builds the output items and streaming events;
``store`` keeps responses for ``previous_response_id`` and ``GET /v1/responses/{id}``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from ..runner import ChatRunner
from .events import DONE, ResponseBuilder, sse
from .request import DIALECT_HEADER, DIALECTS, ResponsesOptions, parse_request
from .store import DEFAULT_STORE_BYTES, ResponseStore
from .tools import NAMESPACE_SEPARATOR, ToolMap

__all__ = ["parse_request", "stream_response", "response_events", "ResponseBuilder", "complete_response",
           "ResponsesOptions", "ResponseStore", "ToolMap", "NAMESPACE_SEPARATOR", "DEFAULT_STORE_BYTES", "DIALECTS",
           "DIALECT_HEADER"]



def _keep(builder: ResponseBuilder, opts: ResponsesOptions, response: dict) -> None:
    if opts.store is not None:
        opts.store.put(builder.id, opts.previous_response_id, opts.new_messages + [builder.turn()], response)


async def response_events(runner: ChatRunner, opts: ResponsesOptions,
                          builder: ResponseBuilder) -> AsyncGenerator[list[dict], None]:
    """The stream's events, a step's at a time; the last list ends with the terminal event
    (``response.completed`` / ``.incomplete`` / ``.failed``).  SSE and WebSocket write them."""
    builder.start()
    yield builder.take()
    try:
        async with aclosing(runner.steps()) as steps:
            async for step in steps:  # a step's events go out as one body
                for d in step:
                    builder.feed(d)
                events = builder.take()
                if events:
                    yield events
    except Exception as exc:  # the engine failed mid-stream
        builder.fail(runner.failure(exc))
        yield builder.take()
        return
    response = builder.finish(runner)
    _keep(builder, opts, response)  # before the last yield: a client may leave right after it
    yield builder.take()


async def stream_response(runner: ChatRunner, opts: ResponsesOptions) -> AsyncGenerator[bytes, None]:
    builder = ResponseBuilder(opts, emit=True)
    async with aclosing(response_events(runner, opts, builder)) as batches:
        async for events in batches:
            body = b"".join(sse(event) for event in events)
            if builder.response["status"] != "in_progress":  # the terminal batch
                body += _end(opts)
            yield body


def _end(opts: ResponsesOptions) -> bytes:
    """What follows the terminal event: ``[DONE]`` in the Open Responses dialect, nothing in OpenAI's."""
    return DONE if opts.open_responses else b""


async def complete_response(runner: ChatRunner, opts: ResponsesOptions) -> dict:
    builder = ResponseBuilder(opts, emit=False)
    async with aclosing(runner.run()) as deltas:
        async for d in deltas:
            builder.feed(d)
    response = builder.finish(runner)
    _keep(builder, opts, response)
    return response
