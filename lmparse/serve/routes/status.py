"""What is served and how it is doing: ``/v1/models`` (OpenAI's shape, Anthropic's when the
client sends ``anthropic-version``), ``/health`` (liveness), ``/ready`` (readiness, for a load
balancer) and Prometheus ``/metrics`` (behind the API key with ``metrics_key``)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..edge import Edge
from ..errors import RequestError
from ..models import anthropic_model, openai_model
from ..readiness import Readiness
from ..transport import json_response

__all__ = ["routes"]


def routes(edge: Edge, metrics_key: bool = False) -> list[Route]:
    service = edge.service
    names, created = service.names, service.created
    readiness = {b.name: Readiness(b.engine) for b in names.bindings if hasattr(b.engine, "url")}

    async def models(request: Request) -> Response:
        try:
            edge.authorize(request)
        except RequestError as exc:
            return edge.failed(request, "models", exc)
        listed = names.listed()
        if "anthropic-version" in request.headers:
            data = [anthropic_model(name, b, created) for name, b in listed]
            return json_response({"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})
        return json_response({"object": "list", "data": [openai_model(name, b, created) for name, b in listed]})

    async def model(request: Request) -> Response:
        model_id = request.path_params["model_id"]
        try:
            edge.authorize(request)
            binding = service.binding(model_id)
        except RequestError as exc:
            return edge.failed(request, "models", exc)
        shape = anthropic_model if "anthropic-version" in request.headers else openai_model
        return json_response(shape(model_id, binding, created))

    async def health_body() -> tuple[bool, dict[str, Any]]:
        states = {name: await check.state() for name, check in readiness.items()}
        ready = all(state == "ready" for state in states.values())
        body: dict[str, Any] = {"status": "ok", "ready": ready, "models": [b.name for b in names.bindings]}
        if states:
            body["upstreams"] = states  # by model name: an engine's URL is never shown
        return ready, body

    async def health(request: Request) -> Response:
        """Liveness: 200 while the process serves, with each upstream engine's readiness."""
        return json_response((await health_body())[1])

    async def ready(request: Request) -> Response:
        """Readiness, for a load balancer: 200 when every upstream engine is ready, else 503."""
        is_ready, body = await health_body()
        return json_response(body, status=200 if is_ready else 503)

    async def metrics_text(request: Request) -> Response:
        if metrics_key:
            try:
                edge.authorize(request)
            except RequestError as exc:
                return edge.failed(request, "metrics", exc)
        return Response(service.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return [Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model_id:path}", model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/ready", ready, methods=["GET"]),
            Route("/metrics", metrics_text, methods=["GET"])]
