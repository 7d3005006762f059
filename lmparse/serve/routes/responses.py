"""OpenAI ``POST /v1/responses``, ``POST /v1/responses/compact`` and the stored responses,
``GET`` / ``DELETE /v1/responses/{id}`` (``lmparse.serve.responses`` converts, answers and stores);
the same API over a WebSocket at ``/v1/responses`` (``responses_ws``).

A stream is written in OpenAI's dialect unless the server's default (``--responses-dialect``)
or the request's ``x-lmparse-responses-dialect`` header names the Open Responses one."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .. import responses
from ..responses.compact import compact
from ..errors import RequestError
from ..signing import Signer
from ..transport import EventStream, json_response
from .generation import Generating
from .responses_ws import responses_dialect, websocket_route

__all__ = ["routes"]


def routes(generating: Generating, signer: Signer, store: responses.ResponseStore | None,
           dialect: str = "openai", cors_origins: Sequence[str] | None = None) -> list[BaseRoute]:
    edge = generating.edge

    async def create(request: Request) -> Response | EventStream:
        try:
            chosen = responses_dialect(request.headers.get(responses.DIALECT_HEADER), dialect)
        except RequestError as exc:
            return edge.failed(request, "responses", exc)
        return await generating(request, "responses", responses, lambda body, binding: responses.parse_request(
            body, binding.name, signer, store, chosen))

    async def compaction(request: Request) -> Response:
        try:
            body, _ = await edge.model_request(request)
            return json_response(await edge.service.offload(compact, body, signer, store))
        except RequestError as exc:
            return edge.failed(request, "responses", exc)

    def stored(request: Request) -> tuple[str, dict]:
        edge.authorize(request)
        response_id = request.path_params["response_id"]
        found = store.get(response_id) if store is not None else None
        if found is None:
            raise RequestError(f"Response with id {response_id!r} not found.", "response_id", status=404,
                               kind="not_found_error")
        return response_id, found

    async def get(request: Request) -> Response:
        try:
            return json_response(stored(request)[1])
        except RequestError as exc:
            return edge.failed(request, "responses", exc)

    async def delete(request: Request) -> Response:
        try:
            response_id, _ = stored(request)
        except RequestError as exc:
            return edge.failed(request, "responses", exc)
        if store is not None:  # always: stored() found the response in it
            store.delete(response_id)
        return json_response({"id": response_id, "object": "response.deleted", "deleted": True})

    return [Route("/v1/responses", create, methods=["POST"]),
            websocket_route(generating, signer, store, dialect, cors_origins),
            Route("/v1/responses/compact", compaction, methods=["POST"]),
            Route("/v1/responses/{response_id}", get, methods=["GET"]),
            Route("/v1/responses/{response_id}", delete, methods=["DELETE"])]

