"""Tool parsers: the driver bases, the dialect hooks they call, and every registered dialect.

The extension surface is ``__all__``: a dialect subclasses one driver base (``ToolParser``,
``JsonToolParser``, ``XmlToolParser``, ``SectionToolParser``, ``LiteralCallParser``,
``JsonCallParser``), declares its markers as class data, implements the hooks of
``DialectHooks`` (and ``XmlDialectHooks`` / ``SectionDialectHooks`` on those drivers), and
answers with the step values below; a family module (``lmparse.families``) registers it.  Everything else
in the subpackages is the machinery's own (tests/test_public_names.py pins this list).
"""

from ..registry import ToolParserManager
from .base import (MORE, PAYLOAD_CLOSED, PAYLOAD_REJECTED, RUN, BlockStep, DroppedCall, Payload, PayloadStep,
                   ToolParser, build_tool_calls)
from .hooks import DialectHooks, SectionDialectHooks, XmlDialectHooks
from .json_envelope import JsonToolParser
from .json_scanner import JsonValueScanner
from .literal_call import JsonCallParser, LiteralCallParser
from .section import SectionToolParser
from .xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser

__all__ = [
    # the driver bases
    "ToolParser", "JsonToolParser", "XmlToolParser", "SectionToolParser", "LiteralCallParser", "JsonCallParser",
    # the hooks a dialect implements, and what they return
    "DialectHooks", "XmlDialectHooks", "SectionDialectHooks",
    "Payload", "PayloadStep", "MORE", "RUN", "PAYLOAD_CLOSED", "PAYLOAD_REJECTED",
    "Found", "MALFORMED", "FunctionStep", "ArgStartStep", "ArgNameStep",
    # what the router and callers see
    "BlockStep", "DroppedCall", "build_tool_calls", "JsonValueScanner", "ToolParserManager",
]
