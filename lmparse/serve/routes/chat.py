"""OpenAI ``POST /v1/chat/completions`` (``lmparse.serve.openai`` converts and answers)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import openai
from ..transport import EventStream
from .generation import Generating

__all__ = ["routes"]


def routes(generating: Generating) -> list[Route]:
    async def chat_completions(request: Request) -> Response | EventStream:
        return await generating(request, "openai", openai, lambda body, binding: openai.parse_request(
            body, binding.name, binding.reasoning_field))

    return [Route("/v1/chat/completions", chat_completions, methods=["POST"])]
