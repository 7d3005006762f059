"""HTTP responses: SSE streams that stop when the client leaves, JSON bodies, and errors in
the shape of the API a path belongs to.

Error shapes: ``/v1/messages*`` (and ``/v1/models*`` asked by an Anthropic client, which
sends ``anthropic-version``) answer ``{"type": "error", "error": {"type", "message"}}``
with Anthropic's error types; every other path answers OpenAI's ``{"error": {"message",
"type", "param", "code"}}``.  Every response lmparse sends is JSON, errors included.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import Any

import orjson
from starlette.responses import Response

from .errors import RequestError, anthropic_error_body, openai_error_body

__all__ = ["EventStream", "closing_stream", "json_response", "error_response", "anthropic_path"]

# RequestError kinds (OpenAI's words) as Anthropic names them, by status where it decides.
_ANTHROPIC_KINDS = {"server_error": "api_error", "not_found_error": "not_found_error",
                    "authentication_error": "authentication_error", "permission_error": "permission_error",
                    "overloaded_error": "overloaded_error", "rate_limit_error": "rate_limit_error"}
_ANTHROPIC_STATUS = {413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
                     503: "overloaded_error"}


def anthropic_path(path: str, headers: Mapping[str, str]) -> bool:
    return path.startswith("/v1/messages") or (path.startswith("/v1/models") and "anthropic-version" in headers)


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def error_response(exc: RequestError, anthropic: bool, headers: Mapping[str, str] | None = None) -> Response:
    if anthropic:
        kind = _ANTHROPIC_STATUS.get(exc.status) or _ANTHROPIC_KINDS.get(exc.kind, "invalid_request_error")
        if exc.status >= 500 and kind == "invalid_request_error":
            kind = "api_error"
        body = anthropic_error_body(exc.message, kind)
    else:
        body = openai_error_body(exc.message, exc.param, exc.kind, exc.code)
    return json_response(body, exc.status, headers)


class EventStream:
    """An SSE response that stops generating as soon as the client goes away.

    The body is pumped in one task while another waits for ``http.disconnect``; a
    disconnect cancels the pump, which closes the chain of generators down to the engine."""

    def __init__(self, chunks: AsyncGenerator[bytes, None], on_close: Callable[[], None] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self._chunks = chunks
        self._on_close = on_close
        self._headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def pump() -> None:
            async with aclosing(self._chunks) as chunks:
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                    *self._headers,
                ]})
                async for data in chunks:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        pumping = asyncio.ensure_future(pump())
        watching = asyncio.ensure_future(watch())
        try:
            await asyncio.wait((pumping, watching), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pumping, watching):
                if not task.done():
                    task.cancel()
            results = await asyncio.gather(pumping, watching, return_exceptions=True)
            if self._on_close is not None:
                self._on_close()
        error = results[0]
        if isinstance(error, Exception) and not isinstance(error, OSError):
            raise error


async def closing_stream(chunks: AsyncGenerator[bytes, None], stream: Any) -> AsyncGenerator[bytes, None]:
    """``chunks``, then close the engine stream even if the body never started iterating."""
    try:
        async with aclosing(chunks) as body:
            async for data in body:
                yield data
    finally:
        await stream.aclose()
