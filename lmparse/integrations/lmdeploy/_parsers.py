"""LMDeploy's parser contract, answered by one lmparse parser per request.

LMDeploy's serving layer builds one response parser per request from the class its
``set_parsers`` configured (``default`` unless the model is gpt-oss); the tool and
reasoning classes named on the CLI only feed that class's own text router. So the
``lmparse-<name>`` tool and reasoning classes registered here are names and markers
(what LMDeploy's validation, CLI help and ``tool_parser_cls`` checks read), and
``default`` is re-registered as a subclass of LMDeploy's own that behaves exactly like it
unless the configured names are lmparse's: then each request gets an
``LmparseResponseParser``, fed only each engine delta (the work stays linear).

Registry names are dot-free: mmengine's ``Registry.get`` reads ``.`` as a scope
separator, so ``lmparse-glm4.5`` would validate and then resolve to None at serve time;
lmparse's dotted names all have dot-free aliases (``glm45``, ``deepseek-v32``).
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from lmdeploy.serve.openai import protocol
from lmdeploy.serve.parsers.reasoning_parser import ReasoningParser, ReasoningParserManager
from lmdeploy.serve.parsers.response_parser import (
    BaseResponseParser,
    ResponseParser,
    ResponseParserManager,
    normalize_chat_request,
)
from lmdeploy.serve.parsers.tool_parser import ToolParser, ToolParserManager
from lmdeploy.serve.parsers.tool_parser.tool_parser import dump_tools

import lmparse
from lmparse.constrain import structural_tag_for
from lmparse.messages import DeltaMessage, ParsedMessage

from .. import plugin_names

__all__ = ["PREFIX", "DefaultResponseParser", "LmparseResponseParser", "register", "registered_names"]

PREFIX = "lmparse-"
# The response grammar that frames whole replies (Harmony): a response parser in lmparse, not a
# tool or reasoning parser, and LMDeploy's own name for its gpt-oss parser too (see ``_harmony``).
(HARMONY,) = plugin_names().framed


class LmparseToolParser(ToolParser):  # type: ignore[misc]  # LMDeploy is untyped
    """The LMDeploy-side identity of one lmparse tool parser; lmparse does the parsing."""

    lmparse_name: ClassVar[str] = ""
    open_tag: ClassVar[str] = ""

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return cls.open_tag


class LmparseReasoningParser(ReasoningParser):  # type: ignore[misc]
    """The LMDeploy-side identity of one lmparse reasoning parser."""

    lmparse_name: ClassVar[str] = ""
    open_tag: ClassVar[str] = ""
    close_tag: ClassVar[str] = ""

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        """lmparse needs no tag ids: it counts reasoning tokens by position."""

    @classmethod
    def get_reasoning_open_tag(cls) -> str:
        return cls.open_tag

    @classmethod
    def get_reasoning_close_tag(cls) -> str:
        return cls.close_tag


@functools.cache
def _tool_class(name: str) -> type[LmparseToolParser]:
    tags = lmparse.ToolParserManager.get(name).tool_open_tags
    attrs = {"lmparse_name": name, "open_tag": tags[0] if tags else ""}
    return type(f"Lmparse_{name}_ToolParser", (LmparseToolParser,), attrs)


@functools.cache
def _reasoning_class(name: str) -> type[LmparseReasoningParser]:
    source = lmparse.ReasoningParserManager.get(name)
    attrs = {"lmparse_name": name, "open_tag": source.start_tag or "", "close_tag": source.end_tag}
    return type(f"Lmparse_{name}_ReasoningParser", (LmparseReasoningParser,), attrs)


class LmparseParsing:
    """What an lmparse-backed LMDeploy response parser answers: ``stream_chunk`` and
    ``parse_complete`` from one lmparse parser (``_parser``), in LMDeploy's types."""

    _parser: Any
    reasoning_tokens: int | None

    def stream_chunk(self, delta_text: str, delta_token_ids: list[int],
                     **kwargs: Any) -> list[tuple[Any, bool]]:
        deltas = self._parser.stream_chunk(delta_text, list(delta_token_ids or ()), bool(kwargs.get("final")))
        self.reasoning_tokens = self._parser.reasoning_tokens
        return [(_delta_message(delta), emitted) for delta, emitted in deltas]

    def parse_complete(self, text: str, token_ids: list[int] | None = None,
                       **kwargs: Any) -> tuple[str | None, list[Any] | None, str | None]:
        message: ParsedMessage = self._parser.parse_complete(text, list(token_ids or ()))
        self.reasoning_tokens = message.reasoning_tokens
        calls = [protocol.ToolCall(id=call.id, type="function",
                                   function=protocol.FunctionCall(name=call.function.name,
                                                                  arguments=call.function.arguments))
                 for call in message.tool_calls]
        return message.content or None, calls or None, message.reasoning_content


def request_seen(request: Any) -> dict[str, Any]:
    """The fields of LMDeploy's request that lmparse reads, as lmparse reads them."""
    return {"tools": [t.model_dump(mode="json") for t in request.tools or []],
            "tool_choice": _plain(request.tool_choice), "parallel_tool_calls": request.parallel_tool_calls,
            "chat_template_kwargs": BaseResponseParser.chat_template_kwargs_from_request(request)}


class LmparseResponseParser(LmparseParsing, ResponseParser):  # type: ignore[misc]
    """One request's reply, parsed by one lmparse parser and handed back in LMDeploy's types."""

    supports_required_tool_choice: ClassVar[bool] = True

    def __init__(self, request: Any, tool_parser: str | None, reasoning_parser: str | None,
                 response_parser: str = "default") -> None:
        super().__init__(request)
        rendered = dump_tools(request).model_copy(update={"skip_special_tokens": False})  # markers are text
        self.request = _constrained(normalize_chat_request(rendered), tool_parser)
        self._parser = lmparse.create_parser(tool_parser, reasoning_parser, response_parser,
                                             request=request_seen(request))
        # LMDeploy's serving layer reads ``tool_parser is not None`` for the finish reason.
        self.tool_parser: object | None = _tool_class(tool_parser) if tool_parser else None
        self.reasoning_tokens: int | None = None


def _plain(value: Any) -> Any:
    """A pydantic value as the JSON shape lmparse reads (strings stay strings)."""
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def _constrained(request: Any, tool_parser: str | None) -> Any:
    """The request with a structural tag from lmparse's own dialect description when a call is
    required or named (set after LMDeploy's normalization, as LMDeploy sets its own tag)."""
    if tool_parser and request.tools and request.tool_choice not in (None, "auto", "none"):
        tag = structural_tag_for(tool_parser, [{"type": "function", "function": t} for t in request.tools],
                                 _plain(request.tool_choice), request.parallel_tool_calls is not False)
        if tag is not None:
            request = request.model_copy(update={"response_format": tag})
    return request


def _delta_message(delta: DeltaMessage) -> Any:
    calls = None
    if delta.tool_calls:
        calls = [protocol.DeltaToolCall(
            index=tc.index, id=tc.id, type=tc.type,
            function=None if tc.function is None else protocol.DeltaFunctionCall(
                name=tc.function.name, arguments=tc.function.arguments))
            for tc in delta.tool_calls]
    return protocol.DeltaMessage(role="assistant", content=delta.content,
                                 reasoning_content=delta.reasoning_content, tool_calls=calls)


class DefaultResponseParser(BaseResponseParser):  # type: ignore[misc]
    """LMDeploy's ``default`` response parser, unchanged unless the configured tool and
    reasoning parsers are lmparse's: then every request is an ``LmparseResponseParser``."""

    lmparse_names: ClassVar[tuple[str | None, str | None] | None] = None

    @classmethod
    def set_parsers(cls, reasoning_parser_name: str | None = None, tool_parser_name: str | None = None,
                    tokenizer: Any = None) -> None:
        cls.reasoning_parser_cls = cls.tool_parser_cls = None  # a second call starts clean
        super().set_parsers(reasoning_parser_name=reasoning_parser_name, tool_parser_name=tool_parser_name,
                            tokenizer=tokenizer)
        chosen = [(tool_parser_name, cls.tool_parser_cls), (reasoning_parser_name, cls.reasoning_parser_cls)]
        ours = [getattr(parser, "lmparse_name", None) for _, parser in chosen]
        theirs = [str(name) for (name, parser), mine in zip(chosen, ours, strict=True) if parser and not mine]
        if any(ours) and theirs:
            raise ValueError(f"lmparse parsers cannot be mixed with LMDeploy's own ({', '.join(theirs)}): "
                             f"name both with the {PREFIX} prefix")
        cls.lmparse_names = (ours[0], ours[1]) if any(ours) else None

    def __new__(cls, request: Any) -> Any:
        names = cls.lmparse_names
        if names is not None and HARMONY in names:  # lmparse's Harmony parser, whatever the architecture
            return ResponseParserManager.get(PREFIX + HARMONY)(request)
        if names is not None:
            return LmparseResponseParser(request, *names)
        return super().__new__(cls)


def registered_names() -> tuple[list[str], list[str]]:
    """(tool, reasoning) names registered into LMDeploy: every dot-free lmparse name, prefixed."""
    def dot_free(names: list[str]) -> list[str]:
        return [PREFIX + n for n in names if "." not in n]
    names = plugin_names()
    return dot_free(names.tool), dot_free(names.reasoning)


def register() -> None:
    """Register every ``lmparse-<name>`` and the lmparse-aware ``default``; safe to call again."""
    tools, reasonings = registered_names()
    for name in tools:
        ToolParserManager.register_module(name=name, module=_tool_class(name[len(PREFIX):]), force=True)
    for name in reasonings:
        ReasoningParserManager.register_module(name=name, module=_reasoning_class(name[len(PREFIX):]), force=True)
    ResponseParserManager.register_module(name="default", module=DefaultResponseParser, force=True)
