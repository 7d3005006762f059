"""The HTTP server: the ASGI app, assembled from the per-API routes around one generation service.

``create_app(bindings, ...)`` builds a Starlette app serving, for one or more model
bindings (a family preset with its engine):

- OpenAI ``POST /v1/chat/completions`` and ``POST /v1/responses`` (with ``GET`` /
  ``DELETE /v1/responses/{id}`` for stored responses),
- Anthropic ``POST /v1/messages`` and ``POST /v1/messages/count_tokens``,
- ``GET /v1/models`` and ``/v1/models/{id}`` (OpenAI's shape, Anthropic's when the client
  sends ``anthropic-version``), ``/health``, ``/ready`` and Prometheus ``/metrics``.

The parts: ``service.GenerationService`` (admission, binding lookup, the engine call, the
runner), ``edge.Edge`` (API key, body, errors in the path's API shape), and one route module
per API in ``routes/``.  Every answer is JSON in the path's API shape
(``transport.error_response``), 404 and 405 included, and each request gets one access log
line (``logs.AccessLog``).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException

from . import responses
from .bindings import ModelBinding, simulated_binding, upstream_binding
from .edge import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, Edge, http_error, internal_error
from .guards import with_guards
from .logs import AccessLog
from .metrics import Metrics
from .routes import chat, messages, status
from .routes import responses as responses_routes
from .routes.generation import Generating
from .service import DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_MODEL_LEN, GenerationService
from .signing import Signer

__all__ = ["ModelBinding", "create_app", "simulated_binding", "upstream_binding", "DEFAULT_MAX_BODY_BYTES",
           "DEFAULT_MAX_CONCURRENCY", "DEFAULT_MAX_MODEL_LEN", "DEFAULT_BODY_TIMEOUT"]


def create_app(bindings: list[ModelBinding], api_key: str | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, metrics: Metrics | None = None,
               on_startup: Callable[[], None] | None = None, signing_key: str | None = None,
               response_store_bytes: int = responses.DEFAULT_STORE_BYTES,
               max_concurrency: int = DEFAULT_MAX_CONCURRENCY, max_model_len: int = DEFAULT_MAX_MODEL_LEN,
               allowed_hosts: Collection[str] | None = None, cors_origins: Sequence[str] | None = None,
               metrics_key: bool = False, body_timeout: float = DEFAULT_BODY_TIMEOUT,
               responses_dialect: str = "openai") -> Any:
    """The ASGI app (Starlette behind the guards, inside the access log).  ``response_store_bytes``
    0 stores no responses (``previous_response_id`` then always misses); ``allowed_hosts`` None
    answers any Host header (``guards.default_allowed_hosts`` gives the loopback default);
    ``metrics_key`` puts ``/metrics`` behind the API key; ``responses_dialect`` "openresponses"
    writes Responses streams as the Open Responses specification names its events.  The app's ``shut_down(grace)``
    begins a graceful shutdown (``lmparse serve`` calls it on SIGTERM / Ctrl-C)."""
    store = responses.ResponseStore(response_store_bytes) if response_store_bytes > 0 else None
    signer = Signer(signing_key)
    service = GenerationService(bindings, metrics or Metrics(), max_concurrency, max_model_len)
    edge = Edge(service, api_key, max_body_bytes, body_timeout)
    generating = Generating(edge)
    routes = [*chat.routes(generating),
              *responses_routes.routes(generating, signer, store, responses_dialect, cors_origins),
              *messages.routes(generating, signer), *status.routes(edge, metrics_key)]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        yield
        await service.aclose()

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error, Exception: internal_error})
    app.state.service = service
    outer = AccessLog(with_guards(app, allowed_hosts, cors_origins))
    outer.shut_down = service.shut_down
    return outer
