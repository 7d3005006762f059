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
        body = m.get("content") or ""
        for call in m.get("tool_calls") or ():
            body += "\n" + json.dumps(call["function"], ensure_ascii=False)
        parts.append(f"<|im_start|>{m['role']}\n{body}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def _raise(message: str) -> None:
    raise ValueError(message)


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


class ChatTemplate:
    def __init__(self, source: str, name: str, bos: str = "", eos: str = "") -> None:
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
        self.name = name
        self._template = env.from_string(source)
        self._bos, self._eos = bos, eos

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
        except Exception:
            # Many templates accept a system message only first; agent clients send more
            # (Claude Code's mid-conversation system turns).  Give those as user turns.
            later = [{**m, "role": "user"} if i and m.get("role") == "system" else m for i, m in enumerate(shown)]
            if later == shown:
                raise
            return self._render(later, tools, kwargs)

    def _render(self, messages: list[dict], tools: list[dict] | None, kwargs: dict[str, Any]) -> str:
        return self._template.render(messages=messages, tools=tools or None, add_generation_prompt=True,
                                     bos_token=self._bos, eos_token=self._eos, **kwargs)


def _template_message(message: dict) -> dict:
    """Templates index tool-call arguments as mappings (``arguments|items``): parse them.
    An assistant turn with only calls has ``content: null`` in the APIs; templates test
    ``'</think>' in content``, so it is given as ``""``."""
    calls = message.get("tool_calls")
    if message.get("content") is None:
        message = {**message, "content": ""}
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
    candidates = []
    if template_file:
        candidates.append(root / "templates" / template_file)
    if tokenizer_dir:
        candidates.append(root / tokenizer_dir / "chat_template.jinja")
    source = name = None
    for path in candidates:
        if path.is_file():
            source, name = path.read_text(encoding="utf-8"), path.name
            break
    if source is None and isinstance(config.get("chat_template"), str):
        source, name = config["chat_template"], f"{tokenizer_dir}/tokenizer_config.json"
    if source is None:
        return None
    try:
        return ChatTemplate(source, name, _token_text(config.get("bos_token")), _token_text(config.get("eos_token")))
    except Exception as exc:  # jinja2 missing or a template it cannot compile
        logger.warning("chat template %s unusable (%s); prompts use ChatML", name, exc)
        return None
