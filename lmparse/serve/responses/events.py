"""Responses output: items and streaming events made straight from the runner's deltas.

Each run of one channel is one output item, in the model's order: ``reasoning`` (its text
as ``reasoning_text`` content; ``summary`` too when the request asked for one: a local
model's reasoning is its own summary), ``message`` (one ``output_text`` part),
``function_call`` or ``custom_tool_call`` (names mapped back through the ``ToolMap``).
Whitespace alone never opens a message (the ``\n\n`` between ``</think>`` and a tool
call): it is held, and goes out in front of the text that follows it, if any does.
An item is closed (its ``.done`` events, then ``output_item.done``) before the next one
opens.  Every event carries a ``sequence_number``; the stream opens with
``response.created`` / ``response.in_progress`` and ends with ``response.completed``,
``response.incomplete`` (``max_output_tokens``) or ``response.failed``.

The same builder makes the non-streaming reply without creating any event, so the
accumulated stream equals the JSON response by construction.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson

from ..engines.base import assistant_message
from ..runner import ChatRunner, HeldSpace, RunnerDelta
from .custom_input import CustomInput, final_input
from .request import ResponsesOptions

__all__ = ["ResponseBuilder", "sse", "DONE"]


# A reasoning_text part's delta / done events: OpenAI's names, and the Open Responses specification's.
_OPENAI_REASONING = ("response.reasoning_text.delta", "response.reasoning_text.done")
_OPEN_RESPONSES_REASONING = ("response.reasoning.delta", "response.reasoning.done")
# The Open Responses specification ends a stream with this literal; OpenAI's Responses API sends none.
DONE = b"data: [DONE]\n\n"


def sse(event: dict) -> bytes:
    return b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"


def _id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


class _Open:
    """The item being written: its dict in ``output``, its text so far."""

    __slots__ = ("kind", "index", "item", "parts", "call_index", "custom", "logprobs")

    def __init__(self, kind: str, index: int, item: dict, call_index: int = -1) -> None:
        self.kind = kind
        self.index = index
        self.item = item
        self.parts: list[str] = []
        self.call_index = call_index
        self.custom = CustomInput() if kind == "custom_tool_call" else None
        self.logprobs: list[dict] = []


class ResponseBuilder:
    def __init__(self, opts: ResponsesOptions, emit: bool) -> None:
        self.opts = opts
        self.emit = emit  # False: build the response only (no events)
        self.id = _id("resp_")
        self.output: list[dict] = []
        self._open: _Open | None = None
        self._space = HeldSpace()
        self._seq = 0
        self._events: list[dict] = []
        self._reasoning_events = _OPEN_RESPONSES_REASONING if opts.open_responses else _OPENAI_REASONING
        self.response: dict[str, Any] = {
            "id": self.id, "object": "response", "created_at": int(time.time()), "status": "in_progress",
            "completed_at": None, "error": None, "incomplete_details": None, "model": opts.model,
            "output": self.output, "usage": None, **opts.echo,
        }

    # ---- events ------------------------------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> None:
        if self.emit:
            fields["type"] = kind
            fields["sequence_number"] = self._seq
            self._seq += 1
            self._events.append(fields)

    def take(self) -> list[dict]:
        events, self._events = self._events, []
        return events

    def _snapshot(self) -> dict:
        """The response as a lifecycle event shows it (output complete only at the end)."""
        return orjson.loads(orjson.dumps(self.response))

    def start(self) -> None:
        if self.emit:
            snapshot = self._snapshot()
            self._event("response.created", response=snapshot)
            self._event("response.in_progress", response=snapshot)

    # ---- deltas --------------------------------------------------------------------------------

    def feed(self, d: RunnerDelta) -> None:
        m = d.message
        if m.reasoning_content:
            self._reasoning(m.reasoning_content)
        if m.content:
            self._text(m.content, d.logprobs if self.opts.logprobs else None)
        for call in m.tool_calls or ():
            fn = call.function
            if call.id is not None:
                self._begin_call(call.index, call.id, fn.name if fn is not None else "")
            if fn is not None and fn.arguments:
                self._arguments(call.index, fn.arguments)

    def _open_item(self, kind: str, item: dict, call_index: int = -1) -> _Open:
        self._close("completed")
        self._space.drop()
        opened = _Open(kind, len(self.output), item, call_index)
        self.output.append(item)
        self._open = opened
        self._event("response.output_item.added", output_index=opened.index, item=dict(item))
        return opened

    def _reasoning(self, text: str) -> None:
        opened = self._open
        if opened is None or opened.kind != "reasoning":
            opened = self._open_item("reasoning", {"id": _id("rs_"), "type": "reasoning", "summary": [],
                                                   "content": [], "status": "in_progress"})
            if self.opts.summary:
                self._event("response.reasoning_summary_part.added", item_id=opened.item["id"],
                            output_index=opened.index, summary_index=0, part={"type": "summary_text", "text": ""})
            self._event("response.content_part.added", item_id=opened.item["id"], output_index=opened.index,
                        content_index=0, part={"type": "reasoning_text", "text": ""})
        opened.parts.append(text)
        if self.opts.summary:
            self._event("response.reasoning_summary_text.delta", item_id=opened.item["id"],
                        output_index=opened.index, summary_index=0, delta=text)
        self._event(self._reasoning_events[0], item_id=opened.item["id"], output_index=opened.index,
                    content_index=0, delta=text)

    def _text(self, text: str, logprobs: list[dict] | None) -> None:
        opened = self._open
        if opened is None or opened.kind != "message":
            if self._space.hold(text):  # whitespace alone opens no message
                return
            text = self._space.before(text)
            opened = self._open_item("message", {"id": _id("msg_"), "type": "message", "role": "assistant",
                                                 "status": "in_progress", "content": []})
            self._event("response.content_part.added", item_id=opened.item["id"], output_index=opened.index,
                        content_index=0, part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
        opened.parts.append(text)
        if logprobs:
            opened.logprobs.extend(logprobs)
        self._event("response.output_text.delta", item_id=opened.item["id"], output_index=opened.index,
                    content_index=0, delta=text, logprobs=logprobs or [])

    def _begin_call(self, call_index: int, call_id: str, flat_name: str | None) -> None:
        # The parsers send a call's name with its id; a None name (none do) stays a null name.
        kind, name, namespace = (self.opts.tools.client(flat_name) if flat_name is not None
                                 else ("function", None, None))
        custom = kind == "custom"
        item_type = "custom_tool_call" if custom else "function_call"
        item = {"id": _id("ctc_" if custom else "fc_"), "type": item_type, "status": "in_progress",
                "call_id": call_id, "name": name, "input" if custom else "arguments": ""}
        if namespace is not None:
            item["namespace"] = namespace
        self._open_item(item_type, item, call_index)

    def _arguments(self, call_index: int, fragment: str) -> None:
        opened = self._open
        if opened is None or opened.call_index != call_index:
            return  # the parsers finish a call before the next begins; nothing else reaches here
        opened.parts.append(fragment)
        if opened.custom is not None:
            piece = opened.custom.feed(fragment)
            if piece:
                self._event("response.custom_tool_call_input.delta", item_id=opened.item["id"],
                            output_index=opened.index, delta=piece)
        else:
            self._event("response.function_call_arguments.delta", item_id=opened.item["id"],
                        output_index=opened.index, delta=fragment)

    # ---- closing ---------------------------------------------------------------------------------

    def _close(self, status: str) -> None:
        opened, self._open = self._open, None
        if opened is None:
            return
        item, index, text = opened.item, opened.index, "".join(opened.parts)
        item_id = item["id"]
        if opened.kind == "reasoning":
            part: dict[str, Any] = {"type": "reasoning_text", "text": text}
            item["content"] = [part]
            self._event(self._reasoning_events[1], item_id=item_id, output_index=index, content_index=0,
                        text=text)
            self._event("response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=part)
            if self.opts.summary:
                summary = {"type": "summary_text", "text": text}
                item["summary"] = [summary]
                self._event("response.reasoning_summary_text.done", item_id=item_id, output_index=index,
                            summary_index=0, text=text)
                self._event("response.reasoning_summary_part.done", item_id=item_id, output_index=index,
                            summary_index=0, part=summary)
            if self.opts.encrypted_reasoning:
                item["encrypted_content"] = self.opts.signer.seal_reasoning(text)
        elif opened.kind == "message":
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": opened.logprobs}
            item["content"] = [part]
            self._event("response.output_text.done", item_id=item_id, output_index=index, content_index=0,
                        text=text, logprobs=opened.logprobs)
            self._event("response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=part)
        elif opened.custom is not None:  # a custom_tool_call item
            item["input"] = final_input(text, opened.custom)
            self._event("response.custom_tool_call_input.done", item_id=item_id, output_index=index,
                        input=item["input"])
        else:
            item["arguments"] = text
            self._event("response.function_call_arguments.done", item_id=item_id, output_index=index,
                        name=item["name"], arguments=text)
        item["status"] = status
        self._event("response.output_item.done", output_index=index, item=item)

    def finish(self, runner: ChatRunner) -> dict:
        """Close the last item; the final response (also sent as the last event)."""
        incomplete = runner.finish_reason == "length"
        self._close("incomplete" if incomplete else "completed")
        usage = runner.usage
        now = int(time.time())
        self.response.update(
            status="incomplete" if incomplete else "completed", completed_at=None if incomplete else now,
            incomplete_details={"reason": "max_output_tokens"} if incomplete else None,
            usage={"input_tokens": usage.prompt_tokens, "input_tokens_details": {"cached_tokens": usage.cached_tokens},
                   "output_tokens": usage.completion_tokens,
                   "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                   "total_tokens": usage.prompt_tokens + usage.completion_tokens})
        self._event("response.incomplete" if incomplete else "response.completed", response=self.response)
        return self.response

    def fail(self, message: str) -> None:
        """The engine failed mid-stream: an ``error`` event, then ``response.failed``."""
        self._close("incomplete")
        self._event("error", code="server_error", message=message, param=None)
        self.response.update(status="failed", error={"code": "server_error", "message": message})
        self._event("response.failed", response=self.response)

    def turn(self) -> dict:
        """The output as the chat turn a later request continues from (``previous_response_id``)."""
        reasoning, texts, calls = [], [], []
        for item in self.output:
            kind = item["type"]
            if kind == "reasoning":
                reasoning.append(item["content"][0]["text"] if item["content"] else "")
            elif kind == "message":
                texts.append(item["content"][0]["text"] if item["content"] else "")
            else:
                flat = self.opts.tools.flat(item["name"], item.get("namespace"))
                arguments = item["arguments"] if kind == "function_call" else orjson.dumps(
                    {"input": item["input"]}).decode()
                calls.append({"id": item["call_id"], "type": "function",
                              "function": {"name": flat, "arguments": arguments}})
        return assistant_message(texts, reasoning, calls)
