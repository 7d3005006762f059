"""create_parser: one call that builds the parser stack for one response."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import families  # noqa: F401  (declares the families, which registers their parsers)
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request
from .response.base import ResponseParser
from .response.template import ResponseTemplate, ResponseTemplateParser
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
    response_template: Any = None,
) -> ResponseParser:
    """Build a fresh parser for one response.

    ``tool_parser`` and ``reasoning_parser`` are registry names (``lmparse list``; None: no
    tool calls, or no reasoning markers); ``response_parser`` is ``"default"`` for every family
    but gpt-oss, whose Harmony framing is ``response_parser="gpt-oss"`` (with neither of the
    others; it needs ``openai-harmony``).  The parser's ``stream_chunk(text, token_ids=None,
    final=False)`` returns the deltas each chunk settles as ``(delta, has_tools)`` pairs and
    ``parse_complete(text)`` the whole ``ParsedMessage`` (``ResponseParser`` documents both).

    ``request`` is the OpenAI-shaped request (dict or object).  A request with no
    tools, or with ``tool_choice="none"``, turns tool parsing off (markup stays
    content); ``request=None`` parses tool calls of any name.

    ``tool_parser="auto"`` picks the dialect ``chat_template`` writes (and the
    tokenizer's vocabulary, when it has ``get_vocab``), or raises ``ValueError`` naming
    the candidates (``lmparse.tools.autoselect``).  ``prompt`` (the rendered prompt, or
    its tail) or ``prompt_token_ids`` (decoded with ``tokenizer``) lets a reasoning
    parser in ``auto`` initial mode start from what the prompt prefilled.

    ``response_template`` (a Hugging Face ``response_template``: a dict, a JSON file, a model
    directory, or a ``ResponseTemplate``) selects ``response_parser="response-template"``,
    which takes its tool and reasoning grammar from the template (docs/response-template.md);
    ``response_parser="beam"`` runs it under vLLM's rules for Beam checkpoints.
    """
    mode = template_mode(response_parser)
    if response_template is not None and mode is None and response_parser not in (None, "default"):
        raise ValueError(f"response_template= runs the response-template or beam parser, not {response_parser!r}")
    if response_template is not None or mode is not None:
        return _template_parser(response_template, mode or "hf", tool_parser, reasoning_parser, request, tokenizer,
                                prompt_tail(prompt, prompt_token_ids, tokenizer))
    req = ParserRequest.accept_all() if request is None else normalize_request(request)
    cls = ResponseParserManager.get(response_parser or "default")
    if tool_parser == "auto":
        tool_parser = select_tool_parser(chat_template, _vocabulary(tokenizer))
    tool = _for_tokenizer(ToolParserManager.get(tool_parser), tokenizer)(req) if tool_parser else None
    tail = prompt_tail(prompt, prompt_token_ids, tokenizer)
    reasoner = (_for_tokenizer(ReasoningParserManager.get(reasoning_parser), tokenizer)(req, tail)
                if reasoning_parser else None)
    return cls(req, tool_parser=tool, reasoning_parser=reasoner, tokenizer=tokenizer)


def template_mode(response_parser: str | None) -> str | None:
    """The ``ResponseTemplate`` mode a response parser name runs (None: not a template parser)."""
    if not response_parser or response_parser not in ResponseParserManager:
        return None
    cls = ResponseParserManager.get(response_parser)
    return cls.template_mode if issubclass(cls, ResponseTemplateParser) else None


def _template_parser(template: Any, mode: str, tool_parser: str | None, reasoning_parser: str | None,
                     request: Any, tokenizer: Any, tail: str | None) -> ResponseParser:
    name = "beam" if mode == "beam" else "response-template"
    if template is None:
        raise ValueError(f'response_parser="{name}" needs response_template= '
                         "(a dict, a JSON file or a model directory)")
    if tool_parser or reasoning_parser:
        raise ValueError("a response_template sets the tool and reasoning grammar: "
                         "name no tool_parser / reasoning_parser with it")
    if isinstance(template, ResponseTemplate) and template.mode != mode:
        raise ValueError(f"this ResponseTemplate was compiled for mode {template.mode!r}, not {mode!r}")
    compiled = template if isinstance(template, ResponseTemplate) else ResponseTemplate(template, mode)
    return compiled.parser(request, tail, tokenizer)


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


def _for_tokenizer(cls: Any, tokenizer: Any) -> Any:
    """A parser class that reads markers off the vocabulary (Hunyuan's tag suffix) as the
    tokenizer has them; any other class as it is."""
    resolve = getattr(cls, "for_tokenizer", None) if tokenizer is not None else None
    return resolve(tokenizer) if resolve is not None else cls


def _vocabulary(tokenizer: Any) -> list[str]:
    get_vocab = getattr(tokenizer, "get_vocab", None)
    vocab = get_vocab() if get_vocab is not None else ()
    return [t for t in vocab if isinstance(t, str)]
