"""Anthropic ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` (``lmparse.serve.anthropic``)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import anthropic
from ..bindings import ModelBinding
from ..errors import RequestError
from ..logs import request_log
from ..signing import Signer
from ..transport import EventStream, json_response
from .generation import Generating

__all__ = ["routes"]


def routes(generating: Generating, signer: Signer) -> list[Route]:
    edge, service = generating.edge, generating.service

    async def messages(request: Request) -> Response | EventStream:
        return await generating(request, "anthropic", anthropic, lambda body, binding: anthropic.parse_request(
            body, binding.name, signer))

    def count(body: Any, binding: ModelBinding) -> int:
        """count_tokens' work, in the worker pool: the request converted, its prompt counted."""
        gen_request, _ = anthropic.parse_request(body, binding.name, signer, count_only=True)
        return binding.engine.count_prompt(gen_request)

    async def count_tokens(request: Request) -> Response:
        try:
            body, binding = await edge.model_request(request)
            counted = await service.offload(count, body, binding)
            request_log(request.scope).prompt_tokens = counted
        except RequestError as exc:
            return edge.failed(request, "anthropic", exc)
        return json_response({"input_tokens": counted})

    return [Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"])]
