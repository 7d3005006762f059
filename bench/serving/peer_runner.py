"""Runs inside a peer engine's own venv: that engine's chat serving layer on the benchmark's
token stream, CPU per streamed token.

``PYTHONPATH=<checkout> <engine venv python> -m bench.serving.peer_runner vllm|sglang`` reads
``stream.peer_payload`` (the chat request, the steps as ``[text, token_id]``, the number of
runs) on stdin and prints one JSON line: the median µs per streamed token, the parsers, the
version, and the reply folded as a client folds it (so the driver checks it parsed the same).

- vLLM: ``OpenAIServingChat.create_chat_completion`` built as ``vllm serve --tool-call-parser
  hermes --reasoning-parser qwen3`` builds it (``tests/integrations/vllm/harness.py``), over an
  engine client whose ``generate`` yields ``RequestOutput``s made before the clock starts, one
  token each (``RequestOutputKind.DELTA``, as the serving layer asks for a stream).
- SGLang: ``OpenAIServingChat.handle_request`` (``tests/integrations/sglang/_serving.py``,
  ``--tool-call-parser qwen --reasoning-parser qwen3``) with only ``generate_request``
  replaced; it yields the dicts SGLang's tokenizer manager yields (the whole text so far and
  the ids so far each step), also made before the clock starts.

Each run's clock covers the request model's validation, the prompt rendering, the parsers and
the SSE serialization: what the serving layer does for one streamed request.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

__all__ = ["main", "fold_sse"]


def _fold(events: list[dict], reasoning_key: str) -> dict:
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for event in events:
        for choice in event.get("choices") or ():
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get(reasoning_key) or "")
            for call in delta.get("tool_calls") or ():
                slot = calls.setdefault(call["index"], ["", ""])
                fn = call.get("function") or {}
                slot[0] += fn.get("name") or ""
                slot[1] += fn.get("arguments") or ""
    return {"content": "".join(content), "reasoning": "".join(reasoning),
            "calls": [calls[i] for i in sorted(calls)]}


def _events(lines: list[str]) -> list[dict]:
    out = []
    for line in lines:
        for event in line.split("\n\n"):
            data = event.strip().removeprefix("data: ")
            if data and data != "[DONE]":
                out.append(json.loads(data))
    return out


def _vllm(payload: dict) -> dict:
    import vllm
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.outputs import CompletionOutput, RequestOutput

    from tests.integrations.vllm import harness

    served = harness.serving("qwen", "hermes", "qwen3")
    steps = payload["steps"]

    def outputs(prompt_ids: list[int]) -> list[Any]:
        made = []
        for k, (text, token_id) in enumerate(steps):
            last = k == len(steps) - 1
            out = CompletionOutput(index=0, text=text, token_ids=[token_id], cumulative_logprob=None, logprobs=None,
                                   finish_reason="stop" if last else None)
            made.append(RequestOutput(request_id="bench", prompt=None, prompt_token_ids=prompt_ids,
                                      prompt_logprobs=None, outputs=[out], finished=last))
        return made

    ready: list[Any] = []

    async def generate(engine_input: Any, sampling_params: Any, request_id: str, **kwargs: Any) -> Any:
        for output in ready:
            output.request_id = request_id
            yield output

    served.engine.generate = generate  # type: ignore[method-assign]

    async def one() -> tuple[float, list[str]]:
        ready[:] = outputs([1, 2, 3])
        started = time.process_time()
        body = {**payload["body"], "model": "m"}  # the name harness.serving serves
        result = await served.chat.create_chat_completion(ChatCompletionRequest(**body))
        lines = [line async for line in result]
        return time.process_time() - started, lines

    return _timed(one, payload, "reasoning", vllm.__version__, "hermes", "qwen3")


def _sglang(payload: dict) -> dict:
    from tests.integrations.sglang import _no_torchvision

    _no_torchvision.install()
    import sglang
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    from sglang.srt.runtime_context import publish

    from tests.integrations.sglang._serving import Server

    server = Server("qwen", "qwen3", "qwen3", "Qwen-Qwen3-0.6B.jinja")
    steps = payload["steps"]
    ready: list[dict] = []

    def outputs() -> list[dict]:
        ids = [token_id for _, token_id in steps]
        made, text = [], ""
        for k, (piece, _) in enumerate(steps):
            text += piece
            last = k == len(steps) - 1
            meta = {"id": "bench", "finish_reason": {"type": "stop", "matched": None} if last else None,
                    "weight_version": "default", "prompt_tokens": 8, "completion_tokens": k + 1, "cached_tokens": 0}
            made.append({"text": text, "output_ids": ids[:k + 1], "meta_info": meta})
        return made

    async def generate_request(obj: Any, request: Any = None) -> Any:
        for output in ready:
            yield output

    server.chat.tokenizer_manager.generate_request = generate_request

    async def one() -> tuple[float, list[str]]:
        ready[:] = outputs()
        publish(server.args, role="tokenizer")
        started = time.process_time()
        response = await server.chat.handle_request(ChatCompletionRequest(**payload["body"]), None)
        lines = [c if isinstance(c, str) else c.decode() async for c in response.body_iterator]
        return time.process_time() - started, lines

    return _timed(one, payload, "reasoning_content", sglang.__version__, "qwen", "qwen3")


LIMIT = 60.0  # seconds of runs; a run that ends past it is the last one


def fold_sse(lines: list[str], reasoning_key: str) -> dict:
    """An SSE stream folded as a client folds it: text joined, calls joined by index."""
    return _fold(_events(lines), reasoning_key)


def _timed(one: Any, payload: dict, reasoning_key: str, version: str, tool: str, reasoning: str) -> dict:
    samples, lines = [], []
    started = time.monotonic()
    for _ in range(payload["repeats"]):
        seconds, lines = asyncio.run(one())
        samples.append(seconds / len(payload["steps"]) * 1e6)
        if time.monotonic() - started > LIMIT:
            break
    return {"past_limit": time.monotonic() - started > LIMIT, "us_per_token": statistics.median(samples),
            "samples": samples, "version": version, "tool_parser": tool, "reasoning_parser": reasoning,
            "reply": fold_sse(lines, reasoning_key)}


def main(argv: list[str]) -> None:
    payload = json.loads(sys.stdin.read())
    result = {"vllm": _vllm, "sglang": _sglang}[argv[0]](payload)
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
