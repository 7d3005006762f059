"""LMDeploy's own api_server with a stand-in engine, and an OpenAI SDK client over its routes.

``served_app`` runs ``lmdeploy serve api_server`` (LMDeploy's CLI parsing and its ``api_server``
command, which builds the engine config and calls ``api_server.serve()``: name validation,
``set_parsers`` with the CLI's parser names, the FastAPI app with LMDeploy's routers and
middleware) and keeps the app instead of handing it to uvicorn. The engine ``serve()`` would
build is replaced by ``StandInEngine``, which answers what the serving layer asks of LMDeploy's
``AsyncEngine``: ``preprocess`` and then ``generate``, yielding LMDeploy's own ``GenOut`` the way
``AsyncEngine.generate`` does (one per engine step with that step's new text and token ids and
no finish reason, then a last empty one carrying ``stop`` or ``length``).

``chat`` sends one ``/v1/chat/completions`` request through the ``openai`` SDK over httpx's
ASGI transport (no socket) and folds what the SDK parses, stream or not.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import io
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx
import openai
from lmdeploy.serve.core.async_engine import GenOut
from lmdeploy.serve.managers import SessionManager
from lmdeploy.serve.openai import api_server

Steps = Sequence[tuple[str, list[int]]]  # per engine step: its new text, its new token ids
Reply = tuple[str, str, tuple[tuple[str, str], ...]]  # as compat.Reply: content, reasoning, calls
MODEL = "stand-in"


@dataclass
class StandInEngine:
    """What LMDeploy's serving layer reads of its ``AsyncEngine``; replies are queued per request."""

    arch: str = "Qwen3ForCausalLM"
    model_name: str = MODEL
    epoch: int = 0
    is_sleeping: bool = False
    chat_template: Any = None  # the Anthropic router probes it; prompts are not rendered here
    session_mgr: SessionManager = field(default_factory=SessionManager)
    backend_config: Any = field(default_factory=lambda: SimpleNamespace(logprobs_mode=None, adapters=None))
    tokenizer: Any = field(default_factory=lambda: SimpleNamespace(model=SimpleNamespace(model=None)))
    replies: list[tuple[Steps, str]] = field(default_factory=list)  # (steps, finish reason)
    gen_configs: list[Any] = field(default_factory=list)  # what each request was generated with

    async def preprocess(self, messages: Any, session: Any, gen_config: Any = None, **kwargs: Any) -> Any:
        self.gen_configs.append(gen_config)
        return SimpleNamespace(session=session, gen_config=gen_config)

    async def generate(self, request: Any, stream_response: bool = True) -> AsyncIterator[GenOut]:
        steps, finish = self.replies.pop(0)
        produced = 0
        for text, ids in steps:
            produced += len(ids)
            yield GenOut(text, 7, produced, None, token_ids=list(ids))
        yield GenOut("", 7, produced, finish, token_ids=[])


@functools.cache
def model_dir() -> str:
    """A local model path, so LMDeploy's CLI looks for nothing on the Hub (the stand-in engine
    reads no weights, and no chat template is rendered)."""
    path = tempfile.mkdtemp(prefix="lmparse-lmdeploy-model-")
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def cli_parser() -> Any:
    """LMDeploy's CLI argument parser, built as ``lmdeploy.cli.run()`` builds it (once: it adds
    its subcommands to a class-level parser, so a second ``run()`` in one process fails)."""
    from lmdeploy.cli.cli import CLI
    from lmdeploy.cli.lite import SubCliLite
    from lmdeploy.cli.serve import SubCliServe

    CLI.add_parsers()
    SubCliServe.add_parsers()
    SubCliLite.add_parsers()
    return CLI.parser


def served_app(tool_call_parser: str | None, reasoning_parser: str | None,
               arch: str = "Qwen3ForCausalLM") -> tuple[Any, StandInEngine]:
    """LMDeploy's FastAPI app as ``lmdeploy serve api_server M --tool-call-parser ...
    --reasoning-parser ...`` builds it (the CLI's parsing and its ``api_server`` command, which
    calls ``api_server.serve()``), and the engine behind it, given the config the CLI built."""
    engine = StandInEngine(arch=arch)
    built: list[Any] = []

    def pipeline(**kwargs: Any) -> StandInEngine:
        engine.backend_config = kwargs["backend_config"]
        return engine

    argv = ["serve", "api_server", model_dir(), "--model-name", MODEL, "--backend", "pytorch",
            "--max-batch-size", "1", "--generation-config", "lmdeploy", "--log-level", "ERROR"]  # no GPU to size by
    argv += ["--tool-call-parser", tool_call_parser] if tool_call_parser else []
    argv += ["--reasoning-parser", reasoning_parser] if reasoning_parser else []
    args = cli_parser().parse_args(argv)
    saved = api_server.get_task, api_server.uvicorn.run
    api_server.get_task = lambda *args, **kwargs: ("llm", pipeline)
    api_server.uvicorn.run = lambda app, **kwargs: built.append(app)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # serve() prints its address three times
            args.run(args)
    finally:
        api_server.get_task, api_server.uvicorn.run = saved
    return built[0], engine


def chat(app: Any, engine: StandInEngine, request: dict[str, Any], steps: Steps, *, stream: bool,
         finish: str = "stop") -> tuple[Reply, str | None]:
    """One chat completion through the HTTP route: the reply the SDK sees and its finish reason."""
    engine.replies.append((steps, finish))

    async def go() -> tuple[Reply, str | None]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://lmdeploy") as http:
            client = openai.AsyncOpenAI(base_url="http://lmdeploy/v1", api_key="none", http_client=http)
            known = {key: request[key] for key in ("messages", "tools", "tool_choice") if key in request}
            extra = {key: value for key, value in request.items() if key not in known}  # LMDeploy's own fields
            if not stream:
                completion = await client.chat.completions.create(model=MODEL, extra_body=extra, **known)
                return _message(completion.choices[0])
            chunks = await client.chat.completions.create(model=MODEL, stream=True, extra_body=extra, **known)
            return await _folded(chunks)

    return asyncio.run(go())


def _message(choice: Any) -> tuple[Reply, str | None]:
    message = choice.message
    calls = tuple((c.function.name, c.function.arguments) for c in message.tool_calls or ())
    reasoning = (message.model_extra or {}).get("reasoning_content")
    return (message.content or "", reasoning or "", calls), choice.finish_reason


async def _folded(chunks: Any) -> tuple[Reply, str | None]:
    """The stream as a client assembles it: text concatenated, calls by index."""
    content, reasoning, calls, finish = [], [], {}, None
    async for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
            for call in delta.tool_calls or ():
                name, args = calls.get(call.index, ("", ""))
                function = call.function
                calls[call.index] = (name + ((function and function.name) or ""),
                                     args + ((function and function.arguments) or ""))
            finish = choice.finish_reason or finish
    return ("".join(content), "".join(reasoning), tuple(calls[i] for i in sorted(calls))), finish


def sse_events(app: Any, engine: StandInEngine, request: dict[str, Any], steps: Steps) -> list[Any]:
    """The raw ``data:`` events of one streamed reply (for what the SDK does not show)."""
    engine.replies.append((steps, "stop"))

    async def go() -> list[Any]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://lmdeploy") as http:
            response = await http.post("/v1/chat/completions", json={"model": MODEL, "stream": True, **request})
            lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
            return [line if line == "[DONE]" else json.loads(line) for line in lines]

    return asyncio.run(go())


def stand_in_context(arch: str = "Qwen3ForCausalLM") -> Any:
    """The server context ``api_server.set_parsers`` configures, with the stand-in engine."""
    context = api_server.ServerContext()
    context.async_engine = StandInEngine(arch=arch)
    return context
