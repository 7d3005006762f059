"""Tool parsers: the shared base, the JSON machinery and the dialects (``tools.dialects``)."""

from ..registry import ToolParserManager
from .base import DroppedCall, ToolParser, build_tool_calls
from .json_envelope import JsonToolParser
from .json_scanner import JsonValueScanner

__all__ = ["ToolParser", "JsonToolParser", "JsonValueScanner", "DroppedCall", "ToolParserManager", "build_tool_calls"]
