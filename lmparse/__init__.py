"""lmparse: streaming parsers that turn LLM output into OpenAI/Anthropic messages."""

from .factory import create_parser
from .messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ParsedMessage, ToolCall
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request
from .response.template import ResponseTemplate

__all__ = [
    "create_parser",
    "DeltaMessage",
    "DeltaToolCall",
    "DeltaFunctionCall",
    "ParsedMessage",
    "ToolCall",
    "FunctionCall",
    "ParserRequest",
    "normalize_request",
    "ResponseTemplate",
    "ResponseParserManager",
    "ReasoningParserManager",
    "ToolParserManager",
]
__version__ = "0.1.0"
