"""create_parser: one call that builds the parser stack for one response."""

from __future__ import annotations

from typing import Any

from . import reasoning, response, tools  # noqa: F401  (registers the built-in parsers)
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request
from .response.base import ResponseParser

__all__ = ["create_parser"]


def create_parser(
    tool_parser: str | None = None,
    reasoning_parser: str | None = None,
    response_parser: str | None = "default",
    request: Any = None,
    tokenizer: Any = None,
) -> ResponseParser:
    """Build a fresh parser for one response.

    ``request`` is the OpenAI-shaped request (dict or object).  A request with no
    tools, or with ``tool_choice="none"``, turns tool parsing off (markup stays
    content); ``request=None`` parses tool calls of any name.
    """
    req = ParserRequest.accept_all() if request is None else normalize_request(request)
    cls = ResponseParserManager.get(response_parser or "default")
    tool = ToolParserManager.get(tool_parser)(req) if tool_parser else None
    reasoner = ReasoningParserManager.get(reasoning_parser)(req) if reasoning_parser else None
    return cls(req, tool_parser=tool, reasoning_parser=reasoner, tokenizer=tokenizer)
