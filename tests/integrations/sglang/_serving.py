"""One reply through SGLang's own parser classes, the way its serving_chat uses them.

Streaming (``OpenAIServingChat._generate_chat_stream``, per choice): one ``ReasoningParser`` and
one ``FunctionCallParser`` per request, built on the first delta; each delta goes to
``ReasoningParser.parse_stream_chunk`` first, its normal text to
``FunctionCallParser.parse_stream_chunk``; on the finishing delta both ``parse_stream_end`` run, and
``_check_for_unstreamed_tool_args`` sends what the detector's ``prev_tool_call_arr`` holds beyond
``streamed_args_for_tool``. The client side joins the chunks by ``index`` as SDKs do.

Non-streaming (``_build_chat_response`` / ``_process_tool_calls``): ``ReasoningParser(...,
stream_reasoning=False).parse_non_stream``, then ``has_tool_call`` and ``parse_non_stream``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

Reply = tuple[str, str, tuple[tuple[str, str], ...]]  # content, reasoning, calls (name, arguments)


def sglang_tools(tools: Iterable[dict[str, Any]]) -> list[Tool]:
    return [Tool(**tool) for tool in tools]


def unstreamed_args(detector: Any) -> tuple[int, str] | None:
    """serving_chat's ``_check_for_unstreamed_tool_args``: the last call's expected arguments
    beyond what was streamed."""
    calls, streamed = getattr(detector, "prev_tool_call_arr", None), getattr(detector, "streamed_args_for_tool", None)
    if not calls or not streamed or len(calls) - 1 >= len(streamed):
        return None
    index = len(calls) - 1
    expected = calls[index].get("arguments", {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = streamed[index]
    rest = expected[len(actual):] if expected.startswith(actual) else ""
    return (index, rest) if rest else None


class Client:
    """What an SDK makes of the stream: text joined, calls joined by index."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, list[str]] = {}

    def call(self, index: int, name: str | None, arguments: str) -> None:
        entry = self.calls.setdefault(index, ["", ""])
        entry[0] += name or ""
        entry[1] += arguments

    def reply(self) -> Reply:
        calls = tuple((name, args) for _, (name, args) in sorted(self.calls.items()))
        return "".join(self.content), "".join(self.reasoning), calls


def stream(tool_parser: str, reasoning_parser: str, tools: list[dict[str, Any]], force_reasoning: bool,
           deltas: Sequence[str]) -> Reply:
    tool_list = sglang_tools(tools)
    client = Client()
    reasoner = ReasoningParser(reasoning_parser, stream_reasoning=True, force_reasoning=force_reasoning)
    calls = FunctionCallParser(tool_list, tool_parser)
    for k, delta in enumerate(deltas):
        finishing = k == len(deltas) - 1
        reasoning, text = reasoner.parse_stream_chunk(delta)
        if finishing:
            end_reasoning, end_text = reasoner.parse_stream_end()
            reasoning, text = (reasoning or "") + (end_reasoning or ""), (text or "") + (end_text or "")
        client.reasoning.append(reasoning or "")
        normal, items = calls.parse_stream_chunk(text or "")
        if finishing:
            end_normal, end_items = calls.parse_stream_end()
            normal, items = (normal or "") + end_normal, [*items, *end_items]
        client.content.append(normal or "")
        for item in items:
            client.call(item.tool_index, item.name, item.parameters)
        if finishing and (rest := unstreamed_args(calls.detector)) is not None:
            client.call(rest[0], None, rest[1])
    return client.reply()


def complete(tool_parser: str, reasoning_parser: str, tools: list[dict[str, Any]], force_reasoning: bool,
             text: str) -> Reply:
    reasoning, text = ReasoningParser(reasoning_parser, stream_reasoning=False,
                                      force_reasoning=force_reasoning).parse_non_stream(text)
    parser = FunctionCallParser(sglang_tools(tools), tool_parser)
    calls: tuple[tuple[str, str], ...] = ()
    if parser.has_tool_call(text):
        text, items = parser.parse_non_stream(text)
        calls = tuple((item.name or "", item.parameters) for item in items)
    return text or "", reasoning or "", calls
