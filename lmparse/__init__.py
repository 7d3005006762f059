"""lmparse: streaming parsers that turn LLM output into OpenAI/Anthropic messages."""

from . import _core

_core.install()  # the compiled core or the pure one, before any other module of the package loads

from ._core import core  # noqa: E402
from .factory import create_parser  # noqa: E402
from .messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ParsedMessage, ToolCall  # noqa: E402
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager  # noqa: E402
from .request import ParserRequest, normalize_request  # noqa: E402
from .response.template import ResponseTemplate  # noqa: E402

__all__ = [
    "core",
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
