"""lmparse's parsers as SGLang 0.5.23 detectors, registered by the ``sglang.srt.plugins`` entry point.

SGLang has no register API and no plugin flag: its launcher runs ``load_plugins()`` before it
parses arguments, and ``register`` (the entry point ``lmparse``) adds ``lmparse-<name>`` for every
lmparse tool parser to ``FunctionCallParser.ToolCallParserEnum`` and for every reasoning parser to
``ReasoningParser.DetectorMap``.  The ``--tool-call-parser`` / ``--reasoning-parser`` choices read
those dicts only when their modules are already imported, which importing this module does.

SGLang builds one detector per request (and choice) and feeds it only increments, so each detector
owns one lmparse parser, created on the first increment.  Its reasoning parser runs first and its
tool detector sees only the reasoning parser's normal text, so the two lmparse parsers of a request
are separate: a tool call opened inside the reasoning block stays reasoning here (lmparse's own
router would end the reasoning there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, StructureInfo, ToolCallItem
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, ReasoningParser
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

from .. import create_parser
from ..constrain import Unconstrainable, dialect_syntax, structural_tag_for
from ..messages import DeltaMessage
from ..registry import ReasoningParserManager
from . import plugin_names
from ..request import ParserRequest, normalize_request
from ..response.base import ResponseParser

__all__ = ["register", "LmparseToolDetector", "LmparseReasoningDetector", "PREFIX"]

PREFIX = "lmparse-"
_REASONING_STATES = ("reasoning_start", "reasoning")
Deltas = list[tuple[DeltaMessage, bool]]  # what ResponseParser.stream_chunk returns


def register() -> None:
    """Add ``lmparse-<name>`` to SGLang's tool-call and reasoning registries; safe to call again."""
    names = plugin_names()
    for name in names.tool:
        FunctionCallParser.ToolCallParserEnum.setdefault(PREFIX + name, _tool_detector(name))
    for name in names.reasoning:
        ReasoningParser.DetectorMap.setdefault(PREFIX + name, _reasoning_detector(name))


@cache
def _tool_detector(name: str) -> type[LmparseToolDetector]:
    return type(f"LmparseToolDetector[{name}]", (LmparseToolDetector,), {"lmparse_name": name})


@cache
def _reasoning_detector(name: str) -> type[LmparseReasoningDetector]:
    return type(f"LmparseReasoningDetector[{name}]", (LmparseReasoningDetector,), {"lmparse_name": name})


def _tool_dicts(tools: Iterable[Any] | None) -> list[dict[str, Any]]:
    """SGLang's ``Tool`` models (or plain dicts) as OpenAI tool dicts."""
    return [tool.model_dump() if hasattr(tool, "model_dump") else dict(tool) for tool in tools or ()]


class _Tag(dict[str, Any]):
    """A structural tag as SGLang's serving layer takes it: it calls ``model_dump(by_alias=True)``
    on the tag and walks it as a dict (``strip_structural_tag_excludes``)."""

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return dict(self)


class LmparseToolDetector(BaseFormatDetector):  # type: ignore[misc]
    """One request's tool calls through the lmparse tool parser ``lmparse_name``."""

    lmparse_name = ""

    def __init__(self) -> None:
        super().__init__()
        self._parser: ResponseParser | None = None

    # ---- parsing -----------------------------------------------------------------------

    def detect_and_parse(self, text: str, tools: list[Any]) -> StreamingParseResult:
        """The whole reply at once; ``tool_index`` is the tool's position in ``tools``."""
        offered = _tool_dicts(tools)
        message = create_parser(self.lmparse_name, request={"tools": offered}).parse_complete(text)
        positions = {(t.get("function") or {}).get("name"): i for i, t in enumerate(offered)}
        calls = [ToolCallItem(tool_index=positions.get(call.function.name, -1), name=call.function.name,
                              parameters=call.function.arguments) for call in message.tool_calls]
        return StreamingParseResult(normal_text=message.content or "", calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> StreamingParseResult:
        if self._parser is None:
            self._parser = create_parser(self.lmparse_name, request={"tools": _tool_dicts(tools)})
        return self._result(self._parser.stream_chunk(new_text))

    def finish(self, tools: list[Any]) -> StreamingParseResult:
        if self._parser is None:
            return StreamingParseResult()
        return self._result(self._parser.stream_chunk("", final=True))

    def has_tool_call(self, text: str) -> bool:
        """Whether ``text`` holds a call (of any name) or call markup lmparse would take out."""
        parser = create_parser(self.lmparse_name)
        return bool(parser.parse_complete(text).tool_calls or parser.dropped)

    def _result(self, deltas: Deltas) -> StreamingParseResult:
        """lmparse deltas as SGLang's: the name first with empty parameters, then argument text,
        ``tool_index`` the call's ordinal; the end-of-stream state serving_chat reads kept equal
        to what was sent, so it adds nothing."""
        text: list[str] = []
        calls: list[ToolCallItem] = []
        for delta, _ in deltas:
            if delta.content:
                text.append(delta.content)
            for call in delta.tool_calls or ():
                name = call.function.name if call.function else None
                arguments = call.function.arguments if call.function else None
                if name:
                    self.prev_tool_call_arr.append({"name": name, "arguments": ""})
                    self.streamed_args_for_tool.append("")
                    self.current_tool_id, self.current_tool_name_sent = call.index, True
                    calls.append(ToolCallItem(tool_index=call.index, name=name, parameters=""))
                if arguments:
                    self.prev_tool_call_arr[call.index]["arguments"] += arguments
                    self.streamed_args_for_tool[call.index] += arguments
                    calls.append(ToolCallItem(tool_index=call.index, name=None, parameters=arguments))
        return StreamingParseResult(normal_text="".join(text), calls=calls)

    # ---- constrained generation (lmparse.constrain, the tags the gateway sends) ---------

    def supports_structural_tag(self) -> bool:
        try:
            dialect_syntax(self.lmparse_name)
        except Unconstrainable:
            return False
        return True

    def structure_info(self) -> Callable[[str], StructureInfo]:
        """SGLang's legacy per-tool tags (used only when ``get_structural_tag`` has none): one
        call, in its section if the dialect has one."""
        syntax = dialect_syntax(self.lmparse_name)

        def info(name: str) -> StructureInfo:
            return StructureInfo(begin=syntax.section_open + syntax.call_begin(name),
                                 end=syntax.call_end + syntax.section_close,
                                 trigger=syntax.section_open or syntax.before_name)

        return info

    def get_structural_tag(self, tools: list[Any] | None = None, tool_choice: Any = "auto",
                           thinking_mode: bool = False, parallel_tool_calls: bool = True) -> _Tag | None:
        """lmparse's tag for a required or named call (None for ``auto``); with ``thinking_mode``
        (no reasoning parser owns the reasoning block) it starts with the family's reasoning."""
        choice = tool_choice.model_dump() if hasattr(tool_choice, "model_dump") else tool_choice
        reasoning = None
        if thinking_mode and self.lmparse_name in ReasoningParserManager:
            thinking = ReasoningParserManager.get(self.lmparse_name)(_thinking_request(True))
            reasoning = (thinking.start_tag, thinking.end_tag, thinking.starts_in_reasoning())
        try:
            tag = structural_tag_for(self.lmparse_name, _tool_dicts(tools), choice, parallel_tool_calls, reasoning)
        except ValueError:
            return None
        return None if tag is None else _Tag(tag)


def _thinking_request(thinking: bool) -> ParserRequest:
    return normalize_request({"chat_template_kwargs": {"enable_thinking": thinking}})


class LmparseReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc]
    """One request's reasoning through the lmparse reasoning parser ``lmparse_name``.

    ``force_reasoning`` (SGLang's verdict from the chat template and the request) becomes the
    request's thinking switch: True starts in reasoning, False starts plain (an explicit open
    tag still opens reasoning), not given leaves it to the family's default."""

    lmparse_name = ""

    def __init__(self, stream_reasoning: bool = True, force_reasoning: bool | None = None,
                 continue_final_message: bool = False, previous_content: str = "",
                 force_nonempty_content: bool = False) -> None:
        tags = ReasoningParserManager.get(self.lmparse_name)
        super().__init__(tags.start_tag or "", tags.end_tag, force_reasoning=bool(force_reasoning),
                         stream_reasoning=stream_reasoning, continue_final_message=continue_final_message,
                         previous_content=previous_content, force_nonempty_content=force_nonempty_content)
        # A continued assistant message resumes where its text left off (the base class read it).
        self._thinking = self._in_reasoning if continue_final_message else force_reasoning
        self._parser: ResponseParser | None = None
        self._held_reasoning = ""  # stream_reasoning=False: reasoning kept until the block ends

    def _new_parser(self) -> ResponseParser:
        request = None if self._thinking is None else {"chat_template_kwargs": {"enable_thinking": self._thinking}}
        return create_parser(reasoning_parser=self.lmparse_name, request=request)

    def detect_and_parse(self, text: str) -> ReasoningResult:
        message = self._new_parser().parse_complete(text)
        result = ReasoningResult(normal_text=message.content, reasoning_text=message.reasoning_content)
        return self._maybe_apply_force_nonempty_content(result)

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        if self._parser is None:
            self._parser = self._new_parser()
        return self._result(self._parser.stream_chunk(new_text), final=False)

    def finish(self) -> ReasoningResult:
        if self._parser is None:
            return ReasoningResult()
        return self._result(self._parser.stream_chunk("", final=True), final=True)

    def _result(self, deltas: Deltas, final: bool) -> ReasoningResult:
        reasoning = "".join(d.reasoning_content for d, _ in deltas if d.reasoning_content)
        content = "".join(d.content for d, _ in deltas if d.content)
        if not self.stream_reasoning:
            self._held_reasoning += reasoning
            if not (final or content or getattr(self._parser, "state", "") not in _REASONING_STATES):
                return ReasoningResult(normal_text=content)
            reasoning, self._held_reasoning = self._held_reasoning, ""
        return ReasoningResult(normal_text=content, reasoning_text=reasoning)
