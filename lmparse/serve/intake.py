"""Reading a request body: its type, size and pace checked, its JSON decoded off the loop.

Every check is a ``RequestError`` in the API's shape: 415 for a body that is not typed
JSON, 413 over the size limit, 408 for a body that stalls, 400 for JSON that does not
decode or nests deeper than ``MAX_NESTING``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from starlette.requests import Request

from .errors import RequestError

__all__ = ["read_json", "MAX_NESTING"]

# Real requests nest JSON a few levels (a tool schema ~10); a bound keeps every recursive
# reader after the body (content blocks, schemas, templates) far from Python's stack limit.
MAX_NESTING = 100
_DRAIN_FACTOR = 4  # a body over the limit is read (and dropped) up to this many times the limit


async def read_json(request: Request, max_bytes: int, timeout: float,
                    offload: Callable[..., Awaitable[Any]]) -> Any:
    """The request's body as JSON: typed ``application/json`` (else 415), at most ``max_bytes``
    (else 413), each part arriving within ``timeout`` seconds (else 408), decoded by
    ``offload`` (the worker pool)."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise RequestError(f"Content-Type must be application/json, got {media or 'none'!r}", "content-type",
                           status=415)
    length = request.headers.get("content-length")
    declared = int(length) if length is not None and length.isdigit() else None
    parts, size = [], 0
    chunks = _paced(request.stream(), timeout)
    async for part in chunks:
        size += len(part)
        if size > max_bytes or (declared or 0) > max_bytes:
            break
        parts.append(part)
    else:
        return await offload(_decoded, b"".join(parts))
    # Too large: the rest is read and thrown away (up to a bound), so the client, still
    # sending, reads the 413 instead of a connection reset by unread data.
    async for part in chunks:
        size += len(part)
        if size > _DRAIN_FACTOR * max_bytes:
            break
    raise RequestError(f"request body exceeds {max_bytes} bytes", status=413)


async def _paced(parts: AsyncIterator[bytes], timeout: float) -> AsyncIterator[bytes]:
    """``parts``, each arriving within ``timeout`` seconds of the last (else a 408): a body
    trickled a byte at a time cannot hold a connection and a handler for ever."""
    while True:
        try:
            part = await asyncio.wait_for(parts.__anext__(), timeout)
        except StopAsyncIteration:
            return
        except asyncio.TimeoutError:
            raise RequestError(f"the request body stalled: nothing arrived for {timeout:g} s", status=408) from None
        yield part


def _decoded(data: bytes) -> Any:
    """A request body as JSON, no deeper than ``MAX_NESTING`` (run in the worker pool)."""
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise RequestError(f"the request body is not valid JSON ({exc})") from None
    if _nesting(body) > MAX_NESTING:
        raise RequestError(f"the request body nests JSON more than {MAX_NESTING} levels deep")
    return body


def _nesting(value: Any) -> int:
    """How deep JSON nests (one pass, no recursion): a bound for every reader after this one."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break
        stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return deepest
