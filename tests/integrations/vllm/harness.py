"""vLLM's own serving layer on CPU, with a stand-in engine: what `vllm serve` runs per request.

``serving(family, tool, reasoning)`` builds ``OpenAIServingChat`` as vLLM's API server does
(a real ``ModelConfig`` over a tiny model directory made from the tokenizer test data, the HF
renderer with the family's real chat template, ``OpenAIServingModels``, ``OnlineRenderer``);
only the engine client is a stand-in: ``generate`` renders nothing itself, it replays a
scripted reply as the token ids the real tokenizer gives and as vLLM's detokenizer would
decode them (``skip_special_tokens`` as the request's sampling params say), ``step`` tokens
per ``RequestOutput`` when streaming (a tuple: those sizes in turn), the whole reply at once
otherwise. A reply given as pieces is each piece tokenized by the real tokenizer, one piece per
``RequestOutput`` when ``step`` is None.
"""

from __future__ import annotations

import asyncio
import atexit
import gzip
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lmparse.serve.tokenizer import testdata_dir

from ..new_families import NEW_FAMILIES

# family -> tokenizer data dir, chat template (None: the tokenizer dir's own), eos token
FAMILIES: dict[str, tuple[str, str | None, str]] = {
    "qwen": ("qwen3", "Qwen-Qwen3-0.6B.jinja", "<|im_end|>"),
    "qwen3coder": ("qwen3", "Qwen3.5-4B.jinja", "<|im_end|>"),
    "glm47": ("glm-4.7-flash", None, "<|user|>"),
    "deepseek-v32": ("deepseek-v3.2", "deepseek-ai-DeepSeek-V3.2.jinja", "<｜end▁of▁sentence｜>"),
    # Kimi-K2 publishes no vocabulary here: its template over the Qwen3 tokenizer, so its
    # markers arrive as several tokens each (the multi-token case in-tree parsers trip on).
    "kimi-k2": ("qwen3", "Kimi-K2-Thinking.jinja", "<|im_end|>"),
}
# The late-2026 families (tests/integrations/new_families.py) have no tokenizer in the test data:
# Qwen3's tokenizer and template stand in for all of them.
FAMILIES.update({f.name: ("qwen3", "Qwen-Qwen3-0.6B.jinja", "<|im_end|>") for f in NEW_FAMILIES})

_CONFIG = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 64,
           "intermediate_size": 128, "num_attention_heads": 2, "num_key_value_heads": 1,
           "num_hidden_layers": 1, "head_dim": 32, "vocab_size": 160000, "max_position_embeddings": 8192,
           "torch_dtype": "float32", "rms_norm_eps": 1e-6, "rope_theta": 1000000}
_DIRS: dict[str, Path] = {}


def _data(relative: str) -> Path:
    root = testdata_dir()
    if root is None or not (root / relative).is_file():
        pytest.skip(f"{relative} not in the tokenizer test data (run `make testdata`)")
    return root / relative


def model_dir(family: str) -> Path:
    """A model directory vLLM's ``ModelConfig`` accepts: real tokenizer and template, a
    one-layer config (never loaded: no weights, no engine)."""
    if family in _DIRS:
        return _DIRS[family]
    tok, template, _ = FAMILIES[family]
    dest = Path(tempfile.mkdtemp(prefix=f"lmparse-vllm-{family}-"))
    atexit.register(shutil.rmtree, dest, True)
    with gzip.open(_data(f"{tok}/tokenizer.json.gz"), "rb") as src, open(dest / "tokenizer.json", "wb") as out:
        shutil.copyfileobj(src, out)
    config = json.loads(_data(f"{tok}/tokenizer_config.json").read_text(encoding="utf-8"))
    text = (_data(f"templates/{template}") if template else _data(f"{tok}/chat_template.jinja")).read_text(
        encoding="utf-8")
    config["chat_template"] = text
    config.pop("auto_map", None)
    if config.get("tokenizer_class") == "LlamaTokenizerFast":
        # transformers 5 rebuilds a Llama tokenizer's pre-tokenizer and loses DeepSeek's spaces:
        # read tokenizer.json as it is, as the model's own serving does.
        config["tokenizer_class"] = "PreTrainedTokenizerFast"
    (dest / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    (dest / "config.json").write_text(json.dumps(_CONFIG), encoding="utf-8")
    _DIRS[family] = dest
    return dest


class StandInEngine:
    """The ``EngineClient`` surface ``OpenAIServingChat`` touches; ``generate`` replays ``reply``."""

    errored = False
    dead_error = RuntimeError("stand-in engine is dead")

    def __init__(self, vllm_config: Any, renderer: Any) -> None:
        self.vllm_config = vllm_config
        self.model_config = vllm_config.model_config
        self.renderer = renderer
        self.input_processor = None
        self.reply: str | tuple[str, ...] = ""
        self.step: int | tuple[int, ...] | None = 1
        self.finish = "stop"  # "length": the reply was cut off by max_tokens
        self.seen: dict[str, Any] = {}  # what the serving layer sent: sampling params, kwargs

    def check_admission(self, n: int) -> None:
        return None

    async def generate(self, engine_input: Any, sampling_params: Any, request_id: str, **kwargs: Any) -> Any:
        from vllm.outputs import CompletionOutput, RequestOutput
        from vllm.sampling_params import RequestOutputKind

        self.seen = {"sampling_params": sampling_params, **kwargs}
        tok = self.renderer.tokenizer
        prompt_ids = list(engine_input.get("prompt_token_ids") or [])
        pieces = (self.reply,) if isinstance(self.reply, str) else self.reply
        encoded = [tok.encode(piece, add_special_tokens=False) for piece in pieces]
        ids = [token for piece in encoded for token in piece]
        skip = sampling_params.skip_special_tokens
        delta = sampling_params.output_kind == RequestOutputKind.DELTA
        cuts = increments([len(piece) for piece in encoded], self.step) if delta else [len(ids)]
        done_text, done = "", 0
        for cut in cuts:
            text = tok.decode(ids[:cut], skip_special_tokens=skip)
            if text.endswith("\ufffd") and cut < len(ids):
                continue  # vLLM's detokenizer holds an incomplete UTF-8 sequence back too
            finished = cut == len(ids)
            out = CompletionOutput(index=0, text=text[len(done_text):] if delta else text,
                                   token_ids=ids[done:cut] if delta else ids[:cut], cumulative_logprob=None,
                                   logprobs=None, finish_reason=self.finish if finished else None)
            yield RequestOutput(request_id=request_id, prompt=None, prompt_token_ids=prompt_ids,
                                prompt_logprobs=None, outputs=[out], finished=finished)
            done_text, done = text, cut
            await asyncio.sleep(0)


def increments(piece_lengths: list[int], step: int | tuple[int, ...] | None) -> list[int]:
    """The token counts after each streamed ``RequestOutput``: one piece each (``step`` None),
    ``step`` tokens each, or the sizes of a tuple in turn."""
    total = sum(piece_lengths)
    if step is None:
        cuts = [sum(piece_lengths[:i + 1]) for i in range(len(piece_lengths))]
        return [cut for i, cut in enumerate(cuts) if cut and cut not in cuts[:i]] or [total]
    sizes = step if isinstance(step, tuple) else (step,)
    cuts, at, i = [], 0, 0
    while at + sizes[i % len(sizes)] < total:
        at += sizes[i % len(sizes)]
        cuts.append(at)
        i += 1
    return cuts + [total]


@dataclass
class Served:
    chat: Any
    engine: StandInEngine


def serving(family: str, tool: str | None, reasoning: str | None) -> Served:
    """``OpenAIServingChat`` as ``vllm serve --enable-auto-tool-choice --tool-call-parser TOOL
    --reasoning-parser REASONING`` builds it, over the stand-in engine."""
    from vllm.config import ModelConfig, VllmConfig
    from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat
    from vllm.entrypoints.openai.models.protocol import BaseModelPath
    from vllm.entrypoints.openai.models.serving import OpenAIServingModels
    from vllm.renderers.online_renderer import OnlineRenderer
    from vllm.renderers.registry import renderer_from_config

    path = str(model_dir(family))
    model_config = ModelConfig(model=path, tokenizer=path, dtype="float32", max_model_len=8192)
    vllm_config = VllmConfig(model_config=model_config)
    engine = StandInEngine(vllm_config, renderer_from_config(vllm_config))
    models = OpenAIServingModels(engine_client=engine, base_model_paths=[BaseModelPath(name="m", model_path=path)])
    options = dict(chat_template=None, chat_template_content_format="auto", enable_auto_tools=tool is not None,
                   tool_parser=tool, reasoning_parser=reasoning or "", request_logger=None)
    renderer = OnlineRenderer(model_config=model_config, renderer=engine.renderer, **options)
    chat = OpenAIServingChat(engine, models, "assistant", online_renderer=renderer, **options)
    return Served(chat, engine)


async def _collect(served: Served, body: dict[str, Any]) -> dict[str, Any]:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    result = await served.chat.create_chat_completion(ChatCompletionRequest(**body))
    if not body.get("stream"):
        dump = result.model_dump(exclude_none=True)
        if "choices" not in dump:
            raise AssertionError(f"vLLM answered an error: {dump}")
        return dump["choices"][0]["message"]
    chunks = []
    async for line in result:
        for event in line.split("\n\n"):
            data = event.removeprefix("data: ").strip()
            if data and data != "[DONE]":
                chunks.append(json.loads(data))
    return fold_chunks(chunks)


def fold_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """An SSE stream folded as an OpenAI client does: text joined, calls by index."""
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for chunk in chunks:
        if "error" in chunk:
            raise AssertionError(f"vLLM streamed an error: {chunk}")
        for choice in chunk.get("choices", ()):
            delta = choice.get("delta", {})
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning") or "")
            for tc in delta.get("tool_calls") or ():
                slot = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
    message: dict[str, Any] = {"content": "".join(content) or None, "reasoning": "".join(reasoning) or None}
    if calls:
        message["tool_calls"] = [{"function": calls[i]} for i in sorted(calls)]
    return message


def chat(served: Served, body: dict[str, Any], reply: str | tuple[str, ...],
         step: int | tuple[int, ...] | None = 1, finish: str = "stop") -> dict[str, Any]:
    """One chat completion through vLLM's serving layer; the engine generates ``reply``."""
    served.engine.reply, served.engine.step, served.engine.finish = reply, step, finish
    return asyncio.run(_collect(served, body))


def outcome(message: dict[str, Any]) -> tuple[Any, ...]:
    """(content, reasoning, [(name, arguments as data)]) of a message, for comparison."""
    calls = []
    for tc in message.get("tool_calls") or ():
        fn = tc["function"]
        try:
            args = json.loads(fn["arguments"])
        except (TypeError, ValueError):
            args = fn["arguments"]
        calls.append((fn["name"], args))
    reasoning = message.get("reasoning") or message.get("reasoning_content")
    return (message.get("content") or None, reasoning or None, calls)
