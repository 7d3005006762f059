"""Enforced tool_choice: generation constraints built from each dialect's own call syntax.

``constraint_for(dialect, engine, request)`` gives what an upstream engine needs so that a
``ParserRequest`` whose tool choice must call (``Required``, ``Named``, ``Allowed`` with
``required``; with them, ``max_calls`` 1) is structured generation, not a hope:

* vLLM and SGLang: ``{"structural_tag": "<JSON>"}`` (an XGrammar structural tag; vLLM
  reads it in ``structured_outputs``, SGLang in ``sampling_params``);
* llama.cpp: ``{"grammar": "<GBNF>"}`` (the ``/completion`` body's field).

``None`` means no constraint is needed (``auto``, ``none``); ``Unconstrainable`` (a
``ValueError``) that the dialect or the engine has no way to enforce it: the server answers
400 rather than generate unenforced.  ``gbnf_for`` and ``structural_tag_for`` are the
builders themselves, ``check_calls`` the verdict on a finished reply.  The request is the
normalized value (``lmparse.request``); the builders still take the raw OpenAI
``tools, tool_choice, parallel`` the engine plugins hold, normalized here once
(``legacy_request``).  ``template_constraint`` is the same for a model whose own
``response_template`` parses its replies (``response-template``, ``beam``): the syntax is read
off the compiled template (``lmparse.response.template_syntax``), not a registered dialect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..registry import ResponseParserManager, ToolParserManager
from ..request import ParserRequest, normalize_request
from ..response.template import ResponseTemplate
from ..response.template_syntax import sorted_arguments, template_calls, template_reasoning
from ..tools.syntax import CallSyntax
from .check import check_calls, schema_errors
from .gbnf import calls_grammar
from .structural import structural_tag

__all__ = ["Unconstrainable", "constraint_for", "template_constraint", "gbnf_for", "structural_tag_for",
           "legacy_request", "dialect_syntax", "check_calls", "schema_errors", "ENGINE_FIELDS", "Reasoning"]

# (start tag or None, end tag, whether the reply starts inside the reasoning block)
Reasoning = tuple[str | None, str, bool]
# The field each engine takes its constraint in.
ENGINE_FIELDS = {"vllm": "structural_tag", "sglang": "structural_tag", "llamacpp": "grammar"}


class Unconstrainable(ValueError):
    """This tool_choice cannot be enforced here (the dialect or the engine has no way)."""


def _functions(tools: Any) -> list[dict[str, Any]]:
    """OpenAI tools (``{"type": "function", "function": {...}}``), bare function dicts, or a
    name -> function mapping, as function dicts."""
    items = tools.values() if isinstance(tools, Mapping) else tools or ()
    out = []
    for tool in items:
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        if isinstance(fn.get("name"), str):
            out.append(dict(fn))
    return out


def legacy_request(tools: Any, tool_choice: Any, parallel: bool = True) -> ParserRequest:
    """The request value for the raw OpenAI fields an engine plugin holds: ``tools`` as OpenAI
    tools, bare function dicts or a name -> function mapping; ``tool_choice`` a string or an
    object (a named tool may leave out ``type``).  A bad choice is a ``ValueError``."""
    if isinstance(tool_choice, Mapping) and tool_choice.get("type") is None:
        tool_choice = {**tool_choice, "type": "function"}
    return normalize_request({"tools": [{"type": "function", "function": fn} for fn in _functions(tools)],
                              "tool_choice": tool_choice, "parallel_tool_calls": parallel})


def _request(request: ParserRequest | Any, tool_choice: Any, parallel: bool) -> ParserRequest:
    """``request`` itself, or (the builders' older form) the value made of raw tools, choice, parallel."""
    if isinstance(request, ParserRequest):
        return request
    return legacy_request(request, tool_choice, parallel)


def _describer(dialect: str | None) -> Any:
    """The class that describes ``dialect``'s calls: a tool parser, or a response parser that
    frames calls itself (gpt-oss's Harmony)."""
    if dialect and dialect not in ToolParserManager and dialect in ResponseParserManager:
        return ResponseParserManager.get(dialect)
    return ToolParserManager.get(dialect) if dialect else None


def dialect_syntax(dialect: str | None) -> CallSyntax:
    """The registered tool dialect's call syntax; ``Unconstrainable`` when it has none."""
    describer = _describer(dialect)
    syntax = getattr(describer, "call_syntax", lambda: None)()
    if not isinstance(syntax, CallSyntax):
        raise Unconstrainable(f"the tool dialect {dialect or '(none)'} has no call syntax to constrain "
                              "generation with")
    return syntax


def gbnf_for(dialect: str, request: ParserRequest | Any, tool_choice: Any = None, parallel: bool = True,
             reasoning: Reasoning | None = None) -> str | None:
    """llama.cpp's ``grammar`` for a reply to ``request`` that must call a tool (None when it
    need not).  ``request`` may also be raw OpenAI tools, with ``tool_choice`` and ``parallel``."""
    request = _request(request, tool_choice, parallel)
    functions = request.required_functions
    if functions is None:
        return None
    return calls_grammar(dialect_syntax(dialect), functions, request.single_call, reasoning)


def structural_tag_for(dialect: str, request: ParserRequest | Any, tool_choice: Any = None, parallel: bool = True,
                       reasoning: Reasoning | None = None) -> dict[str, Any] | None:
    """The XGrammar structural tag for a reply to ``request`` that must call a tool (None when
    it need not); ``request`` as in ``gbnf_for``."""
    request = _request(request, tool_choice, parallel)
    functions = request.required_functions
    if functions is None:
        return None
    return structural_tag(dialect_syntax(dialect), functions, request.single_call, reasoning)


def constraint_for(dialect: str | None, engine: str, request: ParserRequest | Any, tool_choice: Any = None,
                   parallel: bool = True, reasoning: Reasoning | None = None) -> dict[str, str] | None:
    """``{field: value}`` for ``engine``'s request (see the module docstring), or None;
    ``request`` as in ``gbnf_for``."""
    request = _request(request, tool_choice, parallel)
    functions = request.required_functions
    if functions is None:
        return None
    field = _engine_field(engine)
    return _engine_constraint(field, dialect_syntax(dialect), functions, request.single_call, reasoning)


def template_constraint(template: ResponseTemplate, engine: str, request: ParserRequest,
                        prompt: str | None = None) -> dict[str, str] | None:
    """``constraint_for`` a model parsed by its own compiled ``template``: the calls its
    ``tool_calls`` region describes, after its reasoning region where ``prompt`` (the rendered
    prompt, which says whether the reply starts inside it) and the thinking switch allow one.
    A region that does not repeat allows one call; in ``beam`` mode arguments are in name order."""
    functions = request.required_functions
    if functions is None:
        return None
    field = _engine_field(engine)
    try:
        calls = template_calls(template)
    except ValueError as exc:
        raise Unconstrainable(str(exc)) from None
    if calls.name_pattern is not None:
        unwritable = [fn["name"] for fn in functions if not re.fullmatch(calls.name_pattern, fn["name"])]
        if unwritable:
            raise Unconstrainable(f"the response_template's tool_calls opener cannot write the tool name(s) "
                                  f"{unwritable} (names match {calls.name_pattern})")
    if template.mode == "beam":
        functions = [{**fn, "parameters": sorted_arguments(fn.get("parameters"))} for fn in functions]
    return _engine_constraint(field, calls.syntax, functions, request.single_call or not calls.repeats,
                              template_reasoning(template, request, prompt))


def _engine_field(engine: str) -> str:
    field = ENGINE_FIELDS.get(engine)
    if field is None:
        raise Unconstrainable(f"the {engine} engine has no way to constrain generation")
    return field


def _engine_constraint(field: str, syntax: CallSyntax, functions: list[dict[str, Any]], single: bool,
                       reasoning: Reasoning | None) -> dict[str, str]:
    if field == "grammar":
        return {field: calls_grammar(syntax, functions, single, reasoning)}
    return {field: json.dumps(structural_tag(syntax, functions, single, reasoning), ensure_ascii=False)}
