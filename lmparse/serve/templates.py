"""Prompt rendering with the model's own chat template (jinja2), when one is at hand.

Templates come from the tokenizer test data: ``templates/<file>`` (official templates
as mirrored by llama.cpp), the tokenizer directory's ``chat_template.jinja``, or the
``chat_template`` of its ``tokenizer_config.json``.  They run in jinja2's sandbox with
the helpers Hugging Face provides (``raise_exception``, ``strftime_now``, ``tojson``
that keeps non-ASCII).  A template that fails on a conversation falls back to a plain
ChatML rendering: the prompt only feeds the engine and the usage count.
"""

from __future__ import annotations

import datetime
import json
import logging
from pathlib import Path
from typing import Any

__all__ = ["ChatTemplate", "load_template", "render_chatml"]

logger = logging.getLogger("lmparse.serve")


def render_chatml(messages: list[dict], tools: list[dict] | None = None) -> str:
    """The fallback: ChatML with tools as a JSON system note."""
    parts = []
    if tools:
        parts.append("<|im_start|>system\n# Tools\n" + json.dumps(tools, ensure_ascii=False) + "<|im_end|>\n")
    for m in messages:
        parts += ("<|im_start|>", m["role"], "\n", m.get("content") or "")
        for call in m.get("tool_calls") or ():  # one list, not a string grown call by call
            parts += ("\n", json.dumps(call["function"], ensure_ascii=False))
        parts.append("<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def _raise(message: str) -> None:
    raise ValueError(message)


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


class ChatTemplate:
    def __init__(self, source: str, name: str, bos: str = "", eos: str = "") -> None:
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import SandboxedEnvironment

        # Sandboxed but not immutable: Kimi-K2's template keeps a queue with list.append.
        # Templates get copies of the messages (``_template_message``), never ours.
        env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
        self.name = name
        self._template = env.from_string(source)
        self._bos, self._eos = bos, eos

    @property
    def bos(self) -> str:
        """The BOS token's text the template writes (engines that tokenize text add their own)."""
        return self._bos

    def render(self, messages: list[dict], tools: list[dict] | None, thinking: bool | None,
               reasoning_effort: str | None = None) -> str:
        kwargs: dict[str, Any] = {}
        if thinking is not None:
            kwargs["enable_thinking"] = kwargs["thinking"] = thinking
        if reasoning_effort is not None:
            kwargs["reasoning_effort"] = reasoning_effort
        shown = [_template_message(m) for m in messages]
        try:
            return self._render(shown, tools, kwargs)
        except Exception as first:  # the template rejects this shape: try plainer ones
            plainer = _later_system_as_user(shown)
            for attempt in (plainer, _thinking_with_content(plainer)):
                if attempt != shown:
                    try:
                        return self._render(attempt, tools, kwargs)
                    except Exception:
                        pass
            raise first

    def _render(self, messages: list[dict], tools: list[dict] | None, kwargs: dict[str, Any]) -> str:
        return self._template.render(messages=messages, tools=_template_tools(tools), add_generation_prompt=True,
                                     bos_token=self._bos, eos_token=self._eos, **kwargs)


def _template_tools(tools: list[dict] | None) -> list[dict] | None:
    """Tools with a string ``description`` (templates concatenate it; the APIs make it optional)."""
    if not tools:
        return None
    out = []
    for tool in tools:
        fn = tool.get("function")
        if isinstance(fn, dict) and not isinstance(fn.get("description"), str):
            tool = {**tool, "function": {**fn, "description": ""}}
        out.append(tool)
    return out


def _later_system_as_user(messages: list[dict]) -> list[dict]:
    """Many templates accept a system turn only first; agent clients send more (Claude
    Code's mid-conversation system turns): those become user turns, joined with the user
    turns next to them (templates like Mistral's insist that user and assistant alternate)."""
    out: list[dict] = []
    run: list[str] = []  # the texts of the user turns being joined into out[-1]
    for i, m in enumerate(messages):
        if i and m.get("role") == "system":
            m = {**m, "role": "user"}
        if run and m.get("role") == "user" and isinstance(m.get("content"), str):
            run.append(m["content"])
            continue
        if len(run) > 1:
            out[-1] = {**out[-1], "content": "\n\n".join(run)}
        run = [m["content"]] if m.get("role") == "user" and isinstance(m.get("content"), str) else []
        out.append(m)
    if len(run) > 1:
        out[-1] = {**out[-1], "content": "\n\n".join(run)}
    return out


def _thinking_with_content(messages: list[dict]) -> list[dict]:
    """gpt-oss's template refuses an assistant call turn with both text and ``thinking``:
    the text goes into the analysis, so neither is lost."""
    out = []
    for m in messages:
        if m.get("tool_calls") and m.get("thinking") and m.get("content"):
            m = {**m, "thinking": m["thinking"] + "\n\n" + m["content"], "content": ""}
        out.append(m)
    return out


def _template_message(message: dict) -> dict:
    """Templates index tool-call arguments as mappings (``arguments|items``): parse them.
    An assistant turn with only calls has ``content: null`` in the APIs; templates test
    ``'</think>' in content``, so it is given as ``""``.  Reasoning is given under both
    names templates read: ``reasoning_content`` (Qwen3, GLM, Kimi, DeepSeek) and
    ``thinking`` (gpt-oss)."""
    calls = message.get("tool_calls")
    message = dict(message)
    if message.get("content") is None:
        message["content"] = ""
    if message.get("reasoning_content") and "thinking" not in message:
        message["thinking"] = message["reasoning_content"]
    if not calls:
        return message
    parsed = []
    for call in calls:
        fn = dict(call["function"])
        try:
            fn["arguments"] = json.loads(fn["arguments"])
        except (TypeError, ValueError):
            pass
        parsed.append({**call, "function": fn})
    return {**message, "tool_calls": parsed}


def _token_text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def _template_source(root: Path, template_file: str | None, tokenizer_dir: str | None,
                     config: dict[str, Any]) -> tuple[str, str] | None:
    """The template's source and a name for it: the templates file, the tokenizer's
    ``chat_template.jinja``, else its ``tokenizer_config.json`` entry (None: none of them)."""
    candidates = []
    if template_file:
        candidates.append(root / "templates" / template_file)
    if tokenizer_dir:
        candidates.append(root / tokenizer_dir / "chat_template.jinja")
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8"), path.name
    if isinstance(config.get("chat_template"), str):
        return config["chat_template"], f"{tokenizer_dir}/tokenizer_config.json"
    return None


def load_template(root: Path | None, template_file: str | None, tokenizer_dir: str | None) -> ChatTemplate | None:
    """The family's chat template from the test data, or None (then ChatML is used)."""
    if root is None:
        return None
    config: dict = {}
    if tokenizer_dir and (root / tokenizer_dir / "tokenizer_config.json").is_file():
        try:
            config = json.loads((root / tokenizer_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
        except ValueError:
            config = {}
    found = _template_source(root, template_file, tokenizer_dir, config)
    if found is None:
        return None
    source, name = found
    try:
        return ChatTemplate(source, name, _token_text(config.get("bos_token")), _token_text(config.get("eos_token")))
    except Exception as exc:  # jinja2 missing or a template it cannot compile
        logger.warning("chat template %s unusable (%s); prompts use ChatML", name, exc)
        return None
