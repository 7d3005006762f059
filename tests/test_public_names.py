"""The public surface of ``lmparse`` and ``lmparse.tools``, pinned (as httpx pins its exports):
a change of either is a deliberate edit of this file.

``lmparse`` is the library's API; ``lmparse.tools`` is the dialect extension surface: the
driver bases, the hook protocols a dialect implements and the values the hooks return.
"""

from __future__ import annotations

import importlib
import types

import pytest

from lmparse.registry import ToolParserManager
from lmparse.request import ParserRequest
from lmparse.tools import (DialectHooks, SectionDialectHooks, SectionToolParser, ToolParser, XmlDialectHooks,
                           XmlToolParser)

PUBLIC = {
    "lmparse": {
        "core", "create_parser", "DeltaMessage", "DeltaToolCall", "DeltaFunctionCall", "ParsedMessage", "ToolCall",
        "FunctionCall", "ParserRequest", "normalize_request", "ResponseTemplate", "ResponseParserManager",
        "ReasoningParserManager", "ToolParserManager",
    },
    "lmparse.tools": {
        "ToolParser", "JsonToolParser", "XmlToolParser", "SectionToolParser", "LiteralCallParser", "JsonCallParser",
        "DialectHooks", "XmlDialectHooks", "SectionDialectHooks",
        "Payload", "PayloadStep", "MORE", "RUN", "PAYLOAD_CLOSED", "PAYLOAD_REJECTED",
        "Found", "MALFORMED", "FunctionStep", "ArgStartStep", "ArgNameStep",
        "BlockStep", "DroppedCall", "build_tool_calls", "JsonValueScanner", "ToolParserManager",
    },
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_the_exported_names_are_exactly_the_declared_surface(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert len(exported) == len(set(exported)), "a name is listed twice"
    assert set(exported) == PUBLIC[module]


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_exported_name_is_importable(module: str) -> None:
    for name in PUBLIC[module]:
        namespace: dict[str, object] = {}
        exec(f"from {module} import {name}", namespace)
        assert namespace[name] is getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_no_public_attribute_is_left_out_of_the_surface(module: str) -> None:
    """What a module shows besides its subpackages and its ``__all__`` is private (``_``)."""
    mod = importlib.import_module(module)
    shown = {name for name, value in vars(mod).items()
             if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert shown <= set(mod.__all__)


def test_every_registered_dialect_implements_the_hooks_of_its_driver() -> None:
    for cls in ToolParserManager.aliases():
        parser = cls(ParserRequest.accept_all())
        assert isinstance(parser, DialectHooks), cls
        assert cls._consume_stream_payload is not ToolParser._consume_stream_payload, cls
        if issubclass(cls, XmlToolParser):
            assert isinstance(parser, XmlDialectHooks), cls
            for hook in ("_consume_function", "_consume_arg_start", "_consume_arg_name"):
                assert getattr(cls, hook) is not getattr(XmlToolParser, hook), (cls, hook)
        if issubclass(cls, SectionToolParser):
            assert isinstance(parser, SectionDialectHooks), cls
