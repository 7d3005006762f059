"""OpenAI ``/v1/chat/completions``: request validation and conversion, JSON and SSE replies.

Emitter rules (ECOSYSTEM.md §1.4): every chunk is ``chat.completion.chunk`` with one id,
created and model; a tool index's first delta carries id, type and name (arguments
``""``), later ones only argument fragments; usage only in a final ``choices: []``
chunk when ``stream_options.include_usage``; unset keys are omitted; ``[DONE]`` ends.
The reasoning field is ``reasoning_content``, ``reasoning`` or both.
"""

from __future__ import annotations

import secrets
import time
from contextlib import aclosing
from typing import Any
from collections.abc import AsyncGenerator

import orjson

from .engines.base import GenerationRequest
from .runner import ChatRunner
from .content import openai_text
from .errors import openai_error_body as error_body
from .sampling import extra_fields, parse_sampling
from .validate import (OPENAI_SAMPLING, arguments_json, check_sampling, check_tool_schemas, format_type, optional_bool,
                       optional_int, optional_str, parser_request, require, stop_list)

__all__ = ["OpenAIOptions", "parse_request", "stream_response", "complete_response", "error_body",
           "REASONING_FIELDS"]

REASONING_FIELDS = {"reasoning_content": ("reasoning_content",), "reasoning": ("reasoning",),
                    "both": ("reasoning_content", "reasoning")}
_ROLES = ("system", "developer", "user", "assistant", "tool")


class OpenAIOptions:
    __slots__ = ("model", "stream", "include_usage", "logprobs", "reasoning_fields")

    def __init__(self, model: str, stream: bool, include_usage: bool, logprobs: bool,
                 reasoning_fields: tuple[str, ...]) -> None:
        self.model = model
        self.stream = stream
        self.include_usage = include_usage
        self.logprobs = logprobs
        self.reasoning_fields = reasoning_fields


# ---- request ------------------------------------------------------------------------------


def _text(content: Any, path: str, required: bool) -> str | None:
    """Message content as text: a string, or a list of parts (images and files as placeholders)."""
    if content is None:
        require(not required, f"{path} is required", path)
        return None
    return openai_text(content, path)


def response_format(raw: Any, path: str = "response_format") -> dict | None:
    """Chat Completions ``response_format`` in the engine-neutral shape (None: plain text)."""
    if raw is None:
        return None
    kind = format_type(raw, path)
    if kind != "json_schema":
        return None if kind == "text" else {"type": "json_object"}
    spec = raw.get("json_schema")
    require(isinstance(spec, dict) and isinstance(spec.get("schema", {}), dict),
            f"{path}.json_schema must be an object with a JSON schema in schema", f"{path}.json_schema")
    return {"type": "json_schema", "schema": spec.get("schema", {}), "name": spec.get("name"),
            "strict": spec.get("strict")}


def _message(raw: Any, i: int) -> dict:
    path = f"messages[{i}]"
    require(isinstance(raw, dict), f"{path} must be an object", path)
    role = raw.get("role")
    require(role in _ROLES, f"{path}.role must be one of {', '.join(_ROLES)}; got {role!r}", f"{path}.role")
    msg: dict[str, Any] = {"role": "system" if role == "developer" else role}
    msg["content"] = _text(raw.get("content"), f"{path}.content", required=role != "assistant")
    if role == "assistant":
        # Either name on input, whichever --reasoning-field answers with (a null one is absent).
        reasoning = next((raw[k] for k in ("reasoning_content", "reasoning") if isinstance(raw.get(k), str)), None)
        if reasoning is not None:
            msg["reasoning_content"] = reasoning
        calls = raw.get("tool_calls")
        if calls is not None:
            require(isinstance(calls, list), f"{path}.tool_calls must be a list", f"{path}.tool_calls")
            msg["tool_calls"] = [_history_call(call, f"{path}.tool_calls[{j}]") for j, call in enumerate(calls)]
    elif role == "tool":
        call_id = raw.get("tool_call_id")
        require(isinstance(call_id, str) and call_id, f"{path}.tool_call_id must be a non-empty string",
                f"{path}.tool_call_id")
        msg["tool_call_id"] = call_id
    return msg


def _history_call(call: Any, path: str) -> dict:
    require(isinstance(call, dict), f"{path} must be an object", path)
    fn = call.get("function")
    require(isinstance(fn, dict), f"{path}.function must be an object", f"{path}.function")
    name = fn.get("name")
    require(isinstance(name, str) and name, f"{path}.function.name must be a non-empty string", f"{path}.function.name")
    arguments = arguments_json(fn.get("arguments", "{}"), f"{path}.function.arguments")
    call_id = call.get("id")
    require(call_id is None or isinstance(call_id, str), f"{path}.id must be a string", f"{path}.id")
    return {"id": call_id or "", "type": "function", "function": {"name": name, "arguments": arguments}}


def parse_request(body: Any, default_model: str, reasoning_field: str) -> tuple[GenerationRequest, OpenAIOptions]:
    require(isinstance(body, dict), "the request body must be a JSON object", None)
    messages = body.get("messages")
    require(isinstance(messages, list) and messages, "messages must be a non-empty list", "messages")
    normalized = [_message(m, i) for i, m in enumerate(messages)]
    model = body.get("model", default_model)
    require(isinstance(model, str), "model must be a string", "model")
    tools = body.get("tools") or []
    require(isinstance(tools, list), "tools must be a list of tool definitions", "tools")
    check_tool_schemas(tools, "tools")
    parsed = parser_request(body)
    n = optional_int(body, "n")
    require(n in (None, 1), "n must be 1: one choice per request", "n")
    check_sampling(body, OPENAI_SAMPLING)
    optional_str(body, "user")  # accepted and unused, but a string as OpenAI requires
    max_tokens = optional_int(body, "max_completion_tokens")
    if max_tokens is None:
        max_tokens = optional_int(body, "max_tokens")
    stream = optional_bool(body, "stream")
    options = body.get("stream_options") or {}
    require(isinstance(options, dict), "stream_options must be an object", "stream_options")
    include_usage = optional_bool(options, "include_usage", path="stream_options.include_usage")
    logprobs = optional_bool(body, "logprobs")
    top = optional_int(body, "top_logprobs", minimum=0, maximum=20) or 0
    require(not top or logprobs, "top_logprobs needs logprobs set to true", "top_logprobs")
    request = GenerationRequest(
        normalized,
        [{"type": "function", "function": dict(fn)} for fn in parsed.tools.values()],
        parsed,
        max_tokens=max_tokens,
        stop=stop_list(body.get("stop"), "stop"),
        logprobs=logprobs,
        top_logprobs=top,
        response_format=response_format(body.get("response_format")),
        reasoning_effort=optional_str(body, "reasoning_effort"),
        sampling=parse_sampling(body),
        extra=extra_fields(body),
    )
    return request, OpenAIOptions(model, stream, include_usage, logprobs, REASONING_FIELDS[reasoning_field])


# ---- response -------------------------------------------------------------------------------


def _delta_dict(message, fields: tuple[str, ...]) -> dict:
    out: dict[str, Any] = {}
    if message.reasoning_content is not None:
        for field in fields:
            out[field] = message.reasoning_content
    if message.content is not None:
        out["content"] = message.content
    if message.tool_calls:
        calls = []
        for call in message.tool_calls:
            fn = call.function
            arguments = (fn.arguments if fn is not None else None) or ""
            if call.id is not None:
                calls.append({"index": call.index, "id": call.id, "type": "function",
                              "function": {"name": fn.name if fn is not None else "", "arguments": arguments}})
            else:
                calls.append({"index": call.index, "function": {"arguments": arguments}})
        out["tool_calls"] = calls
    return out


_CHOICE_HEAD = b'{"index":0,"delta":'
_CHOICE_TAIL = b',"finish_reason":null}]}\n\n'


def _delta_json(message, keys: tuple[bytes, ...]) -> bytes | None:
    """The delta's JSON for the shapes nearly every token has (one text field, one call's
    argument fragment, nothing), written around the escaped text with no dict built;
    None for any other shape.  ``keys`` are the reasoning fields' ``"name":`` bytes."""
    calls, reasoning, content = message.tool_calls, message.reasoning_content, message.content
    if calls:
        call = calls[0]
        if reasoning is not None or content is not None or len(calls) != 1 or call.id is not None:
            return None
        fn = call.function
        arguments = orjson.dumps((fn.arguments if fn is not None else None) or "")
        return b'{"tool_calls":[{"index":%d,"function":{"arguments":%b}}]}' % (call.index, arguments)
    if reasoning is not None:
        if content is not None:
            return None
        text = orjson.dumps(reasoning)
        return b"{" + b",".join([key + text for key in keys]) + b"}"
    return b"" if content is None else b'{"content":' + orjson.dumps(content) + b"}"


def _ids() -> tuple[str, int]:
    return "chatcmpl-" + secrets.token_hex(12), int(time.time())


async def stream_response(runner: ChatRunner, opts: OpenAIOptions) -> AsyncGenerator[bytes, None]:
    """SSE bytes of one response."""
    rid, created = _ids()
    head = orjson.dumps({"id": rid, "object": "chat.completion.chunk", "created": created, "model": opts.model})
    prefix = b"data: " + head[:-1] + b',"choices":['
    fields, want_logprobs = opts.reasoning_fields, opts.logprobs
    keys = tuple(orjson.dumps(field) + b":" for field in fields)
    choice_head = prefix + _CHOICE_HEAD
    yield prefix + orjson.dumps({"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}) + b"]}\n\n"
    try:
        async with aclosing(runner.steps()) as steps:
            async for step in steps:
                events: list[bytes] = []  # the step's events, sent as one body
                for d in step:
                    lp = d.logprobs if want_logprobs else None
                    written = None if lp else _delta_json(d.message, keys)
                    if written is not None:
                        if written:
                            events.append(choice_head + written + _CHOICE_TAIL)
                    elif (delta := _delta_dict(d.message, fields)) or lp:
                        choice: dict[str, Any] = {"index": 0, "delta": delta}
                        if lp:
                            choice["logprobs"] = {"content": lp}
                        choice["finish_reason"] = None
                        events.append(prefix + orjson.dumps(choice) + b"]}\n\n")
                    if d.finish_reason is not None:
                        # Its own chunk: the SDK fires a call's done event only for calls it saw
                        # before the chunk that carries the finish reason.
                        finish = {"index": 0, "delta": {}, "finish_reason": d.finish_reason}
                        events.append(prefix + orjson.dumps(finish) + b"]}\n\n")
                if events:
                    yield b"".join(events)
    except Exception as exc:  # the engine failed mid-stream: tell the client, then end cleanly
        yield b"data: " + orjson.dumps(error_body(runner.failure(exc), kind="server_error")) + b"\n\n"
        yield b"data: [DONE]\n\n"
        return
    if opts.include_usage:
        yield prefix + b'],"usage":' + orjson.dumps(runner.usage.openai()) + b"}\n\n"
    yield b"data: [DONE]\n\n"


async def complete_response(runner: ChatRunner, opts: OpenAIOptions) -> dict:
    """The non-streaming reply: the fold of exactly the deltas a stream would carry."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, list] = {}
    logprobs: list[dict] = []
    finish = None
    async with aclosing(runner.run()) as deltas:
        async for d in deltas:
            m = d.message
            if m.reasoning_content is not None:
                reasoning.append(m.reasoning_content)
            if m.content is not None:
                content.append(m.content)
            for call in m.tool_calls or ():
                entry = calls.setdefault(call.index, [call.id, call.function.name if call.function else None, []])
                if call.function is not None and call.function.arguments:
                    entry[2].append(call.function.arguments)
            if d.logprobs:
                logprobs.extend(d.logprobs)
            if d.finish_reason is not None:
                finish = d.finish_reason
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content else None}
    if reasoning:
        for field in opts.reasoning_fields:
            message[field] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": "".join(args)}}
            for _, (cid, name, args) in sorted(calls.items())
        ]
    rid, created = _ids()
    return {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": opts.model,
        "choices": [{"index": 0, "message": message,
                     "logprobs": {"content": logprobs} if opts.logprobs else None, "finish_reason": finish}],
        "usage": runner.usage.openai(),
    }
