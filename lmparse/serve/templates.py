"""Prompt rendering with the model's own chat template (jinja2).

A template comes from a Hugging Face model directory (``load_model_template``: its
``chat_template.jinja``, else the ``chat_template`` of its ``tokenizer_config.json``, a
string or a list of named templates), from ``--chat-template FILE``, or, for the
simulated engine and the tests only, from the tokenizer test data (``load_template``).
Templates run in jinja2's sandbox with the helpers Hugging Face provides
(``raise_exception``, ``strftime_now``, ``tojson`` that keeps non-ASCII, the
``{% generation %}`` block).  The APIs' messages are handed over in the shapes templates
read (``_SHAPES``); a template that rejects one gets plainer ones before it fails.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
from pathlib import Path
from typing import Any
from collections.abc import Callable

__all__ = ["ChatTemplate", "load_template", "load_model_template", "read_json_file", "render_chatml", "token_text"]

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


def _generation_extension() -> type:
    """``{% generation %}...{% endgeneration %}``: transformers marks the assistant's tokens
    with it (for training masks); rendering a prompt, the block is its body."""
    from jinja2 import nodes
    from jinja2.ext import Extension

    class Generation(Extension):
        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    return Generation


def _compile(source: str) -> Any:
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import SandboxedEnvironment

    # Sandboxed but not immutable: Kimi-K2's template keeps a queue with list.append.
    # Templates get copies of the messages (``_SHAPES``), never ours.
    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                               extensions=[loopcontrols, _generation_extension()])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    return env.from_string(source)


class ChatTemplate:
    """A model's chat template; ``tool_use`` is the template a model names for requests
    with tools (tokenizer_config's list form), when it has one."""

    def __init__(self, source: str, name: str, bos: str = "", eos: str = "", tool_use: str | None = None) -> None:
        self.name = name
        self.source = source if tool_use is None else f"{source}\n{tool_use}"  # what auto-selection reads
        self._template = _compile(source)
        self._tool_template = _compile(tool_use) if tool_use is not None else self._template
        self._bos, self._eos = bos, eos

    @property
    def bos(self) -> str:
        """The BOS token's text the template writes (engines that tokenize text add their own)."""
        return self._bos

    def render(self, messages: list[dict], tools: list[dict] | None, thinking: bool | None,
               reasoning_effort: str | None = None) -> str:
        """The prompt: the first shape of the messages the template renders with every
        call of the history in it (a template may test ``content is none`` to find a call
        turn, join arguments as text, or render no ``tool_calls`` at all); else the first
        shape it renders."""
        kwargs: dict[str, Any] = {}
        if thinking is not None:
            kwargs["enable_thinking"] = kwargs["thinking"] = thinking
        if reasoning_effort is not None:
            kwargs["reasoning_effort"] = reasoning_effort
        placed = _call_texts(messages)
        template = self._tool_template if tools else self._template
        rendered: str | None = None
        first: Exception | None = None
        tried: list[list[dict]] = []
        for plainer in _PLAINER:
            for shape in _SHAPES:
                attempt = plainer([shape(m) for m in messages])
                if attempt in tried:
                    continue
                tried.append(attempt)
                try:
                    prompt = template.render(messages=attempt, tools=_template_tools(tools),
                                             add_generation_prompt=True, bos_token=self._bos,
                                             eos_token=self._eos, **kwargs)
                except Exception as exc:  # the template rejects this shape: try plainer ones
                    first = first or exc
                    continue
                if all(_placed(text, prompt) for text in placed):
                    return prompt
                rendered = rendered if rendered is not None else prompt
        if rendered is not None:
            return rendered
        assert first is not None
        raise first


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
    """The shape most templates read: tool-call arguments as mappings (``arguments|items``,
    as transformers and vLLM hand them over), an assistant turn of calls only with
    ``content`` ``""`` (templates test ``'</think>' in content``), reasoning under both
    names templates read: ``reasoning_content`` (Qwen3, GLM, Kimi, DeepSeek) and
    ``thinking`` (gpt-oss)."""
    message = _api_message(message)
    if message.get("content") is None:
        message["content"] = ""
    calls = message.get("tool_calls")
    if not calls:
        return message
    parsed = [{**c, "function": {**c["function"], "arguments": _arguments(c["function"]["arguments"])}} for c in calls]
    return {**message, "tool_calls": parsed}


def _api_message(message: dict) -> dict:
    """The API's own shape (``content: null`` beside calls, arguments as JSON text), which
    templates that find a call turn by ``content is none`` and join arguments as text read
    (DeepSeek-R1's)."""
    message = dict(message)
    if message.get("reasoning_content") and "thinking" not in message:
        message["thinking"] = message["reasoning_content"]
    return message


def _nine_char_ids(messages: list[dict]) -> list[dict]:
    """Mistral's templates insist on call ids of nine letters and digits: other ids are
    replaced by a stable digest of themselves, in the calls and the results alike."""
    def short(call_id: Any) -> Any:
        if not isinstance(call_id, str) or (len(call_id) == 9 and call_id.isalnum()):
            return call_id
        return hashlib.sha256(call_id.encode()).hexdigest()[:9]

    out = []
    for m in messages:
        if m.get("tool_calls"):
            m = {**m, "tool_calls": [{**c, "id": short(c.get("id"))} for c in m["tool_calls"]]}
        if m.get("role") == "tool" and "tool_call_id" in m:
            m = {**m, "tool_call_id": short(m["tool_call_id"])}
        out.append(m)
    return out


def _calls_in_content(message: dict) -> dict:
    """For templates that render no ``tool_calls`` (LFM2's expect the calls in the text):
    each call as a JSON line after the turn's text, as the ChatML fallback writes them."""
    message = _api_message(message)
    calls = message.pop("tool_calls", None)
    if calls:
        lines = [json.dumps({"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"])},
                            ensure_ascii=False) for c in calls]
        message["content"] = "\n".join(([message["content"]] if message.get("content") else []) + lines)
    elif message.get("content") is None:
        message["content"] = ""
    return message


def _arguments(arguments: Any) -> Any:
    try:
        return json.loads(arguments)
    except (TypeError, ValueError):
        return arguments


def _call_texts(messages: list[dict]) -> list[str]:
    """What shows that a history's calls are in a prompt: each call's name and the string
    values of its arguments (a name alone may come from the tools' list), at most
    ``_CALL_TEXTS`` of them (each is a scan of the prompt)."""
    texts: dict[str, None] = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            texts[call["function"]["name"]] = None
            arguments = _arguments(call["function"]["arguments"])
            if isinstance(arguments, dict):
                texts.update((v, None) for v in arguments.values() if isinstance(v, str) and v)
    return list(texts)[:_CALL_TEXTS]


_CALL_TEXTS = 16


def _placed(text: str, prompt: str) -> bool:
    """``text`` is in the prompt as it is or JSON-escaped (templates write arguments with tojson)."""
    return text in prompt or json.dumps(text, ensure_ascii=False)[1:-1] in prompt


_SHAPES: tuple[Callable[[dict], dict], ...] = (_template_message, _api_message, _calls_in_content)
# Each step plainer than the one before; a template that renders the messages as they are never meets them.
_PLAINER: tuple[Callable[[list[dict]], list[dict]], ...] = (
    lambda ms: ms,
    _later_system_as_user,
    lambda ms: _thinking_with_content(_later_system_as_user(ms)),
    lambda ms: _nine_char_ids(_thinking_with_content(_later_system_as_user(ms))),
)


def token_text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def read_json_file(path: Path) -> dict[str, Any]:
    """A JSON object file's content ({} when it is missing or holds no JSON object)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _config_templates(config: dict[str, Any]) -> tuple[str | None, str | None]:
    """``tokenizer_config.json``'s ``chat_template``: (the template, the one for requests
    with tools).  The list form names its templates; as transformers does, ``tool_use``
    serves requests with tools and ``default`` the others."""
    raw = config.get("chat_template")
    if isinstance(raw, str):
        return raw, None
    if not isinstance(raw, list):
        return None, None
    named = {t.get("name"): t.get("template") for t in raw
             if isinstance(t, dict) and isinstance(t.get("template"), str)}
    default, tool_use = named.get("default"), named.get("tool_use")
    return (default, tool_use) if default is not None else (tool_use, None)


def _template_source(root: Path, template_file: str | None, tokenizer_dir: str | None,
                     config: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """The template's source, a name for it and its tool_use variant: the templates file,
    the tokenizer's ``chat_template.jinja``, else its ``tokenizer_config.json`` entry."""
    candidates = []
    if template_file:
        candidates.append(root / "templates" / template_file)
    if tokenizer_dir:
        candidates.append(root / tokenizer_dir / "chat_template.jinja")
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8"), path.name, None
    source, tool_use = _config_templates(config)
    return (source, f"{tokenizer_dir}/tokenizer_config.json", tool_use) if source is not None else None


def _with_tokens(source: str, name: str, config: dict[str, Any], tool_use: str | None = None) -> ChatTemplate:
    """The template with the BOS and EOS texts its tokenizer_config names."""
    return ChatTemplate(source, name, token_text(config.get("bos_token")), token_text(config.get("eos_token")),
                        tool_use)


def load_template(root: Path | None, template_file: str | None, tokenizer_dir: str | None) -> ChatTemplate | None:
    """The family's chat template from the tokenizer test data, or None (then ChatML is
    used): for the simulated engine and the tests only, never a real engine's prompt."""
    if root is None:
        return None
    config = read_json_file(root / tokenizer_dir / "tokenizer_config.json") if tokenizer_dir else {}
    found = _template_source(root, template_file, tokenizer_dir, config)
    if found is None:
        return None
    source, name, tool_use = found
    try:
        return _with_tokens(source, name, config, tool_use)
    except Exception as exc:  # jinja2 missing or a template it cannot compile
        logger.warning("chat template %s unusable (%s); prompts use ChatML", name, exc)
        return None


def load_model_template(model_dir: Path) -> ChatTemplate | None:
    """A Hugging Face model directory's chat template (None: it has none): its
    ``chat_template.jinja`` wins over ``tokenizer_config.json``'s, as in transformers.
    A template that does not compile is an error: the model's prompts cannot be made."""
    config = read_json_file(model_dir / "tokenizer_config.json")
    jinja = model_dir / "chat_template.jinja"
    source: str | None
    tool_use: str | None = None
    if jinja.is_file():
        source, name = jinja.read_text(encoding="utf-8"), str(jinja)
    else:
        (source, tool_use), name = _config_templates(config), str(model_dir / "tokenizer_config.json")
    if source is None:
        return None
    try:
        return _with_tokens(source, name, config, tool_use)
    except Exception as exc:
        raise ValueError(f"chat template {name} does not compile: {exc}") from None
