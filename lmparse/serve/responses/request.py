"""``POST /v1/responses`` requests as one OpenAI-shaped ``GenerationRequest``.

``input`` items become chat messages: ``message`` (``developer`` is a system turn, images
and files are placeholders), ``function_call`` / ``custom_tool_call`` with the
``reasoning`` and assistant ``message`` items around them folded into one assistant turn,
``function_call_output`` / ``custom_tool_call_output`` as tool turns.  A reasoning item is
read from its ``content``, else from an ``encrypted_content`` blob lmparse sealed, else
from its summary; one it cannot read is left out.  ``previous_response_id`` puts the
stored conversation first; ``instructions`` are a system turn for this request only.

Tools are mapped by ``tools`` (what the model is offered, and the names back).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ...request import ParserRequest
from ..content import openai_text
from ..engines.base import GenerationRequest, assistant_message
from ..errors import RequestError
from ..signing import Signer
from ..sampling import extra_fields, parse_sampling
from ..validate import (OPENAI_SAMPLING, arguments_json, checked, format_type, optional_bool, optional_int,
                        optional_number, optional_str, require)
from .store import ResponseStore
from .tools import ToolMap, offered_tools, tool_choice

__all__ = ["ResponsesOptions", "parse_request", "conversation_turns", "DIALECTS", "DIALECT_HEADER"]

logger = logging.getLogger("lmparse.serve")

_ROLES = ("user", "system", "developer", "assistant")
# Items of tools lmparse never offers (hosted tools, computer use, MCP ...): nothing the
# model wrote, so a replay of them is left out of the prompt.
_HOSTED_ITEMS = ("web_search_call", "file_search_call", "computer_call", "computer_call_output",
                 "image_generation_call", "code_interpreter_call", "local_shell_call", "local_shell_call_output",
                 "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_list_tools",
                 "mcp_approval_request", "mcp_approval_response", "mcp_call", "tool_search_call",
                 "tool_search_output", "compaction_trigger", "program", "program_output",
                 "additional_tools")
_INCLUDABLE = ("reasoning.encrypted_content", "message.output_text.logprobs", "file_search_call.results",
               "web_search_call.results", "web_search_call.action.sources", "message.input_image.image_url",
               "computer_call_output.output.image_url", "code_interpreter_call.outputs")
# How a stream is written: OpenAI's Responses API (the default) or the Open Responses
# specification's, chosen per server (--responses-dialect) or per request (DIALECT_HEADER).
DIALECTS = ("openai", "openresponses")
DIALECT_HEADER = "x-lmparse-responses-dialect"
_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_SUMMARIES = ("auto", "concise", "detailed")


class ResponsesOptions:
    __slots__ = ("model", "stream", "tools", "encrypted_reasoning", "logprobs", "summary", "store",
                 "previous_response_id", "new_messages", "conversation", "echo", "signer", "ignored_tools",
                 "open_responses")

    def __init__(self, model: str, stream: bool, tools: ToolMap, signer: Signer) -> None:
        self.model = model
        self.stream = stream
        self.tools = tools
        self.signer = signer
        self.encrypted_reasoning = False  # include: ["reasoning.encrypted_content"]
        self.logprobs = False  # include: ["message.output_text.logprobs"]
        self.summary = False  # reasoning.summary asked for
        self.store: ResponseStore | None = None  # where to keep the response (store: true)
        self.previous_response_id: str | None = None
        self.new_messages: list[dict] = []  # this request's input turns, without instructions
        self.conversation: list[dict] = []  # the turns continued, then new_messages
        self.echo: dict[str, Any] = {}  # request fields the response object repeats
        self.ignored_tools: list[str] = []
        # The Open Responses event names (response.reasoning.delta) and a closing [DONE],
        # instead of OpenAI's (response.reasoning_text.delta, no [DONE]): see DIALECTS.
        self.open_responses = False


# ---- input items --------------------------------------------------------------------------------


class _Turns:
    """Chat messages from items; assistant-side items in a row make one assistant turn
    (its texts and reasoning collected in lists, joined once when the turn ends)."""

    def __init__(self, history: Sequence[dict] = ()) -> None:
        self._messages: list[dict] = []
        self._texts: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[dict] | None = None  # not None while an assistant turn is open
        self.call_ids: set[str] = set()  # the calls a tool output may answer: the history's and the input's
        for message in history:
            self._note_calls(message)

    def _note_calls(self, message: dict) -> None:
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self.call_ids.add(call["id"])

    def _end_assistant(self) -> None:
        if self._calls is not None:
            self._messages.append(assistant_message(self._texts, self._reasoning, self._calls))
            self._texts, self._reasoning, self._calls = [], [], None

    def add(self, message: dict) -> None:
        self._end_assistant()
        self._messages.append(message)
        self._note_calls(message)

    def assistant_text(self, text: str) -> None:
        self._open()
        self._texts.append(text)

    def reasoning(self, text: str) -> None:
        self._open()
        self._reasoning.append(text)

    def call(self, call_id: str, name: str, arguments: str) -> None:
        self.call_ids.add(call_id)
        self._open().append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})

    def _open(self) -> list[dict]:
        """The open assistant turn's calls, opening the turn if none is."""
        if self._calls is None:
            self._calls = []
        return self._calls

    @property
    def messages(self) -> list[dict]:
        self._end_assistant()
        return self._messages


def _reasoning_text(item: dict, path: str, signer: Signer) -> str | None:
    content = item.get("content")
    if isinstance(content, list) and content:
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    opened = signer.open_reasoning(item.get("encrypted_content"))
    if opened is not None:
        return opened
    if item.get("encrypted_content") is not None:
        logger.debug("%s: an encrypted_content blob lmparse did not seal is left out of the prompt", path)
    summary = item.get("summary")
    if isinstance(summary, list) and summary:
        return "\n\n".join(p["text"] for p in summary if isinstance(p, dict) and isinstance(p.get("text"), str))
    return None


def _compacted(item: dict, path: str, signer: Signer) -> list[dict]:
    """The chat messages of a ``compaction`` item lmparse made (``POST /v1/responses/compact``);
    another provider's, or one sealed under another key, is left out of the prompt."""
    opened = signer.open_window(item.get("encrypted_content"))
    messages = json.loads(opened) if opened is not None else None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        logger.debug("%s: a compaction item lmparse did not make is left out of the prompt", path)
        return []
    return messages


def _nonempty_str(item: dict, field: str, path: str) -> str:
    """``item[field]``, refused unless it is a non-empty string."""
    message = f"{path}.{field} must be a non-empty string"
    value = checked(item.get(field), str, message, f"{path}.{field}")
    require(value, message, f"{path}.{field}")
    return value


def _item(item: Any, path: str, turns: _Turns, tool_map: ToolMap, signer: Signer,
          store: ResponseStore | None) -> None:
    require(isinstance(item, dict), f"{path} must be an object", path)
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "item_reference":
        ref = item.get("id")
        found = store.item(ref) if store is not None and isinstance(ref, str) else None
        require(found is not None, f"{path}.id: Item with id {ref!r} not found.", f"{path}.id")
        _item(found, path, turns, tool_map, signer, None)
    elif kind == "message":
        role = item.get("role")
        require(role in _ROLES, f"{path}.role must be one of {', '.join(_ROLES)}; got {role!r}", f"{path}.role")
        text = openai_text(item.get("content"), f"{path}.content")
        if role == "assistant":
            turns.assistant_text(text)
        else:
            turns.add({"role": "system" if role == "developer" else role, "content": text})
    elif kind == "reasoning":
        reasoning = _reasoning_text(item, path, signer)
        if reasoning:
            turns.reasoning(reasoning)
    elif kind == "function_call":
        name = _nonempty_str(item, "name", path)
        namespace = item.get("namespace") if isinstance(item.get("namespace"), str) else None
        arguments = arguments_json(item.get("arguments", "{}"), f"{path}.arguments")
        turns.call(_nonempty_str(item, "call_id", path), tool_map.flat(name, namespace), arguments)
    elif kind == "custom_tool_call":
        name = _nonempty_str(item, "name", path)
        value = item.get("input", "")
        require(isinstance(value, str), f"{path}.input must be a string", f"{path}.input")
        namespace = item.get("namespace") if isinstance(item.get("namespace"), str) else None
        turns.call(_nonempty_str(item, "call_id", path), tool_map.flat(name, namespace),
                   json.dumps({"input": value}, ensure_ascii=False))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        text = openai_text(output, f"{path}.output") if output is not None else ""
        call_id = _nonempty_str(item, "call_id", path)
        # As OpenAI: an output answers a call of the conversation (this input or the one it continues).
        require(call_id in turns.call_ids, f"{path}.call_id: no tool call with call_id {call_id!r} in the "
                "conversation for this output to answer", f"{path}.call_id")
        turns.add({"role": "tool", "tool_call_id": call_id, "content": text})
    elif kind == "compaction":
        window = _compacted(item, path, signer)
        for message in window:
            turns.add(message)
    elif kind in _HOSTED_ITEMS:
        logger.debug("%s: a %s item is left out of the prompt", path, kind)
    else:
        require(False, f"{path}.type {kind!r} is not an input item type", f"{path}.type")


# ---- the request --------------------------------------------------------------------------------


def _number(body: dict, field: str, default: float) -> float:
    """A sampling field, range-checked as Chat Completions checks it (the response echoes it)."""
    low, high = next((low, high) for name, low, high in OPENAI_SAMPLING if name == field)
    value = optional_number(body, field, low, high)
    return default if value is None else value


def _text_format(text: Any) -> dict | None:
    if text is None:
        return None
    require(isinstance(text, dict), "text must be an object", "text")
    fmt = text.get("format")
    if fmt is None:
        return None
    kind = format_type(fmt, "text.format")
    if kind != "json_schema":
        return None if kind == "text" else {"type": "json_object"}
    require(isinstance(fmt.get("schema"), dict), "text.format.schema must be a JSON schema object",
            "text.format.schema")
    return {"type": "json_schema", "schema": fmt["schema"], "name": fmt.get("name"), "strict": fmt.get("strict")}


def _reasoning(raw: Any) -> tuple[str | None, bool]:
    """``(effort, summary asked for)``."""
    if raw is None:
        return None, False
    require(isinstance(raw, dict), "reasoning must be an object", "reasoning")
    # Any string: clients add levels (Codex knows "ultra") before anyone documents them.
    effort = optional_str(raw, "effort", path="reasoning.effort", examples=_EFFORTS)
    field = "summary" if "summary" in raw else "generate_summary"
    summary = optional_str(raw, field, path=f"reasoning.{field}", examples=_SUMMARIES)
    return effort, summary is not None


def _include(raw: Any) -> list[str]:
    if raw is None:
        return []
    require(isinstance(raw, list) and all(isinstance(v, str) for v in raw), "include must be a list of strings",
            "include")
    unknown = [v for v in raw if v not in _INCLUDABLE]
    if unknown:  # a newer client's: nothing lmparse could add, not a reason to refuse the request
        logger.debug("include values ignored: %s", ", ".join(unknown))
    return raw


def parse_request(body: Any, default_model: str, signer: Signer, store: ResponseStore | None,
                  dialect: str = "openai",
                  recent: Mapping[str, list[dict]] | None = None) -> tuple[GenerationRequest, ResponsesOptions]:
    require(isinstance(body, dict), "the request body must be a JSON object", None)
    model = body.get("model", default_model)
    require(isinstance(model, str), "model must be a string", "model")
    for field, what in (("background", "background mode"), ("conversation", "conversation objects"),
                        ("prompt", "stored prompt templates")):
        if body.get(field) not in (None, False):
            raise RequestError(f"{field}: {what} are not supported by lmparse; send the input itself "
                               "(previous_response_id chains stored responses)", field)
    opts = ResponsesOptions(model, optional_bool(body, "stream"), ToolMap(), signer)
    opts.open_responses = dialect == "openresponses"
    functions = offered_tools(body.get("tools"), opts.tools, opts.ignored_tools)
    effort, opts.summary = _reasoning(body.get("reasoning"))
    parsed = _parser_request(body, functions, opts, effort)

    include = _include(body.get("include"))
    opts.store = store if optional_bool(body, "store", True) else None
    opts.encrypted_reasoning = "reasoning.encrypted_content" in include
    opts.logprobs = "message.output_text.logprobs" in include
    top = optional_int(body, "top_logprobs", minimum=0, maximum=20) or 0

    conversation = conversation_turns(body, opts, signer, store, recent)
    instructions = body.get("instructions")
    require(instructions is None or isinstance(instructions, str), "instructions must be a string", "instructions")
    messages = ([{"role": "system", "content": instructions}] if instructions else []) + conversation
    max_tokens = optional_int(body, "max_output_tokens")
    request = GenerationRequest(
        messages, functions, parsed, max_tokens=max_tokens, logprobs=opts.logprobs, top_logprobs=top,
        response_format=_text_format(body.get("text")),
        reasoning_effort=effort if effort not in (None, "none", "minimal") else None,
        sampling=parse_sampling(body), extra=extra_fields(body))
    metadata = body.get("metadata")
    require(metadata is None or isinstance(metadata, dict), "metadata must be an object", "metadata")
    for field in ("user", "safety_identifier", "prompt_cache_key"):  # echoed back: checked like the rest
        optional_str(body, field)
    optional_int(body, "max_tool_calls", minimum=0)  # limits hosted tools' calls: none run here
    optional_str(body, "truncation", ("auto", "disabled"))
    opts.echo = _echo(body, request, opts, effort, top, metadata or {})
    return request, opts


def conversation_turns(body: dict[str, Any], opts: ResponsesOptions, signer: Signer, store: ResponseStore | None,
                       recent: Mapping[str, list[dict]] | None = None) -> list[dict]:
    """The conversation ``previous_response_id`` continues (from ``recent``, a WebSocket's
    connection-local state, else the store), then the turns ``input`` adds (kept in
    ``opts.new_messages``), as chat messages; no ``instructions``."""
    previous = body.get("previous_response_id")
    require(previous is None or isinstance(previous, str), "previous_response_id must be a string",
            "previous_response_id")
    history = (recent[previous] if recent is not None and previous is not None and previous in recent
               else _history(previous, store))
    opts.previous_response_id = previous
    opts.new_messages = _input_turns(body.get("input"), previous, opts, signer, store, history)
    opts.conversation = history + opts.new_messages
    return opts.conversation


def _parser_request(body: dict[str, Any], functions: list[dict[str, Any]], opts: ResponsesOptions,
                    effort: str | None) -> ParserRequest:
    """The request value the parsers and the constraint read, made once from Responses' fields."""
    tools = {f["function"]["name"]: f["function"] for f in functions}
    choice = tool_choice(body.get("tool_choice"), opts.tools, list(tools))
    parallel = optional_bool(body, "parallel_tool_calls", True)
    kwargs = body.get("chat_template_kwargs")
    require(kwargs is None or isinstance(kwargs, dict), "chat_template_kwargs must be an object",
            "chat_template_kwargs")
    thinking = None
    for switch in ("enable_thinking", "thinking"):
        value = (kwargs or {}).get(switch)
        require(value is None or isinstance(value, bool), f"chat_template_kwargs.{switch} must be a boolean, got "
                f"{value!r}", f"chat_template_kwargs.{switch}")
        thinking = value if thinking is None else thinking
    if not kwargs and effort is not None:  # asking for an effort is asking for reasoning; "none" turns it off
        thinking = effort not in ("none", "minimal")
        kwargs = {"enable_thinking": thinking}
    return ParserRequest(tools, choice, max_calls=None if parallel else 1, thinking=thinking, template_kwargs=kwargs)


_NOT_FOUND = "previous_response_not_found"


def _history(previous: str | None, store: ResponseStore | None) -> list[dict]:
    """The stored conversation ``previous_response_id`` continues (empty without one); an
    unknown id, or one whose ancestor is gone, is a 400 with OpenAI's ``previous_response_not_found``."""
    if previous is None:
        return []
    try:
        found = store.conversation(previous) if store is not None else None
    except KeyError as exc:
        found = None
        if exc.args and exc.args[0] != previous:
            raise RequestError(f"Previous response with id {exc.args[0]!r} (an ancestor of {previous!r}) "
                               "not found.", "previous_response_id", code=_NOT_FOUND) from None
    if found is None:
        raise RequestError(f"Previous response with id {previous!r} not found.", "previous_response_id",
                           code=_NOT_FOUND)
    return found


def _input_turns(raw_input: Any, previous: str | None, opts: ResponsesOptions, signer: Signer,
                 store: ResponseStore | None, history: list[dict]) -> list[dict]:
    """The new turns the request's ``input`` adds, as chat messages."""
    turns = _Turns(history)
    if isinstance(raw_input, str):
        turns.add({"role": "user", "content": raw_input})
    else:
        require(isinstance(raw_input, list) and (raw_input or previous is not None),
                "input must be a string or a non-empty list of input items", "input")
        for i, item in enumerate(raw_input):
            _item(item, f"input[{i}]", turns, opts.tools, signer, store)
    return turns.messages


def _echoed_tools(raw: Any) -> list[dict]:
    """``tools`` as the response object repeats them: a function tool always has
    ``description``, ``parameters`` and ``strict`` (null where the request left them out)."""
    echoed = []
    for tool in raw or ():
        if isinstance(tool, dict) and tool.get("type") == "function":
            tool = {**tool, **{key: None for key in ("description", "parameters", "strict") if key not in tool}}
        echoed.append(tool)
    return echoed


def _echoed_text(text: dict | None) -> dict:
    """``text`` as the response repeats it: a ``json_schema`` format always has ``description``
    (null if not sent) and ``strict`` (false if not sent, OpenAI's default)."""
    if not text:
        return {"format": {"type": "text"}}
    fmt = text.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        fmt = {**fmt, "description": fmt.get("description"), "strict": fmt.get("strict") is True}
        return {**text, "format": fmt}
    return text


def _echo(body: dict[str, Any], request: GenerationRequest, opts: ResponsesOptions, effort: str | None, top: int,
          metadata: dict[str, Any]) -> dict[str, Any]:
    """The request's settings as the response object repeats them.  Sampling fields a request
    leaves out are echoed as OpenAI's defaults (1 and 0), which is what OpenAI reports."""
    return {
        "instructions": body.get("instructions"), "max_output_tokens": request.max_tokens, "metadata": metadata,
        "parallel_tool_calls": request.parallel_tool_calls, "previous_response_id": opts.previous_response_id,
        "reasoning": {"effort": effort, "summary": (body.get("reasoning") or {}).get("summary")},
        "store": opts.store is not None, "temperature": _number(body, "temperature", 1.0),
        "text": _echoed_text(body.get("text")), "tool_choice": body.get("tool_choice") or "auto",
        "tools": _echoed_tools(body.get("tools")), "top_p": _number(body, "top_p", 1.0),
        "presence_penalty": _number(body, "presence_penalty", 0.0),
        "frequency_penalty": _number(body, "frequency_penalty", 0.0), "top_logprobs": top,
        "truncation": body.get("truncation") or "disabled", "user": body.get("user"),
        "max_tool_calls": body.get("max_tool_calls"), "safety_identifier": body.get("safety_identifier"),
        "prompt_cache_key": body.get("prompt_cache_key"), "background": False, "service_tier": "default",
    }
