"""SGLang 0.5.23's parsers, driven the way its chat server drives them (peer side, SGLang venv only).

``serving_chat`` streams each delta through ``ReasoningParser.parse_stream_chunk`` (its
``parse_stream_end`` on the last one) and hands the normal text to
``FunctionCallParser.parse_stream_chunk``; at the end ``parse_stream_end`` flushes what
the detector held back.  Non-streaming: ``parse_non_stream`` on both.  Text only: these
parsers take no token ids.
"""

from __future__ import annotations

from importlib.metadata import version
from types import SimpleNamespace
from typing import Any
from collections.abc import Iterator

from .cases import Case, complete_result


class _Stream:
    __slots__ = ("reasoning", "tools")

    def __init__(self, reasoning: Any, tools: Any) -> None:
        self.reasoning, self.tools = reasoning, tools


def _delta(content: str | None, reasoning: str | None, calls: list) -> Any:
    tool_calls = [SimpleNamespace(index=c.tool_index, function=SimpleNamespace(name=c.name, arguments=c.parameters))
                  for c in calls]
    return SimpleNamespace(content=content, reasoning_content=reasoning, tool_calls=tool_calls)


class Adapter:
    def __init__(self) -> None:
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from sglang.srt.parser.reasoning_parser import ReasoningParser

        self.impl = f"sglang {version('sglang')}"
        self._tool_cls, self._tools_parser, self._reasoning_parser = Tool, FunctionCallParser, ReasoningParser

    def new_state(self, case: Case, parsers: dict) -> _Stream:
        reasoning = self._reasoning_parser(parsers["reasoning"], True) if parsers.get("reasoning") else None
        tools = None
        if parsers.get("tool"):
            tools = self._tools_parser([self._tool_cls(**tool) for tool in case.tools], parsers["tool"])
        return _Stream(reasoning, tools)

    def prepare(self, case: Case, pieces: list[str]) -> list[str]:
        return pieces

    def _step(self, state: _Stream, text: str, last: bool) -> Iterator[Any]:
        reasoning_text = None
        if state.reasoning is not None:
            reasoning_text, text = state.reasoning.parse_stream_chunk(text)
            if last:
                more_reasoning, more_text = state.reasoning.parse_stream_end()
                reasoning_text = (reasoning_text or "") + (more_reasoning or "")
                text = (text or "") + (more_text or "")
        calls: list = []
        if state.tools is not None:
            text, calls = state.tools.parse_stream_chunk(text or "")
            if last:
                end_text, end_calls = state.tools.parse_stream_end()
                text, calls = (text or "") + (end_text or ""), [*calls, *end_calls]
        yield _delta(text, reasoning_text, calls)

    def stream(self, state: _Stream, fed: list[str]) -> Iterator[Any]:
        last = len(fed) - 1
        for i, text in enumerate(fed):
            yield from self._step(state, text, i == last)

    def feed(self, state: _Stream, fed: list[str]) -> None:
        last = len(fed) - 1
        for i, text in enumerate(fed):
            for _ in self._step(state, text, i == last):
                pass

    def complete(self, state: _Stream, case: Case) -> list[Any]:
        reasoning, text = None, case.text
        if state.reasoning is not None:
            reasoning, text = state.reasoning.parse_non_stream(text)
        calls: list = []
        if state.tools is not None:
            text, calls = state.tools.parse_non_stream(text or "")
        # Non-streaming, tool_index indexes the tools list: the calls' order is what counts.
        return complete_result(text, reasoning, (SimpleNamespace(name=c.name, arguments=c.parameters) for c in calls))
