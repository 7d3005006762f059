"""CPU per streamed token of lmparse's serving path in process, no HTTP.

One request per API (Chat Completions, Anthropic Messages, Responses) goes from its JSON
body through the adapter's ``parse_request``, ``ChatRunner`` with the family's parser, and
the adapter's ``stream_response`` to the SSE bytes; the engine replays the prepared token
stream (``stream.ReplayEngine``).  The APIs are measured in turn, ``repeats`` rounds, and
the process CPU time of each request is divided by the tokens it streamed.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from lmparse.serve import anthropic, openai, responses
from lmparse.serve.bindings import ModelBinding
from lmparse.serve.families import get_family
from lmparse.serve.runner import ChatRunner
from lmparse.serve.signing import Signer

from .stream import FAMILY, ReplayEngine, chat_body, messages_body, responses_body

__all__ = ["APIS", "measure", "run_once"]

_SIGNER = Signer("bench")
# API name -> (adapter module, the JSON body, body -> (GenerationRequest, options))
APIS: dict[str, tuple[Any, Callable[[], dict], Callable[[dict], Any]]] = {
    "chat.completions": (openai, chat_body, lambda body: openai.parse_request(body, FAMILY, "reasoning_content")),
    "messages": (anthropic, messages_body, lambda body: anthropic.parse_request(body, FAMILY, _SIGNER)),
    "responses": (responses, responses_body, lambda body: responses.parse_request(body, FAMILY, _SIGNER, None)),
}


def binding(steps: Sequence[tuple[str, int]]) -> ModelBinding:
    return ModelBinding(FAMILY, get_family(FAMILY), ReplayEngine(steps))


async def _one(served: ModelBinding, api: str) -> tuple[float, int, bytes]:
    module, body, parse = APIS[api]
    started = time.process_time()
    gen_request, opts = parse(body())
    runner = ChatRunner(served.engine.start(gen_request), served.new_parser(gen_request.parser_request))
    out = [chunk async for chunk in module.stream_response(runner, opts)]
    return time.process_time() - started, runner.usage.completion_tokens, b"".join(out)


def run_once(served: ModelBinding, api: str) -> tuple[float, int, bytes]:
    """(CPU seconds, tokens streamed, the SSE bytes) of one streamed request."""
    return asyncio.run(_one(served, api))


def measure(steps: Sequence[tuple[str, int]], repeats: int) -> dict[str, dict[str, float]]:
    """Per API: median µs per token over ``repeats`` interleaved rounds, tokens, bytes out."""
    served = binding(steps)
    samples: dict[str, list[float]] = {api: [] for api in APIS}
    sizes: dict[str, tuple[int, int]] = {}
    for _ in range(repeats):
        for api in APIS:
            seconds, tokens, body = run_once(served, api)
            samples[api].append(seconds / tokens * 1e6)
            sizes[api] = (tokens, len(body))
    return {api: {"us_per_token": statistics.median(values), "tokens": sizes[api][0], "bytes": sizes[api][1]}
            for api, values in samples.items()}
