"""Tool parsers: the shared base, the JSON machinery and every registered dialect."""

from ..registry import ToolParserManager
from . import dialects  # noqa: F401  (registers the dialects)
from .base import DroppedCall, ToolParser, build_tool_calls
from .json_envelope import JsonToolParser
from .json_scanner import JsonValueScanner

__all__ = ["ToolParser", "JsonToolParser", "JsonValueScanner", "DroppedCall", "ToolParserManager", "build_tool_calls"]
