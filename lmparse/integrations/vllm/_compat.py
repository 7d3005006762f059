"""vLLM's classes, imported by where each release keeps them.

vLLM 0.33 (2026) has ``vllm.tool_parsers`` and the protocol classes in
``vllm.entrypoints.generate.base.protocol`` / ``vllm.entrypoints.openai.chat_completion.protocol``;
releases before the move had ``vllm.entrypoints.openai.tool_parsers`` and
``vllm.entrypoints.openai.protocol``.  Older releases name the delta's reasoning field
``reasoning_content``, 0.33 names it ``reasoning``.
"""

from __future__ import annotations

import importlib
from typing import Any

try:  # the 2026 layout (vLLM 0.33)
    from vllm.tool_parsers import ToolParser, ToolParserManager
except ImportError:  # pragma: no cover - releases before the move
    from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager  # type: ignore[no-redef]
try:
    from vllm.reasoning import ReasoningParser, ReasoningParserManager
except ImportError:  # pragma: no cover
    from vllm.reasoning.abs_reasoning_parsers import (  # type: ignore[no-redef]
        ReasoningParser,
        ReasoningParserManager,
    )
from vllm.sampling_params import StructuredOutputsParams

try:  # the per-request composed parser (vLLM 0.33); releases before it built the two apart
    from vllm.parser.abstract_parser import Parser as VllmParser
except ImportError:  # pragma: no cover
    VllmParser = None


def _first_module(*paths: str) -> Any:
    for path in paths[:-1]:
        try:
            return importlib.import_module(path)
        except ImportError:
            continue
    return importlib.import_module(paths[-1])


_protocol = _first_module("vllm.entrypoints.generate.base.protocol", "vllm.entrypoints.openai.protocol")
DeltaFunctionCall = _protocol.DeltaFunctionCall
DeltaMessage = _protocol.DeltaMessage
DeltaToolCall = _protocol.DeltaToolCall
ExtractedToolCallInformation = _protocol.ExtractedToolCallInformation
FunctionCall = _protocol.FunctionCall
ToolCall = _protocol.ToolCall

__all__ = ["ToolParser", "ToolParserManager", "ReasoningParser", "ReasoningParserManager", "DeltaMessage",
           "DeltaToolCall", "DeltaFunctionCall", "ExtractedToolCallInformation", "FunctionCall", "ToolCall",
           "StructuredOutputsParams", "VllmParser", "REASONING_FIELD", "delta_message"]

REASONING_FIELD = "reasoning" if "reasoning" in DeltaMessage.model_fields else "reasoning_content"


def delta_message(content: str | None = None, reasoning: str | None = None,
                  tool_calls: list[Any] | None = None) -> Any:
    """vLLM's ``DeltaMessage`` with its reasoning field under this release's name."""
    fields: dict[str, Any] = {"content": content, REASONING_FIELD: reasoning}
    if tool_calls:
        fields["tool_calls"] = tool_calls
    return DeltaMessage(**fields)
