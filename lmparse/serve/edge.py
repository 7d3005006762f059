"""The HTTP edge every route shares: the API key, the JSON body and its model, errors in the API's shape.

``Edge`` authorizes a request (``x-api-key`` or ``Authorization: Bearer``, compared in
constant time), reads its JSON body within the size and pace limits (``intake.read_json``,
decoded in the service's worker pool) and finds the binding its ``model`` names, noting
both on the access log line; ``failed`` answers a ``RequestError`` in the path's API shape
(``transport.error_response``) and counts it.  ``unless_client_leaves`` awaits work that a
client's disconnect (or the end of a shutdown's grace) cancels.  ``http_error`` and
``internal_error`` are the app's handlers for Starlette's own 404 / 405 and for a crash.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from .bindings import ModelBinding
from .errors import RequestError, internal_message, public
from .intake import read_json
from .logs import request_log
from .service import GenerationService
from .transport import anthropic_path, error_response

__all__ = ["Edge", "unless_client_leaves", "CLIENT_LEFT", "STOPPED", "http_error", "internal_error",
           "DEFAULT_MAX_BODY_BYTES", "DEFAULT_BODY_TIMEOUT"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0  # seconds a request body may pause between two parts (--timeout-body)
CLIENT_LEFT = object()
STOPPED = object()


class Edge:
    def __init__(self, service: GenerationService, api_key: str | None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 body_timeout: float = DEFAULT_BODY_TIMEOUT) -> None:
        self.service = service
        self.api_key = api_key.encode() if api_key else None
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout

    def authorize(self, request: HTTPConnection) -> None:
        if self.api_key is None:
            return
        given = request.headers.get("x-api-key")
        if given is None:
            auth = request.headers.get("authorization", "")
            given = auth[7:] if auth[:7].lower() == "bearer " else ""
        if not hmac.compare_digest(given.encode(), self.api_key):
            raise RequestError("invalid or missing API key", status=401, kind="authentication_error")

    def failed(self, request: Request, api: str, exc: RequestError, headers: dict[str, str] | None = None) -> Response:
        """The error answer; its detail goes to the access line (only there for a 5xx)."""
        self.service.metrics.inc("lmparse_request_errors_total", api=api, status=str(exc.status))
        log = request_log(request.scope)
        log.reason = exc.message
        return error_response(public(exc, log.request_id), anthropic_path(request.url.path, request.headers),
                              headers=headers)

    async def model_request(self, request: Request) -> tuple[Any, ModelBinding]:
        """An authorized JSON body and the binding its ``model`` names (noted for the access log)."""
        self.authorize(request)
        body = await read_json(request, self.max_body_bytes, self.body_timeout, self.service.offload)
        model = body.get("model") if isinstance(body, dict) else None
        binding = self.service.binding(model)
        log = request_log(request.scope)
        log.family = binding.family.name
        log.model = model if isinstance(model, str) else binding.name
        return body, binding


async def unless_client_leaves(request: Request, work: Awaitable[Any], stop: asyncio.Event | None = None) -> Any:
    """``await work``, cancelled when the client disconnects first (then ``CLIENT_LEFT``)
    or ``stop`` is set first (then ``STOPPED``): a non-streaming client that gives up stops
    its generation, as a streaming one does."""

    async def left() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task = asyncio.ensure_future(work)
    watchers: list[asyncio.Future[Any]] = [asyncio.ensure_future(left())]
    if stop is not None:
        watchers.append(asyncio.ensure_future(stop.wait()))
    try:
        await asyncio.wait((task, *watchers), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watcher in watchers:
            watcher.cancel()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, *watchers, return_exceptions=True)
    if task.cancelled():
        return STOPPED if stop is not None and stop.is_set() else CLIENT_LEFT
    return task.result()


def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no route) and 405 (wrong method), as JSON in the path's API shape."""
    if not isinstance(exc, HTTPException):  # never: registered for HTTPException (Starlette types it as Exception)
        return internal_error(request, exc)
    if exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    elif exc.status_code == 404:
        message = f"no route {request.method} {request.url.path}"
    else:
        message = str(exc.detail)
    request_log(request.scope).reason = message
    error = RequestError(message, status=exc.status_code,
                         kind="not_found_error" if exc.status_code == 404 else "invalid_request_error")
    error.param = None  # about the route, not a field of the body
    return error_response(error, anthropic_path(request.url.path, request.headers), headers=exc.headers)


def internal_error(request: Request, exc: Exception) -> Response:
    log = request_log(request.scope)
    logger.error("request %s: unhandled error on %s %s", log.request_id, request.method, request.url.path,
                 exc_info=exc)
    log.reason = f"{type(exc).__name__}: {exc}"
    return error_response(RequestError(internal_message(log.request_id), status=500, kind="server_error"),
                          anthropic_path(request.url.path, request.headers))
