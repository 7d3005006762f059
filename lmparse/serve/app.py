"""The HTTP server: routes, authentication, body limits, model bindings, SSE transport.

``create_app(bindings, ...)`` builds a Starlette app serving OpenAI
``/v1/chat/completions`` and Anthropic ``/v1/messages`` for one or more model bindings
(a family preset with its engine), plus ``/v1/models``, ``/health`` and Prometheus
``/metrics``.  Every request is validated, its prompt prepared and its parser built
before the first byte is sent, so a bad request is a clean 4xx and never half a stream.
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import logging
import time
from contextlib import aclosing, asynccontextmanager
from typing import Any, AsyncIterator, Callable

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..factory import create_parser
from ..registry import ReasoningParserManager, ToolParserManager
from ..request import ParserRequest
from ..response.base import ResponseParser
from . import anthropic, openai
from .engines.base import Engine
from .engines.simulated import SimulatedEngine
from .errors import RequestError
from .families import Family, missing_parsers
from .metrics import Metrics
from .runner import ChatRunner
from .templates import load_template
from .tokenizer import load_tokenizer, testdata_dir

__all__ = ["ModelBinding", "create_app", "simulated_binding", "upstream_binding", "DEFAULT_MAX_BODY_BYTES"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
# Response parsers that live in their own module (imported on demand: optional deps).
_PARSER_MODULES = {"gpt-oss": "lmparse.response.harmony"}


class ModelBinding:
    """One served model: a family's parsers and the engine that generates for it."""

    def __init__(self, name: str, family: Family, engine: Engine, reasoning_field: str = "reasoning_content") -> None:
        if reasoning_field not in openai.REASONING_FIELDS:
            raise ValueError(f"reasoning field must be one of {', '.join(openai.REASONING_FIELDS)}")
        _require_parsers(family)
        self.name = name
        self.family = family
        self.engine = engine
        self.reasoning_field = reasoning_field

    def new_parser(self, request: ParserRequest) -> ResponseParser:
        f = self.family
        return create_parser(tool_parser=f.tool_parser, reasoning_parser=f.reasoning_parser,
                             response_parser=f.response_parser, request=request)


def _require_parsers(family: Family) -> None:
    """Import a response parser's own module if needed; refuse a family with unregistered parsers."""
    module = _PARSER_MODULES.get(family.response_parser)
    if module is not None and missing_parsers(family):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(f"family {family.name}: {exc}") from None
    missing = missing_parsers(family)
    if missing:
        raise ValueError(f"family {family.name} needs {' and '.join(missing)}, which is not registered")


def _family_markers(family: Family) -> list[str]:
    markers: list[str] = []
    if family.tool_parser and family.tool_parser in ToolParserManager:
        cls = ToolParserManager.get(family.tool_parser)
        markers += [*cls.tool_open_tags, cls.tool_close_tag or ""]
    if family.reasoning_parser and family.reasoning_parser in ReasoningParserManager:
        cls = ReasoningParserManager.get(family.reasoning_parser)
        markers += [cls.start_tag or "", cls.end_tag]
    if family.response_parser == "gpt-oss":
        markers += ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>"]
    return markers


def simulated_binding(family: Family, token_rate: float = 0.0, reasoning_field: str = "reasoning_content",
                      name: str | None = None) -> ModelBinding:
    """A family served by the simulated engine, with its real tokenizer and template when present."""
    _require_parsers(family)
    tokenizer = load_tokenizer(family.tokenizer, family.name, _family_markers(family))
    template = load_template(testdata_dir(), family.template, family.tokenizer)
    engine = SimulatedEngine(family, tokenizer, template, token_rate)
    logger.info("model %s: simulated %s, tokenizer %s, template %s", name or family.name, family.name,
                tokenizer.name, template.name if template else "ChatML fallback")
    return ModelBinding(name or family.name, family, engine, reasoning_field)


def upstream_binding(family: Family, engine: str, url: str, model: str | None = None,
                     reasoning_field: str = "reasoning_content", name: str | None = None,
                     chat_template: str | None = None, max_tokens: int | None = None,
                     transport: Any = None) -> ModelBinding:
    """A family served by a real engine at ``url`` (vllm, sglang, lmdeploy, llamacpp); lmparse
    renders the prompt with the family's chat template (or ``chat_template``, a jinja file)."""
    from pathlib import Path

    from .engines.upstream import DEFAULT_MAX_TOKENS, UpstreamEngine
    from .templates import ChatTemplate

    _require_parsers(family)
    tokenizer = load_tokenizer(family.tokenizer, family.name, _family_markers(family))
    if chat_template:
        template = ChatTemplate(Path(chat_template).read_text(encoding="utf-8"), Path(chat_template).name)
    else:
        template = load_template(testdata_dir(), family.template, family.tokenizer)
    upstream = UpstreamEngine(engine, url, family, tokenizer, template, model, max_tokens or DEFAULT_MAX_TOKENS,
                              transport=transport)
    logger.info("model %s: %s at %s (%s), template %s", name or family.name, engine, url, family.name,
                template.name if template else "ChatML fallback")
    return ModelBinding(name or family.name, family, upstream, reasoning_field)


# ---- transport -----------------------------------------------------------------------------


class EventStream:
    """An SSE response that stops generating as soon as the client goes away.

    The body is pumped in one task while another waits for ``http.disconnect``; a
    disconnect cancels the pump, which closes the chain of generators down to the engine."""

    def __init__(self, chunks: AsyncIterator[bytes], on_close: Callable[[], None] | None = None) -> None:
        self._chunks = chunks
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def pump() -> None:
            async with aclosing(self._chunks) as chunks:
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
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


async def _closing(chunks: AsyncIterator[bytes], stream: Any) -> AsyncIterator[bytes]:
    """``chunks``, then close the engine stream even if the body never started iterating."""
    try:
        async with aclosing(chunks) as body:
            async for data in body:
                yield data
    finally:
        await stream.aclose()


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


# ---- the application -------------------------------------------------------------------------


class _Server:
    def __init__(self, bindings: list[ModelBinding], api_key: str | None, max_body_bytes: int, metrics: Metrics) -> None:
        if not bindings:
            raise ValueError("no model to serve")
        self.bindings = {b.name: b for b in bindings}
        self.api_key = api_key.encode() if api_key else None
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.created = int(time.time())
        for b in bindings:
            stats = getattr(b.engine, "stats", None)
            if stats is not None:
                metrics.add_collector(lambda b=b, stats=stats: [
                    (f"lmparse_engine_{key}_total", f"Engine counter: {key.replace('_', ' ')}.", {"model": b.name}, value)
                    for key, value in stats().items()])

    # -- shared request handling --

    def _authorized(self, request: Request) -> bool:
        if self.api_key is None:
            return True
        given = request.headers.get("x-api-key")
        if given is None:
            auth = request.headers.get("authorization", "")
            given = auth[7:] if auth[:7].lower() == "bearer " else ""
        return hmac.compare_digest(given.encode(), self.api_key)

    async def _body(self, request: Request) -> Any:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            raise RequestError(f"request body exceeds {self.max_body_bytes} bytes", status=413)
        parts, size = [], 0
        async for part in request.stream():
            size += len(part)
            if size > self.max_body_bytes:
                raise RequestError(f"request body exceeds {self.max_body_bytes} bytes", status=413)
            parts.append(part)
        try:
            return orjson.loads(b"".join(parts))
        except orjson.JSONDecodeError as exc:
            raise RequestError(f"the request body is not valid JSON ({exc})") from None

    def _binding(self, model: Any) -> ModelBinding:
        if len(self.bindings) == 1:
            return next(iter(self.bindings.values()))
        binding = self.bindings.get(model) if isinstance(model, str) else None
        if binding is None:
            raise RequestError(f"model {model!r} is not served here; available: {', '.join(self.bindings)}",
                               "model", status=404, kind="not_found_error")
        return binding

    async def _chat(self, request: Request, api: Any, parse: Callable, error: Callable) -> Any:
        name = "openai" if api is openai else "anthropic"
        if not self._authorized(request):
            self.metrics.inc("lmparse_request_errors_total", api=name, status="401")
            return error(RequestError("invalid or missing API key", status=401, kind="authentication_error"))
        try:
            body = await self._body(request)
            binding = self._binding(body.get("model") if isinstance(body, dict) else None)
            gen_request, opts = parse(body, binding)
            parser = binding.new_parser(gen_request.parser_request)
            stream = binding.engine.start(gen_request)
            opening = getattr(stream, "open", None)
            if opening is not None:  # an upstream engine: its failure is a 502 before any byte
                await opening()
        except RequestError as exc:
            self.metrics.inc("lmparse_request_errors_total", api=name, status=str(exc.status))
            return error(exc)
        self.metrics.inc("lmparse_requests_total", api=name, stream=str(opts.stream).lower())
        self.metrics.inc("lmparse_requests_in_flight")
        runner = ChatRunner(stream, parser, self.metrics)
        bind_usage = getattr(stream, "bind_usage", None)
        if bind_usage is not None:  # the upstream's own prompt count, known at the end
            bind_usage(runner.usage)
        done = lambda: self.metrics.inc("lmparse_requests_in_flight", -1)  # noqa: E731
        if opts.stream:
            return EventStream(_closing(api.stream_response(runner, opts), stream), on_close=done)
        try:
            return _json(await api.complete_response(runner, opts))
        except Exception as exc:
            logger.exception("generation failed")
            self.metrics.inc("lmparse_request_errors_total", api=name, status="500")
            return error(RequestError(f"generation failed: {exc}", status=500, kind="server_error"))
        finally:
            done()

    # -- routes --

    async def chat_completions(self, request: Request) -> Any:
        def parse(body, binding):
            return openai.parse_request(body, binding.name, binding.reasoning_field)

        def error(exc: RequestError) -> Response:
            return _json(openai.error_body(exc.message, exc.param, exc.kind), exc.status)

        return await self._chat(request, openai, parse, error)

    async def messages(self, request: Request) -> Any:
        def parse(body, binding):
            return anthropic.parse_request(body, binding.name)

        def error(exc: RequestError) -> Response:
            kind = "api_error" if exc.kind == "server_error" else exc.kind
            return _json(anthropic.error_body(exc.message, kind), exc.status)

        return await self._chat(request, anthropic, parse, error)

    async def models(self, request: Request) -> Response:
        if not self._authorized(request):
            return _json(openai.error_body("invalid or missing API key", kind="authentication_error"), 401)
        return _json({"object": "list", "data": [
            {"id": name, "object": "model", "created": self.created, "owned_by": "lmparse",
             "family": b.family.name, "engine": b.engine.name} for name, b in self.bindings.items()]})

    async def health(self, request: Request) -> Response:
        return _json({"status": "ok", "models": list(self.bindings)})

    async def metrics_text(self, request: Request) -> Response:
        return Response(self.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


def create_app(bindings: list[ModelBinding], api_key: str | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, metrics: Metrics | None = None,
               on_startup: Callable[[], None] | None = None) -> Starlette:
    server = _Server(bindings, api_key, max_body_bytes, metrics or Metrics())
    routes = [
        Route("/v1/chat/completions", server.chat_completions, methods=["POST"]),
        Route("/v1/messages", server.messages, methods=["POST"]),
        Route("/v1/models", server.models, methods=["GET"]),
        Route("/health", server.health, methods=["GET"]),
        Route("/metrics", server.metrics_text, methods=["GET"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        yield
        for binding in bindings:
            await binding.engine.aclose()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.server = server
    return app
