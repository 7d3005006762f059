"""CPU per streamed token through ChatRunner and each API adapter, in process.

``python -m bench.adapters``: the simulated Qwen3 (real tokenizer when the test data is
cached) streams the same long reply — reasoning, text, a tool call with a long string
argument — through Chat Completions, Anthropic Messages and Responses SSE encoding, with
no HTTP server and no sleeps; the process CPU time of each run is divided by the tokens
streamed.  Ratios are against Chat Completions measured in the same run (median of 5).
"""

from __future__ import annotations

import asyncio
import statistics
import time

from lmparse.serve import anthropic, openai, responses
from lmparse.serve.bindings import simulated_binding
from lmparse.serve.families import get_family
from lmparse.serve.runner import ChatRunner
from lmparse.serve.signing import Signer

WORDS = " ".join(f"word{i}" for i in range(3000))
TOOLS_OPENAI = [{"type": "function", "function": {"name": "write_note", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}]


def _requests(binding):
    signer = Signer("bench")
    user = f'Call write_note text="{WORDS}"'
    chat = openai.parse_request({"model": "qwen3", "stream": True, "tools": TOOLS_OPENAI,
                                 "messages": [{"role": "user", "content": user}]}, "qwen3", "reasoning_content")
    messages = anthropic.parse_request({"model": "qwen3", "stream": True, "max_tokens": 100000,
                                        "tools": [{"name": "write_note",
                                                   "input_schema": TOOLS_OPENAI[0]["function"]["parameters"]}],
                                        "messages": [{"role": "user", "content": user}]}, "qwen3", signer)
    resp = responses.parse_request({"model": "qwen3", "stream": True, "store": False, "input": user,
                                    "tools": [{"type": "function", "name": "write_note",
                                               "parameters": TOOLS_OPENAI[0]["function"]["parameters"]}]},
                                   "qwen3", signer, None)
    return {"chat.completions": (openai, chat), "messages": (anthropic, messages), "responses": (responses, resp)}


async def _run(binding, module, parsed) -> tuple[float, int, int]:
    gen_request, opts = parsed
    stream = binding.engine.start(gen_request)
    runner = ChatRunner(stream, binding.new_parser(gen_request.parser_request))
    started = time.process_time()
    size = 0
    async for chunk in module.stream_response(runner, opts):
        size += len(chunk)
    return time.process_time() - started, runner.usage.completion_tokens, size


def main() -> None:
    binding = simulated_binding(get_family("qwen3"))
    cases = _requests(binding)
    results: dict[str, list[float]] = {name: [] for name in cases}
    tokens = {}
    for _ in range(5):
        for name, (module, parsed) in cases.items():
            seconds, count, size = asyncio.run(_run(binding, module, parsed))
            results[name].append(seconds / count * 1e6)
            tokens[name] = (count, size)
    base = statistics.median(results["chat.completions"])
    print(f"tokenizer {binding.engine.tokenizer.name}; CPU per streamed token, median of 5 "
          "(engine + parser + adapter + SSE bytes)")
    print(f"{'API':18} {'tokens':>7} {'bytes out':>10} {'µs/token':>9} {'vs chat':>8}")
    for name, values in results.items():
        median = statistics.median(values)
        count, size = tokens[name]
        print(f"{name:18} {count:7d} {size:10d} {median:9.1f} {median / base:8.2f}")


if __name__ == "__main__":
    main()
