"""The Responses API over a WebSocket at ``/v1/responses`` (the Open Responses transport).

Each text message the client sends is a turn: ``{"type": "response.create", ...}`` with the
fields of a ``POST /v1/responses`` body (``stream`` is implied).  The turn's events go back
one per message, exactly the streaming events of HTTP (the server's ``--responses-dialect``
or the handshake's ``x-lmparse-responses-dialect`` header picks their names), ending with
its terminal event; turns run one after the other, never two at once.

The connection keeps the conversation of its most recent response, ``store`` or not, so a
``store: false`` chain continues on the same socket; any other ``previous_response_id`` is
read from the response store, else the turn fails with ``previous_response_not_found``.
A failed continuation forgets the response it continued.  A failure is one message,
``{"type": "error", "status": N, "error": {"type", "code", "message", "param"}}``, and the
connection stays open for the next turn.  A connection ends after 60 minutes with
``websocket_connection_limit_reached``.

The handshake is checked as an HTTP request is: the API key (``Authorization`` or
``x-api-key``), and a browser's ``Origin`` only where ``--cors-origins`` allows it (a
WebSocket is not covered by CORS, so a page on any site could otherwise drive the server).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from contextlib import aclosing
from typing import Any

import orjson
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import responses
from ..errors import RequestError, public
from ..logs import RequestLog, access_line, new_request_id
from ..signing import Signer
from .generation import Generating

__all__ = ["websocket_route", "CONNECTION_SECONDS"]

logger = logging.getLogger("lmparse.serve")

CONNECTION_SECONDS = 60 * 60  # the spec's limit on one connection
_POLICY_VIOLATION = 1008


def _envelope(exc: RequestError) -> str:
    return orjson.dumps({"type": "error", "status": exc.status, "error": {
        "type": exc.kind, "code": exc.code, "message": exc.message, "param": exc.param}}).decode()


def _turn_body(text: str) -> dict[str, Any]:
    """A ``response.create`` message as the body of a streamed ``POST /v1/responses``."""
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise RequestError("the message is not valid JSON: send {\"type\": \"response.create\", ...}", None) from None
    if not isinstance(body, dict):
        raise RequestError("the message must be a JSON object", None)
    kind = body.pop("type", None)
    if kind != "response.create":
        raise RequestError(f"type must be 'response.create', got {kind!r}", "type")
    for field in ("stream", "stream_options"):  # HTTP's: the socket always streams
        body.pop(field, None)
    body["stream"] = True
    return body


class _Connection:
    """One socket's turns and the conversation of its latest response."""

    def __init__(self, socket: WebSocket, generating: Generating, signer: Signer,
                 store: responses.ResponseStore | None, dialect: str) -> None:
        self.socket = socket
        self.service = generating.service
        self.signer = signer
        self.store = store
        self.dialect = dialect
        self.recent: dict[str, list[dict]] = {}  # response id -> its whole conversation (one entry)

    async def turn(self, text: str) -> None:
        """One ``response.create`` message answered, and its access line (``WS /v1/responses``)."""
        record, started, status = RequestLog(new_request_id()), time.perf_counter(), 499
        try:
            status = await self._answer(text, record)
        except (WebSocketDisconnect, OSError):
            record.reason = "the client went away"
            raise
        finally:
            access_line("WS", "/v1/responses", record, status, time.perf_counter() - started)

    async def _answer(self, text: str, record: RequestLog) -> int:
        """The turn's status: 200, or a failure's, sent as an error envelope."""
        previous = None
        try:
            body = _turn_body(text)
            previous = body.get("previous_response_id")
            await self._generate(body, record)
            return 200
        except RequestError as exc:
            error = exc
        except (WebSocketDisconnect, OSError):
            raise
        except Exception as exc:
            logger.exception("websocket turn %s: generation failed", record.request_id)
            error = RequestError(f"generation failed: {exc}", status=500, kind="server_error")
        record.reason = error.message
        if isinstance(previous, str):
            self.recent.pop(previous, None)  # a failed continuation forgets what it continued
        await self.socket.send_text(_envelope(public(error, record.request_id)))
        return error.status

    async def _generate(self, body: dict[str, Any], record: RequestLog) -> None:
        service = self.service
        refused = service.admit()
        if refused is not None:
            raise refused
        generation = None
        try:
            binding = service.binding(body.get("model"))
            record.family = binding.family.name
            record.model = body["model"] if isinstance(body.get("model"), str) else binding.name

            def parse(body: Any, binding: Any) -> Any:
                return responses.parse_request(body, binding.name, self.signer, self.store, self.dialect, self.recent)

            generation = await service.offload(service.prepare, "responses", parse, body, binding)
            await generation.stream.open()
            opts = generation.options
            runner = record.runner = service.run(generation, "responses", record.request_id)
            try:
                builder = responses.ResponseBuilder(opts, emit=True)
                async with aclosing(responses.response_events(runner, opts, builder)) as batches:
                    async for events in batches:
                        for event in events:
                            await self.socket.send_text(orjson.dumps(event).decode())
            finally:
                service.finished(runner)
            status = builder.response["status"]
            if status == "failed":
                raise _Failed()
            self.recent = {builder.id: opts.conversation + [builder.turn()]}
        except _Failed:
            if isinstance(body.get("previous_response_id"), str):
                self.recent.pop(body["previous_response_id"], None)
        finally:
            if generation is not None:
                await generation.stream.aclose()
            service.release()


class _Failed(Exception):
    """The turn ended with ``response.failed`` (already sent)."""


def websocket_route(generating: Generating, signer: Signer, store: responses.ResponseStore | None,
                    dialect: str, cors_origins: Sequence[str] | None) -> WebSocketRoute:
    edge = generating.edge
    origins = frozenset(cors_origins or ())

    async def endpoint(socket: WebSocket) -> None:
        origin = socket.headers.get("origin")
        if origin is not None and origin not in origins and "*" not in origins:
            logger.warning("websocket /v1/responses: origin %r refused (--cors-origins)", origin[:200])
            await socket.close(_POLICY_VIOLATION)
            return
        try:
            edge.authorize(socket)
            chosen = responses_dialect(socket.headers.get(responses.DIALECT_HEADER), dialect)
        except RequestError as exc:
            await socket.accept()
            await socket.send_text(_envelope(exc))
            await socket.close(_POLICY_VIOLATION)
            return
        await socket.accept()
        connection = _Connection(socket, generating, signer, store, chosen)
        deadline = time.monotonic() + CONNECTION_SECONDS
        try:
            while True:
                try:
                    text = await asyncio.wait_for(socket.receive_text(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    limit = RequestError("the WebSocket connection reached its 60-minute limit; open a new one",
                                         None, status=400, code="websocket_connection_limit_reached")
                    await socket.send_text(_envelope(limit))
                    await socket.close()
                    return
                await connection.turn(text)
        except (WebSocketDisconnect, OSError):  # the client left, between turns or in one
            return

    return WebSocketRoute("/v1/responses", endpoint)


def responses_dialect(value: str | None, default: str) -> str:
    """The dialect a request's header names (``default`` without one); another value is a 400."""
    if value is None:
        return default
    value = value.strip().lower()
    if value not in responses.DIALECTS:
        raise RequestError(f"header {responses.DIALECT_HEADER} must be one of {', '.join(responses.DIALECTS)}",
                           responses.DIALECT_HEADER)
    return value
