"""The HTTP server: routes, authentication, body checks, model resolution, one flow for every API.

``create_app(bindings, ...)`` builds a Starlette app serving, for one or more model
bindings (a family preset with its engine):

- OpenAI ``POST /v1/chat/completions`` and ``POST /v1/responses`` (with ``GET`` /
  ``DELETE /v1/responses/{id}`` for stored responses),
- Anthropic ``POST /v1/messages`` and ``POST /v1/messages/count_tokens``,
- ``GET /v1/models`` and ``/v1/models/{id}`` (OpenAI's shape, Anthropic's when the client
  sends ``anthropic-version``), ``/health`` and Prometheus ``/metrics``.

Every request is validated, its prompt prepared and its parser built before the first
byte is sent, so a bad request is a clean 4xx and never half a stream.  Every answer is
JSON in the path's API shape (``transport.error_response``), 404 and 405 included, and
each request gets one access log line (``logs.AccessLog``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from contextlib import asynccontextmanager
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import anthropic, openai, responses
from .bindings import ModelBinding, simulated_binding, upstream_binding
from .errors import RequestError, internal_message, public
from .guards import with_guards
from .inflight import SHUTTING_DOWN, InFlight
from .readiness import Readiness
from .intake import read_json
from .logs import AccessLog, request_log
from .metrics import Metrics, Sample
from .models import ModelNames, anthropic_model, openai_model
from .runner import ChatRunner
from .signing import Signer
from .tool_choice import enforce
from .transport import EventStream, anthropic_path, closing_stream, error_response, json_response

__all__ = ["ModelBinding", "create_app", "simulated_binding", "upstream_binding", "DEFAULT_MAX_BODY_BYTES",
           "DEFAULT_MAX_CONCURRENCY", "DEFAULT_MAX_MODEL_LEN", "DEFAULT_BODY_TIMEOUT"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_CONCURRENCY = 256  # generations at once; more are answered 503 with Retry-After
DEFAULT_MAX_MODEL_LEN = 131072  # tokens: the bound on a request's max_tokens unless --max-model-len says
DEFAULT_BODY_TIMEOUT = 30.0  # seconds a request body may pause between two parts (--timeout-body)
WORKER_THREADS = 4  # the pool that keeps request decoding and prompt rendering off the event loop
_T = TypeVar("_T")
_IGNORED_TOOLS_HEADER = "x-lmparse-ignored-tools"
_TOOL_TYPE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _ignored_tools(api: str, kinds: list[str], warned: set[str]) -> dict[str, str]:
    """Hosted tools a request offered that no local model can run: a header, and a
    warning the first time each kind is seen.  Kinds are client text: only tool-type
    shaped names are repeated (a header never carries CR/LF), at most 16 per response,
    and the warned-about set stays small whatever clients invent."""
    shown = [k if _TOOL_TYPE.fullmatch(k) else "other" for k in dict.fromkeys(kinds)][:16]
    if not shown:
        return {}
    for kind in shown:
        if kind not in warned and len(warned) < 64:
            warned.add(kind)
            logger.warning("%s: tools of type %r are hosted tools no local model can run; they are not "
                           "offered to the model (header %s)", api, kind, _IGNORED_TOOLS_HEADER)
    return {_IGNORED_TOOLS_HEADER: ",".join(dict.fromkeys(shown))}


def _check_limit(api: str, body: dict, max_tokens: int | None, max_model_len: int) -> None:
    """A token limit beyond the model's context is a 400 naming the API's own field."""
    if max_tokens is None or max_tokens <= max_model_len:
        return
    field = {"anthropic": "max_tokens", "responses": "max_output_tokens"}.get(api) or (
        "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens")
    raise RequestError(f"{field} must be at most {max_model_len} (the model's context length, "
                       f"--max-model-len), got {max_tokens}", field)


def _engine_counters(binding: ModelBinding, stats: Callable[[], dict[str, int]]) -> Callable[[], list[Sample]]:
    """A metrics collector for an engine's own counters, read at scrape time."""
    def collect() -> list[Sample]:
        return [(f"lmparse_engine_{key}_total", f"Engine counter: {key.replace('_', ' ')}.", {"model": binding.name},
                 value) for key, value in stats().items()]
    return collect


def _loop_tasks() -> list[Sample]:
    """The event loop's task count, read at scrape time (a leak shows as growth at rest)."""
    try:
        return [("lmparse_event_loop_tasks", "", {}, len(asyncio.all_tasks()))]
    except RuntimeError:  # rendered outside the server's loop (a test, a tool)
        return []


class _Server:
    def __init__(self, bindings: list[ModelBinding], api_key: str | None, max_body_bytes: int, metrics: Metrics,
                 signer: Signer, store: responses.ResponseStore | None,
                 max_concurrency: int = DEFAULT_MAX_CONCURRENCY, max_model_len: int = DEFAULT_MAX_MODEL_LEN,
                 metrics_key: bool = False, body_timeout: float = DEFAULT_BODY_TIMEOUT) -> None:
        if not bindings:
            raise ValueError("no model to serve")
        self.names = ModelNames(bindings)
        self.api_key = api_key.encode() if api_key else None
        self.max_body_bytes = max_body_bytes
        self.max_model_len = max_model_len
        self.in_flight = InFlight(max_concurrency)
        self.metrics_key = metrics_key
        self.body_timeout = body_timeout
        # Decoding, validation, prompt rendering and tokenization run here, not on the loop.
        self.workers = ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="lmparse-work")
        self.metrics = metrics
        self.signer = signer
        self.store = store
        self.created = int(time.time())
        self._warned_tools: set[str] = set()
        self._readiness = {b.name: Readiness(b.engine) for b in bindings if hasattr(b.engine, "url")}
        metrics.add_collector(_loop_tasks)
        for b in bindings:
            stats = getattr(b.engine, "stats", None)
            if stats is not None:
                metrics.add_collector(_engine_counters(b, stats))

    # -- shared request handling --

    def _authorize(self, request: Request) -> None:
        if self.api_key is None:
            return
        given = request.headers.get("x-api-key")
        if given is None:
            auth = request.headers.get("authorization", "")
            given = auth[7:] if auth[:7].lower() == "bearer " else ""
        if not hmac.compare_digest(given.encode(), self.api_key):
            raise RequestError("invalid or missing API key", status=401, kind="authentication_error")

    def _binding(self, model: Any) -> ModelBinding:
        binding = self.names.resolve(model)
        if binding is None:
            raise RequestError(f"model {model!r} is not served here; available: {self.names.served()}",
                               "model", status=404, kind="not_found_error")
        return binding

    def _failed(self, request: Request, api: str, exc: RequestError) -> Response:
        """The error answer; its detail goes to the access line (only there for a 5xx)."""
        self.metrics.inc("lmparse_request_errors_total", api=api, status=str(exc.status))
        log = request_log(request.scope)
        log.reason = exc.message
        return error_response(public(exc, log.request_id), anthropic_path(request.url.path, request.headers))

    async def _model_request(self, request: Request) -> tuple[Any, ModelBinding]:
        """An authorized JSON body and the binding its ``model`` names (noted for the access log)."""
        self._authorize(request)
        body = await read_json(request, self.max_body_bytes, self.body_timeout, self.offload)
        model = body.get("model") if isinstance(body, dict) else None
        binding = self._binding(model)
        log = request_log(request.scope)
        log.family = binding.family.name
        log.model = model if isinstance(model, str) else binding.name
        return body, binding

    async def _generate(self, request: Request, api: str, module: Any, parse: Callable) -> Any:
        """At most ``max_concurrency`` generations at once; a request over it is a 503 with
        ``Retry-After`` in the API's error shape (a stream holds its slot until it closes)."""
        refused = self.in_flight.refusal()
        if refused is not None:
            self.metrics.inc("lmparse_request_errors_total", api=api, status="503")
            request_log(request.scope).reason = refused.message
            return error_response(refused, anthropic_path(request.url.path, request.headers),
                                  headers={"Retry-After": "1"})
        self.in_flight.take()
        response = None
        try:
            response = await self._start_generation(request, api, module, parse)
            return response
        finally:
            if not isinstance(response, EventStream):
                self.in_flight.give_back()  # a stream gives its slot back when it closes

    def _prepare(self, api: str, parse: Callable, body: Any,
                 binding: ModelBinding) -> tuple[Any, Any, Any, Any, Any]:
        """The CPU-heavy part of a generation's start, run off the event loop: the request
        checked and converted, tool_choice enforced, its parser made, the prompt rendered
        and counted."""
        gen_request, opts = parse(body, binding)
        _check_limit(api, body, gen_request.max_tokens, self.max_model_len)
        gen_request, check = enforce(gen_request, binding.family, binding.engine.name)
        stream = binding.engine.start(gen_request)
        parser = binding.new_parser(gen_request.parser_request, stream.prompt_tail)
        return gen_request, opts, parser, stream, check

    async def offload(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` in the bounded worker pool, so the event loop keeps serving meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.workers, fn, *args)

    def _count(self, body: Any, binding: ModelBinding) -> int:
        """count_tokens' work, in the worker pool: the request converted, its prompt counted."""
        gen_request, _ = anthropic.parse_request(body, binding.name, self.signer, count_only=True)
        return binding.engine.count_prompt(gen_request)

    def _closed(self, runner: ChatRunner) -> Callable[[], None]:
        def closed() -> None:
            self.in_flight.give_back()
            self.in_flight.done(runner)
            self.metrics.inc("lmparse_requests_in_flight", -1)
        return closed

    async def _start_generation(self, request: Request, api: str, module: Any, parse: Callable) -> Any:
        """The flow every generating route shares: check, convert, start, then stream or fold."""
        log = request_log(request.scope)
        try:
            body, binding = await self._model_request(request)
            gen_request, opts, parser, stream, check = await self.offload(self._prepare, api, parse, body, binding)
            # An upstream engine's failure is a 502 before any byte; a client that leaves while
            # the engine has not answered yet, or the end of a shutdown's grace, stops the wait.
            opened = await _unless_client_leaves(request, stream.open(), self.in_flight.ended)
            if opened is _CLIENT_LEFT or opened is _STOPPED:
                await stream.aclose()
                if opened is _STOPPED:
                    raise RequestError(SHUTTING_DOWN, status=503, kind="server_error")
                log.reason = "the client went away before the engine answered"
                return Response(status_code=499)
        except RequestError as exc:
            return self._failed(request, api, exc)
        headers = _ignored_tools(api, getattr(opts, "ignored_tools", []), self._warned_tools)
        self.metrics.inc("lmparse_requests_total", api=api, stream=str(opts.stream).lower())
        self.metrics.inc("lmparse_requests_in_flight")
        runner = log.runner = ChatRunner(stream, parser, self.metrics, log.request_id, check)
        self.in_flight.track(runner)
        stream.bind_usage(runner.usage)  # the upstream's own prompt count, known at the end
        if opts.stream:
            return EventStream(closing_stream(module.stream_response(runner, opts), stream),
                               on_close=self._closed(runner), headers=headers)
        try:
            answer = await _unless_client_leaves(request, module.complete_response(runner, opts))
            if answer is _CLIENT_LEFT:
                log.reason = "the client went away; generation cancelled"
                return Response(status_code=499)  # nobody reads it: the code is for the access line
            return json_response(answer, headers=headers)
        except RequestError as exc:  # the engine failed, or the server is shutting down
            return self._failed(request, api, exc)
        except Exception as exc:
            logger.exception("request %s: generation failed", log.request_id)
            return self._failed(request, api, RequestError(f"generation failed: {exc}", status=500,
                                                           kind="server_error"))
        finally:
            self.in_flight.done(runner)
            self.metrics.inc("lmparse_requests_in_flight", -1)

    # -- generating routes --

    async def chat_completions(self, request: Request) -> Any:
        return await self._generate(request, "openai", openai, lambda body, binding: openai.parse_request(
            body, binding.name, binding.reasoning_field))

    async def responses(self, request: Request) -> Any:
        return await self._generate(request, "responses", responses, lambda body, binding: responses.parse_request(
            body, binding.name, self.signer, self.store))

    async def messages(self, request: Request) -> Any:
        return await self._generate(request, "anthropic", anthropic, lambda body, binding: anthropic.parse_request(
            body, binding.name, self.signer))

    async def count_tokens(self, request: Request) -> Response:
        try:
            body, binding = await self._model_request(request)
            count = await self.offload(self._count, body, binding)
            request_log(request.scope).prompt_tokens = count
        except RequestError as exc:
            return self._failed(request, "anthropic", exc)
        return json_response({"input_tokens": count})

    # -- stored responses --

    def _stored(self, request: Request) -> tuple[str, dict | None]:
        self._authorize(request)
        response_id = request.path_params["response_id"]
        found = self.store.get(response_id) if self.store is not None else None
        if found is None:
            raise RequestError(f"Response with id {response_id!r} not found.", "response_id", status=404,
                               kind="not_found_error")
        return response_id, found

    async def response_get(self, request: Request) -> Response:
        try:
            return json_response(self._stored(request)[1])
        except RequestError as exc:
            return self._failed(request, "responses", exc)

    async def response_delete(self, request: Request) -> Response:
        try:
            response_id, _ = self._stored(request)
        except RequestError as exc:
            return self._failed(request, "responses", exc)
        if self.store is not None:  # always: _stored found the response in it
            self.store.delete(response_id)
        return json_response({"id": response_id, "object": "response.deleted", "deleted": True})

    # -- models, health, metrics --

    async def models(self, request: Request) -> Response:
        try:
            self._authorize(request)
        except RequestError as exc:
            return self._failed(request, "models", exc)
        listed = self.names.listed()
        if "anthropic-version" in request.headers:
            data = [anthropic_model(name, b, self.created) for name, b in listed]
            return json_response({"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})
        return json_response({"object": "list", "data": [openai_model(name, b, self.created) for name, b in listed]})

    async def model(self, request: Request) -> Response:
        model_id = request.path_params["model_id"]
        try:
            self._authorize(request)
            binding = self._binding(model_id)
        except RequestError as exc:
            return self._failed(request, "models", exc)
        shape = anthropic_model if "anthropic-version" in request.headers else openai_model
        return json_response(shape(model_id, binding, self.created))

    async def _health_body(self) -> tuple[bool, dict[str, Any]]:
        states = {name: await check.state() for name, check in self._readiness.items()}
        ready = all(state == "ready" for state in states.values())
        body: dict[str, Any] = {"status": "ok", "ready": ready, "models": [b.name for b in self.names.bindings]}
        if states:
            body["upstreams"] = states  # by model name: an engine's URL is never shown
        return ready, body

    async def health(self, request: Request) -> Response:
        """Liveness: 200 while the process serves, with each upstream engine's readiness."""
        return json_response((await self._health_body())[1])

    async def ready(self, request: Request) -> Response:
        """Readiness, for a load balancer: 200 when every upstream engine is ready, else 503."""
        ready, body = await self._health_body()
        return json_response(body, status=200 if ready else 503)

    async def metrics_text(self, request: Request) -> Response:
        if self.metrics_key:
            try:
                self._authorize(request)
            except RequestError as exc:
                return self._failed(request, "metrics", exc)
        return Response(self.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


_CLIENT_LEFT = object()
_STOPPED = object()


async def _unless_client_leaves(request: Request, work: Awaitable[Any], stop: asyncio.Event | None = None) -> Any:
    """``await work``, cancelled when the client disconnects first (then ``_CLIENT_LEFT``)
    or ``stop`` is set first (then ``_STOPPED``): a non-streaming client that gives up stops
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
        return _STOPPED if stop is not None and stop.is_set() else _CLIENT_LEFT
    return task.result()


def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no route) and 405 (wrong method), as JSON in the path's API shape."""
    if not isinstance(exc, HTTPException):  # never: registered for HTTPException (Starlette types it as Exception)
        return _internal_error(request, exc)
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


def _internal_error(request: Request, exc: Exception) -> Response:
    log = request_log(request.scope)
    logger.error("request %s: unhandled error on %s %s", log.request_id, request.method, request.url.path,
                 exc_info=exc)
    log.reason = f"{type(exc).__name__}: {exc}"
    return error_response(RequestError(internal_message(log.request_id), status=500, kind="server_error"),
                          anthropic_path(request.url.path, request.headers))


def create_app(bindings: list[ModelBinding], api_key: str | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, metrics: Metrics | None = None,
               on_startup: Callable[[], None] | None = None, signing_key: str | None = None,
               response_store_bytes: int = responses.DEFAULT_STORE_BYTES,
               max_concurrency: int = DEFAULT_MAX_CONCURRENCY, max_model_len: int = DEFAULT_MAX_MODEL_LEN,
               allowed_hosts: Collection[str] | None = None, cors_origins: Sequence[str] | None = None,
               metrics_key: bool = False, body_timeout: float = DEFAULT_BODY_TIMEOUT) -> Any:
    """The ASGI app (Starlette behind the guards, inside the access log).  ``response_store_bytes``
    0 stores no responses (``previous_response_id`` then always misses); ``allowed_hosts`` None
    answers any Host header (``guards.default_allowed_hosts`` gives the loopback default);
    ``metrics_key`` puts ``/metrics`` behind the API key.  The app's ``shut_down(grace)``
    begins a graceful shutdown (``lmparse serve`` calls it on SIGTERM / Ctrl-C)."""
    store = responses.ResponseStore(response_store_bytes) if response_store_bytes > 0 else None
    server = _Server(bindings, api_key, max_body_bytes, metrics or Metrics(), Signer(signing_key), store,
                     max_concurrency, max_model_len, metrics_key, body_timeout)
    routes = [
        Route("/v1/chat/completions", server.chat_completions, methods=["POST"]),
        Route("/v1/responses", server.responses, methods=["POST"]),
        Route("/v1/responses/{response_id}", server.response_get, methods=["GET"]),
        Route("/v1/responses/{response_id}", server.response_delete, methods=["DELETE"]),
        Route("/v1/messages", server.messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", server.count_tokens, methods=["POST"]),
        Route("/v1/models", server.models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", server.model, methods=["GET"]),
        Route("/health", server.health, methods=["GET"]),
        Route("/ready", server.ready, methods=["GET"]),
        Route("/metrics", server.metrics_text, methods=["GET"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        yield
        for binding in bindings:
            await binding.engine.aclose()
        server.workers.shutdown(wait=False, cancel_futures=True)

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: _http_error, Exception: _internal_error})
    app.state.server = server
    outer = AccessLog(with_guards(app, allowed_hosts, cors_origins))
    outer.shut_down = server.in_flight.shut_down
    return outer
