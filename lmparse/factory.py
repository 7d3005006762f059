"""create_parser: one call that builds the parser stack for one response."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import reasoning, response, tools  # noqa: F401  (registers the built-in parsers)
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request
from .response.base import ResponseParser
from .tools.autoselect import select_tool_parser

__all__ = ["create_parser"]


# How much of a prompt's end decides an ``auto`` initial mode (a prefilled opener and its
# trailing newlines fit many times over).
PROMPT_TAIL = 256


def create_parser(
    tool_parser: str | None = None,
    reasoning_parser: str | None = None,
    response_parser: str | None = "default",
    request: Any = None,
    tokenizer: Any = None,
    *,
    chat_template: str | None = None,
    prompt: str | None = None,
    prompt_token_ids: Sequence[int] | None = None,
) -> ResponseParser:
    """Build a fresh parser for one response.

    ``request`` is the OpenAI-shaped request (dict or object).  A request with no
    tools, or with ``tool_choice="none"``, turns tool parsing off (markup stays
    content); ``request=None`` parses tool calls of any name.

    ``tool_parser="auto"`` picks the dialect ``chat_template`` writes (and the
    tokenizer's vocabulary, when it has ``get_vocab``), or raises ``ValueError`` naming
    the candidates (``lmparse.tools.autoselect``).  ``prompt`` (the rendered prompt, or
    its tail) or ``prompt_token_ids`` (decoded with ``tokenizer``) lets a reasoning
    parser in ``auto`` initial mode start from what the prompt prefilled.
    """
    req = ParserRequest.accept_all() if request is None else normalize_request(request)
    cls = ResponseParserManager.get(response_parser or "default")
    if tool_parser == "auto":
        tool_parser = select_tool_parser(chat_template, _vocabulary(tokenizer))
    tool = ToolParserManager.get(tool_parser)(req) if tool_parser else None
    tail = prompt_tail(prompt, prompt_token_ids, tokenizer)
    reasoner = ReasoningParserManager.get(reasoning_parser)(req, tail) if reasoning_parser else None
    return cls(req, tool_parser=tool, reasoning_parser=reasoner, tokenizer=tokenizer)


def prompt_tail(prompt: str | None, prompt_token_ids: Sequence[int] | None, tokenizer: Any) -> str | None:
    """The prompt's last characters: from the text, else from the last ids decoded (None: unknown)."""
    if prompt is not None:
        return prompt[-PROMPT_TAIL:]
    decode = getattr(tokenizer, "decode", None)
    if not prompt_token_ids or decode is None:
        return None
    ids = list(prompt_token_ids[-32:])
    try:
        text = decode(ids, skip_special_tokens=False)  # the opener may be a special token
    except TypeError:  # a decoder without the switch
        text = decode(ids)
    return text[-PROMPT_TAIL:] if isinstance(text, str) else None


def _vocabulary(tokenizer: Any) -> list[str]:
    get_vocab = getattr(tokenizer, "get_vocab", None)
    vocab = get_vocab() if get_vocab is not None else ()
    return [t for t in vocab if isinstance(t, str)]
