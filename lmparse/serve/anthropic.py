"""Anthropic ``/v1/messages``: request conversion, JSON and SSE replies.

Requests become the OpenAI-shaped ``GenerationRequest`` (``system``, ``tool_use`` /
``tool_result`` history, ``thinking``, ``tool_choice`` auto / any / tool / none).
Replies follow ECOSYSTEM.md §2.3: ``event:`` lines, content blocks indexed 0..n in
start order (``thinking`` with a closing ``signature_delta``, ``text``, ``tool_use``
starting with ``input: {}`` and fed by ``input_json_delta``), every block closed
before ``message_delta``, usage in ``message_start`` and ``message_delta``.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from contextlib import aclosing
from typing import Any
from collections.abc import AsyncGenerator

import jiter
import orjson

from ..request import AUTO, NO_TOOLS, REQUIRED, Named, ParserRequest, ToolChoice
from .content import anthropic_blocks_text, anthropic_text
from .engines.base import GenerationRequest, assistant_message
from .errors import anthropic_error_body as error_body
from .runner import ChatRunner, HeldSpace
from .signing import Signer
from .sampling import extra_fields, parse_sampling
from .validate import (ANTHROPIC_SAMPLING, arguments_json, check_sampling, joined_text, optional_bool,
                       optional_int, optional_str, require, stop_list)

__all__ = ["parse_request", "stream_response", "complete_response", "error_body", "AnthropicOptions"]

logger = logging.getLogger("lmparse.serve")


class AnthropicOptions:
    __slots__ = ("model", "stream", "signer", "ignored_tools")

    def __init__(self, model: str, stream: bool, signer: Signer, ignored_tools: list[str] | None = None) -> None:
        self.model = model
        self.stream = stream
        self.signer = signer
        self.ignored_tools = ignored_tools or []


# ---- request ------------------------------------------------------------------------------

# Blocks of Anthropic's own server tools in a replayed assistant turn: nothing a local
# model wrote or can continue, so they are left out of the prompt.
_SERVER_BLOCK = re.compile(r"^(?:server_tool_use|mcp_tool_use|mcp_tool_result|container_upload|[a-z_]+_tool_result)$")
# Anthropic-defined tool types (web_search_20250305, bash_20250124, ...): run by Anthropic's
# servers or defined by its schemas, not something to offer a local model as a function.
_HOSTED_TOOL = re.compile(r"^(?:[a-z][a-z0-9_]{0,60}_\d{8}|mcp_toolset)$")


def _convert_message(raw: Any, i: int, signer: Signer) -> list[dict]:
    path = f"messages[{i}]"
    require(isinstance(raw, dict), f"{path} must be an object", path)
    role = raw.get("role")
    require(role in ("user", "assistant", "system"),
            f"{path}.role must be 'user', 'assistant' or 'system'; got {role!r}", f"{path}.role")
    content = raw.get("content")
    if role == "system":  # a system turn anywhere (Claude Code's mid-conversation system beta)
        return [{"role": "system", "content": anthropic_text(content, f"{path}.content")}]
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    require(isinstance(content, list), f"{path}.content must be a string or a list of blocks", f"{path}.content")
    if role == "user":
        return _user_turn(content, path)
    return [_assistant_turn(content, path, signer)]


def _user_turn(content: list, path: str) -> list[dict]:
    """Tool results become tool messages (in order); the other blocks one user message after them."""
    results: list[dict] = []
    blocks: list[tuple[str, Any]] = []
    for j, block in enumerate(content):
        bpath = f"{path}.content[{j}]"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            tool_id = block.get("tool_use_id")
            require(isinstance(tool_id, str) and tool_id, f"{bpath}.tool_use_id must be a non-empty string",
                    f"{bpath}.tool_use_id")
            text = anthropic_text(block.get("content", ""), f"{bpath}.content")
            if block.get("is_error"):
                text = f"Error: {text}"
            results.append({"role": "tool", "tool_call_id": tool_id, "content": text})
        else:
            blocks.append((bpath, block))
    if blocks or not results:
        results.append({"role": "user", "content": anthropic_blocks_text(blocks)})
    return results


def _assistant_turn(content: list, path: str, signer: Signer) -> dict:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict] = []
    for j, block in enumerate(content):
        bpath = f"{path}.content[{j}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            require(isinstance(block.get("text"), str), f"{bpath}.text must be a string", f"{bpath}.text")
            texts.append(block["text"])
        elif kind == "thinking":
            text = block.get("thinking")
            require(isinstance(text, str), f"{bpath}.thinking must be a string", f"{bpath}.thinking")
            if signer.verify_thinking(text, block.get("signature")):
                thinking.append(text)  # lmparse's own: the model's reasoning, back in the history
            else:
                logger.debug("%s: a thinking block lmparse did not sign is left out of the prompt", bpath)
        elif kind == "redacted_thinking" or (isinstance(kind, str) and _SERVER_BLOCK.match(kind)):
            continue
        elif kind == "tool_use":
            name = block.get("name")
            require(isinstance(name, str) and name, f"{bpath}.name must be a non-empty string", f"{bpath}.name")
            require(isinstance(block.get("id"), str), f"{bpath}.id must be a string", f"{bpath}.id")
            require(isinstance(block.get("input", {}), dict), f"{bpath}.input must be an object", f"{bpath}.input")
            arguments = arguments_json(block.get("input", {}), f"{bpath}.input")
            calls.append({"id": block["id"], "type": "function", "function": {"name": name, "arguments": arguments}})
        else:
            require(False, f"{bpath}.type {kind!r} is not supported in an assistant message", f"{bpath}.type")
    return assistant_message(texts, thinking, calls)


def _tools(raw: Any) -> tuple[list[dict], list[str]]:
    """The tools offered to the model as functions, and the hosted tools left out."""
    if raw is None:
        return [], []
    require(isinstance(raw, list), "tools must be a list", "tools")
    tools, ignored = [], []
    for i, tool in enumerate(raw):
        path = f"tools[{i}]"
        require(isinstance(tool, dict), f"{path} must be an object", path)
        kind = tool.get("type", "custom")
        if isinstance(kind, str) and _HOSTED_TOOL.match(kind):
            ignored.append(kind)
            continue
        require(kind in ("custom", None), f"{path}.type {kind!r} is not a custom tool nor an Anthropic tool type",
                f"{path}.type")
        name = tool.get("name")
        require(isinstance(name, str) and name, f"{path}.name must be a non-empty string", f"{path}.name")
        schema = tool.get("input_schema")
        require(isinstance(schema, dict), f"{path}.input_schema must be a JSON schema object", f"{path}.input_schema")
        require(schema.get("type") == "object", f"{path}.input_schema.type must be 'object'",
                f"{path}.input_schema.type")
        props = schema.get("properties")
        require(props is None or isinstance(props, dict), f"{path}.input_schema.properties must be an object",
                f"{path}.input_schema.properties")
        if tool.get("defer_loading") is True:
            continue  # tool search: not in the model's context until the client loads it
        tools.append({"type": "function",
                      "function": {"name": name, "description": tool.get("description"), "parameters": schema}})
    return tools, ignored


def _tool_choice(raw: Any, names: list[str]) -> tuple[ToolChoice | None, bool]:
    """Anthropic's tool_choice as the request value's, and whether parallel calls are allowed."""
    if raw is None:
        return None, True
    require(isinstance(raw, dict), "tool_choice must be an object", "tool_choice")
    kind = raw.get("type")
    parallel = not optional_bool(raw, "disable_parallel_tool_use", path="tool_choice.disable_parallel_tool_use")
    if kind in ("auto", "none"):
        return (AUTO if kind == "auto" else NO_TOOLS), parallel
    if kind == "any":
        require(bool(names), "tool_choice any needs a non-empty tools list", "tool_choice.type")
        return REQUIRED, parallel
    if kind == "tool":
        name = raw.get("name")
        require(isinstance(name, str) and name in names,
                f"tool_choice.name must name one of the tools ({', '.join(names) or 'none'}); got {name!r}",
                "tool_choice.name")
        return Named(name), parallel
    require(False, f"tool_choice.type must be auto, any, tool or none; got {kind!r}", "tool_choice.type")
    return None, True


def _thinking(raw: Any) -> bool | None:
    if raw is None:
        return None
    require(isinstance(raw, dict), "thinking must be an object", "thinking")
    kind = raw.get("type")
    if kind == "enabled":
        optional_int(raw, "budget_tokens", path="thinking.budget_tokens")
        return True
    if kind == "disabled":
        return False
    require(kind in ("adaptive", "between_tools"),
            f"thinking.type must be enabled, disabled or adaptive; got {kind!r}", "thinking.type")
    return None  # the model decides: the family's default


_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _output_config(raw: Any) -> tuple[str | None, dict | None]:
    """``output_config``: the reasoning effort (for the chat template) and a JSON-schema format."""
    if raw is None:
        return None, None
    require(isinstance(raw, dict), "output_config must be an object", "output_config")
    effort = optional_str(raw, "effort", path="output_config.effort", examples=_EFFORTS)
    fmt = raw.get("format")
    response_format = None
    if fmt is not None:
        require(isinstance(fmt, dict) and fmt.get("type") == "json_schema", "output_config.format.type must be "
                "'json_schema'", "output_config.format.type")
        require(isinstance(fmt.get("schema"), dict), "output_config.format.schema must be a JSON schema object",
                "output_config.format.schema")
        response_format = {"type": "json_schema", "schema": fmt["schema"], "name": "output"}
    # Templates know low / medium / high (gpt-oss's "Reasoning: high").
    return ({"xhigh": "high", "max": "high"}.get(effort, effort) if effort else None), response_format


def parse_request(body: Any, default_model: str, signer: Signer,
                  count_only: bool = False) -> tuple[GenerationRequest, AnthropicOptions]:
    """A Messages request (or, with ``count_only``, a count_tokens one: no ``max_tokens``)."""
    require(isinstance(body, dict), "the request body must be a JSON object", None)
    model = body.get("model", default_model)
    require(isinstance(model, str), "model must be a string", "model")
    max_tokens = optional_int(body, "max_tokens")
    require(count_only or max_tokens is not None, "max_tokens: Field required (an integer >= 1)", "max_tokens")
    check_sampling(body, ANTHROPIC_SAMPLING)
    optional_int(body, "top_k", minimum=0)
    sampling = parse_sampling(body)
    raw_messages = body.get("messages")
    require(isinstance(raw_messages, list) and raw_messages, "messages must be a non-empty list", "messages")
    metadata = body.get("metadata")
    require(metadata is None or isinstance(metadata, dict), "metadata must be an object", "metadata")
    cm = body.get("context_management")
    require(cm is None or isinstance(cm, dict), "context_management must be an object", "context_management")
    messages: list[dict] = []
    system = body.get("system")
    if system is not None:
        messages.append({"role": "system", "content": joined_text(system, "system", "block")})
    for i, raw in enumerate(raw_messages):
        messages.extend(_convert_message(raw, i, signer))
    tools, ignored = _tools(body.get("tools"))
    functions = {t["function"]["name"]: t["function"] for t in tools}
    choice, parallel = _tool_choice(body.get("tool_choice"), list(functions))
    thinking = _thinking(body.get("thinking"))
    parsed = ParserRequest(functions, choice, max_calls=None if parallel else 1, thinking=thinking,
                           template_kwargs=None if thinking is None else {"enable_thinking": thinking})
    effort, response_format = _output_config(body.get("output_config"))
    request = GenerationRequest(messages, tools, parsed, max_tokens=max_tokens,
                                stop=stop_list(body.get("stop_sequences"), "stop_sequences"),
                                response_format=response_format,
                                reasoning_effort=effort, sampling=sampling, extra=extra_fields(body))
    return request, AnthropicOptions(model, optional_bool(body, "stream"), signer, ignored)


# ---- response: content blocks from deltas ------------------------------------------------------


class _Blocks:
    """Turns runner deltas into content-block events and keeps the blocks' final state.
    A thinking block closes with lmparse's signature of its text (``signing.Signer``), so
    a client that replays it gets the reasoning back into the prompt.  Whitespace alone
    opens no text block; it goes out in front of the text that follows it, if any.
    A stream passes ``keep=False``: then only a thinking block's text is kept (for its
    signature), so a long answer is not held whole while it streams."""

    def __init__(self, signer: Signer, keep: bool = True) -> None:
        self._signer = signer
        self._keep = keep
        self._space = HeldSpace()
        self.content: list[dict] = []
        self._kind: str | None = None
        self._parts: list[str] = []  # the open block's text (thinking, text or input JSON)
        self._call_index = -1

    def feed(self, message, events: list) -> None:
        if message.reasoning_content:
            self._text("thinking", message.reasoning_content, events)
        if message.content:
            self._text("text", message.content, events)
        for call in message.tool_calls or ():
            fn = call.function
            if call.id is not None:
                self.close(events)
                self._open({"type": "tool_use", "id": call.id, "name": fn.name if fn else "", "input": {}}, events)
                self._kind, self._call_index = "tool_use", call.index
            if fn is not None and fn.arguments and self._kind == "tool_use" and call.index == self._call_index:
                if self._keep:
                    self._parts.append(fn.arguments)
                events.append(("content_block_delta", {"type": "content_block_delta", "index": len(self.content) - 1,
                               "delta": {"type": "input_json_delta", "partial_json": fn.arguments}}))

    def _text(self, kind: str, text: str, events: list) -> None:
        if self._kind != kind:
            if kind == "text":
                if self._space.hold(text):  # whitespace alone opens no text block
                    return
                text = self._space.before(text)
            self.close(events)
            self._open({"type": kind, kind: "", "signature": ""} if kind == "thinking" else {"type": kind, kind: ""},
                       events)
            self._kind = kind
        if self._keep or kind == "thinking":
            self._parts.append(text)
        events.append(("content_block_delta", {"type": "content_block_delta", "index": len(self.content) - 1,
                       "delta": {"type": f"{kind}_delta", kind: text}}))

    def _open(self, block: dict, events: list) -> None:
        if block["type"] != "text":
            self._space.drop()
        self.content.append(dict(block))
        self._parts = []
        events.append(("content_block_start", {"type": "content_block_start", "index": len(self.content) - 1,
                                               "content_block": block}))

    def close(self, events: list) -> None:
        kind = self._kind
        if kind is None:
            return
        index = len(self.content) - 1
        block = self.content[index]
        joined = "".join(self._parts)
        if kind == "tool_use":
            block["input"] = _tool_input(joined)
        else:
            block[kind] = joined
        if kind == "thinking":
            block["signature"] = signature = self._signer.thinking_signature(joined)
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                           "delta": {"type": "signature_delta", "signature": signature}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        self._kind, self._parts = None, []


def _tool_input(arguments: str) -> dict:
    """A tool_use block's ``input``: its JSON, or — cut by ``max_tokens`` — what the SDK's own
    stream accumulator (jiter in partial mode) makes of the prefix, so both agree."""
    if not arguments:
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        try:
            value = jiter.from_json(arguments.encode(), partial_mode=True)
        except ValueError:
            value = {}
    return value if isinstance(value, dict) else {}


def _stop_reason(runner: ChatRunner) -> tuple[str, str | None]:
    finish = runner.finish_reason
    if finish == "length":
        return "max_tokens", None
    if finish == "tool_calls" or runner.tool_calls:
        return "tool_use", None
    if runner.stop_sequence is not None:
        return "stop_sequence", runner.stop_sequence
    return "end_turn", None


def _usage(runner: ChatRunner, output_tokens: int) -> dict:
    """Anthropic counts the prompt tokens read from the cache apart from ``input_tokens``."""
    usage = runner.usage
    return {"input_tokens": usage.prompt_tokens - usage.cached_tokens, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": usage.cached_tokens, "output_tokens": output_tokens}


def _event(name: str, data: dict) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def _message_id() -> str:
    return "msg_" + secrets.token_hex(12)


async def stream_response(runner: ChatRunner, opts: AnthropicOptions) -> AsyncGenerator[bytes, None]:
    start: dict[str, Any] = {"id": _message_id(), "type": "message", "role": "assistant", "model": opts.model,
                             "content": [], "stop_reason": None, "stop_sequence": None, "usage": _usage(runner, 0)}
    yield _event("message_start", {"type": "message_start", "message": start})
    yield _event("ping", {"type": "ping"})
    blocks = _Blocks(opts.signer, keep=False)
    events: list = []
    try:
        async with aclosing(runner.steps()) as steps:
            async for step in steps:  # a step's events go out as one body
                for d in step:
                    blocks.feed(d.message, events)
                if events:
                    yield b"".join(_event(name, data) for name, data in events)
                    events.clear()
    except Exception as exc:  # the engine failed mid-stream
        yield _event("error", error_body(runner.failure(exc), "api_error"))
        return
    blocks.close(events)
    reason, sequence = _stop_reason(runner)
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": reason, "stop_sequence": sequence},
                                     "usage": _usage(runner, runner.usage.completion_tokens)}))
    events.append(("message_stop", {"type": "message_stop"}))
    yield b"".join(_event(name, data) for name, data in events)


async def complete_response(runner: ChatRunner, opts: AnthropicOptions) -> dict:
    blocks = _Blocks(opts.signer)
    sink: list = []
    async with aclosing(runner.run()) as deltas:
        async for d in deltas:
            blocks.feed(d.message, sink)
            sink.clear()
    blocks.close(sink)
    reason, sequence = _stop_reason(runner)
    return {"id": _message_id(), "type": "message", "role": "assistant", "model": opts.model,
            "content": blocks.content, "stop_reason": reason, "stop_sequence": sequence,
            "usage": _usage(runner, runner.usage.completion_tokens)}
