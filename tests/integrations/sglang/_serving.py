"""One reply through SGLang's own ``OpenAIServingChat.handle_request``, read back as an SDK reads it.

Everything from the HTTP request model down to the SSE / JSON response is SGLang's: its server
arguments (``prepare_server_args``, published for the tokenizer process as ``launch_server`` does),
its ``TemplateManager`` loading the family's real chat template (which decides
``force_reasoning``), its prompt rendering with the family's real tokenizer, and its serving_chat
streaming and non-streaming paths with the reasoning and function-call parsers they build per
request. Only ``TokenizerManager.generate_request`` (the scheduler round trip) is a stand-in: it
yields the output dicts the real one yields for a detokenized stream (``BatchStrOutput`` with
``incremental_streaming_output`` off): per step the whole text so far, the output ids so far and
``meta_info`` with the request id, ``weight_version``, token counts and, on the last step, the
finish reason; non-stream, one dict for the whole reply.
"""

from __future__ import annotations

import asyncio
import atexit
import gzip
import json
import shutil
import tempfile
import types
from collections.abc import AsyncIterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
from sglang.srt.managers.tokenizer_manager import TokenizerManager
from sglang.srt.parser.template_manager import TemplateManager
from sglang.srt.runtime_context import publish
from sglang.srt.server_args import prepare_server_args

from tests.support.tokenizers import testdata_dir

Reply = tuple[str, str, tuple[tuple[str, str], ...]]  # content, reasoning, calls (name, arguments)
STOP: dict[str, Any] = {"type": "stop", "matched": None}


def length_finish(tokens: int) -> dict[str, Any]:
    return {"type": "length", "length": tokens}


@cache
def _model_dir(tokenizer: str, template: str, model_type: str) -> str:
    """A model directory as SGLang reads it at startup: config.json, the tokenizer and its
    config from the test data; no weights (nothing here runs a model)."""
    root = testdata_dir()
    assert root is not None
    target = Path(tempfile.mkdtemp(prefix=f"sglang-{tokenizer}-"))
    atexit.register(shutil.rmtree, target, True)
    source = root / tokenizer
    (target / "tokenizer.json").write_bytes(gzip.decompress((source / "tokenizer.json.gz").read_bytes()))
    shutil.copy(source / "tokenizer_config.json", target)
    config = {"model_type": model_type, "architectures": ["Qwen3ForCausalLM"], "vocab_size": 200000,
              "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
              "num_hidden_layers": 1, "intermediate_size": 64, "max_position_embeddings": 32768}
    (target / "config.json").write_text(json.dumps(config))
    shutil.copy(root / "templates" / template, target / "chat_template.jinja")
    return str(target)


class _Steps:
    """The stand-in for the scheduler round trip: the reply's increments as SGLang's output dicts."""

    def __init__(self) -> None:
        self.deltas: Sequence[str] = ()
        self.ids: Sequence[int] = ()
        self.finish: dict[str, Any] = STOP

    def _out(self, text: str, tokens: int, last: bool) -> dict[str, Any]:
        meta = {"id": "chatcmpl-stand-in", "finish_reason": self.finish if last else None,
                "weight_version": "default", "prompt_tokens": 8, "completion_tokens": tokens,
                "cached_tokens": 0}
        return {"text": text, "output_ids": list(self.ids[:tokens]), "meta_info": meta}

    async def generate_request(self, obj: Any, request: Any = None) -> AsyncIterator[dict[str, Any]]:
        total = len(self.ids)
        if not obj.stream:
            yield self._out("".join(self.deltas), total, True)
            return
        text, tokens, per_step = "", 0, max(1, total // max(1, len(self.deltas)))
        for k, delta in enumerate(self.deltas):
            last = k == len(self.deltas) - 1
            text, tokens = text + delta, total if last else min(total, tokens + per_step)
            yield self._out(text, tokens, last)


class Server:
    """One SGLang chat endpoint (server args, templates, serving_chat) for a parser pair."""

    def __init__(self, tool_parser: str, reasoning_parser: str | None, tokenizer: str, template: str,
                 model_type: str = "qwen3") -> None:
        path = _model_dir(tokenizer, template, model_type)
        parsers = ["--tool-call-parser", tool_parser] + (["--reasoning-parser", reasoning_parser]
                                                          if reasoning_parser else [])
        args = prepare_server_args(["--model-path", path, "--device", "cpu", *parsers,
                                    "--chat-template", str(Path(path) / "chat_template.jinja")])
        publish(args, role="tokenizer")  # what the HTTP server's process does before it serves
        self.steps = _Steps()
        manager = TokenizerManager.__new__(TokenizerManager)  # its __init__ starts the scheduler
        manager.server_args, manager.model_path, manager.served_model_name = args, path, "stand-in"
        from transformers import AutoTokenizer

        manager.tokenizer, manager.processor = AutoTokenizer.from_pretrained(path), None
        manager.model_config = types.SimpleNamespace(
            hf_config=types.SimpleNamespace(model_type=model_type, architectures=["Qwen3ForCausalLM"]),
            is_multimodal=False, get_default_sampling_params=dict)
        manager.request_logger = types.SimpleNamespace(log_requests=False, log_requests_level=0)
        manager.create_abort_task = lambda obj: None
        manager.generate_request = self.steps.generate_request  # the one stand-in
        templates = TemplateManager()
        templates.initialize_templates(tokenizer_manager=manager, model_path=path,
                                       chat_template=str(Path(path) / "chat_template.jinja"))
        self.tokenizer = manager.tokenizer
        self.chat = OpenAIServingChat(manager, templates)
        self.args = args

    def run(self, body: dict[str, Any], deltas: Sequence[str], ids: Sequence[int] | None = None,
            finish: dict[str, Any] = STOP) -> Reply:
        publish(self.args, role="tokenizer")
        self.steps.deltas, self.steps.finish = deltas, finish
        self.steps.ids = ids if ids is not None else self.tokenizer.encode("".join(deltas), add_special_tokens=False)
        request = ChatCompletionRequest(model="stand-in", messages=[{"role": "user", "content": "Weather?"}], **body)
        return asyncio.run(_read(self.chat, request))


async def _read(chat: OpenAIServingChat, request: ChatCompletionRequest) -> Reply:
    response = await chat.handle_request(request, None)
    if not request.stream:
        # FastAPI sends a response model as its JSON; an error comes as a ready JSON response.
        body = response.model_dump_json() if hasattr(response, "model_dump_json") else response.body
        payload = json.loads(body)
        assert "choices" in payload, payload
        message = payload["choices"][0]["message"]
        calls = tuple((c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ())
        return message.get("content") or "", message.get("reasoning_content") or "", calls
    client = Client()
    async for chunk in response.body_iterator:
        for line in (chunk if isinstance(chunk, str) else chunk.decode()).splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                client.event(json.loads(line[len("data: "):]))
    return client.reply()


class Client:
    """What an SDK makes of the SSE stream: text joined, calls joined by index."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, list[str]] = {}

    def event(self, event: dict[str, Any]) -> None:
        assert "error" not in event, event
        for choice in event.get("choices") or ():
            delta = choice.get("delta") or {}
            self.content.append(delta.get("content") or "")
            self.reasoning.append(delta.get("reasoning_content") or "")
            for call in delta.get("tool_calls") or ():
                entry = self.calls.setdefault(call["index"], ["", ""])
                function = call.get("function") or {}
                entry[0] += function.get("name") or ""
                entry[1] += function.get("arguments") or ""

    def reply(self) -> Reply:
        calls = tuple((name, args) for _, (name, args) in sorted(self.calls.items()))
        return "".join(self.content), "".join(self.reasoning), calls
