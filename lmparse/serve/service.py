"""The generation service every generating route shares: admission, binding lookup, engine call, runner.

``GenerationService`` knows nothing of HTTP.  It resolves a request's ``model`` to a
binding, admits at most ``max_concurrency`` generations at once (``InFlight``), runs the
CPU-heavy start of a generation in a bounded worker pool (the API's request converted,
its token limit checked, tool_choice enforced, the engine started, the parser made) and
makes the ``ChatRunner`` that drives the parser over the engine's chunks.  The routes
(``lmparse.serve.routes``) put it behind HTTP.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..response.base import ResponseParser
from .bindings import ModelBinding
from .engines.base import EngineStream, GenerationRequest
from .errors import RequestError
from .inflight import InFlight
from .metrics import Metrics, Sample
from .models import ModelNames
from .runner import ChatRunner
from .tool_choice import CallCheck, enforce

__all__ = ["GenerationService", "Generation", "WORKER_THREADS", "DEFAULT_MAX_CONCURRENCY", "DEFAULT_MAX_MODEL_LEN"]

DEFAULT_MAX_CONCURRENCY = 256  # generations at once; more are answered 503 with Retry-After
DEFAULT_MAX_MODEL_LEN = 131072  # tokens: the bound on a request's max_tokens unless --max-model-len says
WORKER_THREADS = 4  # the pool that keeps request decoding and prompt rendering off the event loop
_T = TypeVar("_T")
# An API's request conversion: (body, binding) -> (GenerationRequest, the API's options)
Parse = Callable[[Any, ModelBinding], tuple[GenerationRequest, Any]]


class Generation:
    """A generation ready to run: the converted request, the API's options, its parser, the
    engine's stream (not opened yet) and the check its reply must pass (tool_choice)."""

    __slots__ = ("request", "options", "parser", "stream", "check")

    def __init__(self, request: GenerationRequest, options: Any, parser: ResponseParser, stream: EngineStream,
                 check: CallCheck | None) -> None:
        self.request = request
        self.options = options
        self.parser = parser
        self.stream = stream
        self.check = check


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


class GenerationService:
    def __init__(self, bindings: list[ModelBinding], metrics: Metrics,
                 max_concurrency: int = DEFAULT_MAX_CONCURRENCY, max_model_len: int = DEFAULT_MAX_MODEL_LEN) -> None:
        if not bindings:
            raise ValueError("no model to serve")
        self.names = ModelNames(bindings)
        self.metrics = metrics
        self.max_model_len = max_model_len
        self.in_flight = InFlight(max_concurrency)
        self.created = int(time.time())
        # Decoding, validation, prompt rendering and tokenization run here, not on the loop.
        self.workers = ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="lmparse-work")
        metrics.add_collector(_loop_tasks)
        for b in bindings:
            stats = getattr(b.engine, "stats", None)
            if stats is not None:
                metrics.add_collector(_engine_counters(b, stats))

    def binding(self, model: Any) -> ModelBinding:
        """The binding ``model`` names (a 404 listing what is served when none)."""
        binding = self.names.resolve(model)
        if binding is None:
            raise RequestError(f"model {model!r} is not served here; available: {self.names.served()}",
                               "model", status=404, kind="not_found_error")
        return binding

    async def offload(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` in the bounded worker pool, so the event loop keeps serving meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.workers, fn, *args)

    # -- admission: a slot from the start until the response ends (a stream's, when it closes) --

    def admit(self) -> RequestError | None:
        """Take a slot for a new generation, or say why there is none (a 503)."""
        refused = self.in_flight.refusal()
        if refused is None:
            self.in_flight.take()
        return refused

    def release(self) -> None:
        self.in_flight.give_back()

    # -- one generation --

    def prepare(self, api: str, parse: Parse, body: Any, binding: ModelBinding) -> Generation:
        """The CPU-heavy part of a generation's start, run in the worker pool (``offload``):
        the request checked and converted, tool_choice enforced, the engine started, the
        parser made and the prompt rendered and counted."""
        request, options = parse(body, binding)
        _check_limit(api, body, request.max_tokens, self.max_model_len)
        request, check = enforce(request, binding.family, binding.engine.name, binding.response_template,
                                 getattr(binding.engine, "prompt", None))
        stream = binding.engine.start(request)
        parser = binding.new_parser(request.parser_request, stream.prompt_tail)
        return Generation(request, options, parser, stream, check)

    def run(self, generation: Generation, api: str, request_id: str) -> ChatRunner:
        """The runner of an opened generation, counted in flight until ``finished``."""
        self.metrics.inc("lmparse_requests_total", api=api, stream=str(generation.options.stream).lower())
        self.metrics.inc("lmparse_requests_in_flight")
        runner = ChatRunner(generation.stream, generation.parser, self.metrics, request_id, generation.check)
        self.in_flight.track(runner)
        generation.stream.bind_usage(runner.usage)  # the upstream's own prompt count, known at the end
        return runner

    def finished(self, runner: ChatRunner) -> None:
        self.in_flight.done(runner)
        self.metrics.inc("lmparse_requests_in_flight", -1)

    def closed(self, runner: ChatRunner) -> Callable[[], None]:
        """What a stream calls when it closes: its slot back, its runner finished."""
        def closed() -> None:
            self.release()
            self.finished(runner)
        return closed

    def shut_down(self, grace: float) -> None:
        """Refuse new generations; end those still running after ``grace`` seconds."""
        self.in_flight.shut_down(grace)

    async def aclose(self) -> None:
        """The engines closed and the worker pool stopped (at the app's end)."""
        for binding in self.names.bindings:
            await binding.engine.aclose()
        self.workers.shutdown(wait=False, cancel_futures=True)
