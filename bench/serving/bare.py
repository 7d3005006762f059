"""The HTTP stack's own ceiling: a bare Starlette SSE endpoint under uvicorn, streaming
events encoded before it starts.

``python -m bench.serving.bare PORT EVENTS_FILE`` answers every POST to
``/v1/chat/completions`` with the events of EVENTS_FILE (lmparse's own SSE stream for the
benchmark's request, recorded once), one ``send`` per event (lmparse sends an engine step's
events, four at full speed, in one), under the
uvicorn settings ``lmparse serve`` uses (h11, the asyncio loop, no access log).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

__all__ = ["app", "main"]


def app(events: list[bytes]):  # noqa: ANN201 - a Starlette app
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def body() -> AsyncIterator[bytes]:
        for event in events:
            yield event

    async def chat(request: Request) -> StreamingResponse:
        await request.body()
        return StreamingResponse(body(), media_type="text/event-stream; charset=utf-8",
                                 headers={"cache-control": "no-cache"})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def split_events(stream: bytes) -> list[bytes]:
    """An SSE byte stream as its events, each with its blank line."""
    return [event + b"\n\n" for event in stream.split(b"\n\n") if event]


def main(argv: list[str]) -> None:
    import uvicorn

    port, events_file = int(argv[0]), argv[1]
    with open(events_file, "rb") as f:
        events = split_events(f.read())
    uvicorn.run(app(events), host="127.0.0.1", port=port, http="h11", loop="asyncio", access_log=False,
                log_level="warning", log_config=None)


if __name__ == "__main__":
    main(sys.argv[1:])
