"""Enforced tool_choice: generation constraints built from each dialect's own call syntax.

``constraint_for(dialect, engine, tools, tool_choice, parallel)`` gives what an upstream
engine needs so that ``tool_choice: "required"`` or a named tool (and, with them,
``parallel_tool_calls: false``) is structured generation, not a hope:

* vLLM and SGLang: ``{"structural_tag": "<JSON>"}`` (an XGrammar structural tag; vLLM
  reads it in ``structured_outputs``, SGLang in ``sampling_params``);
* llama.cpp: ``{"grammar": "<GBNF>"}`` (the ``/completion`` body's field).

``None`` means no constraint is needed (``auto``, ``none``); ``Unconstrainable`` (a
``ValueError``) that the dialect or the engine has no way to enforce it: the server answers
400 rather than generate unenforced.  ``gbnf_for`` and ``structural_tag_for`` are the
builders themselves, ``check_calls`` the verdict on a finished reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..registry import ResponseParserManager, ToolParserManager
from ..tools.syntax import CallSyntax
from .check import check_calls, schema_errors
from .gbnf import calls_grammar
from .structural import structural_tag

__all__ = ["Unconstrainable", "constraint_for", "gbnf_for", "structural_tag_for", "chosen_functions",
           "dialect_syntax", "check_calls", "schema_errors", "ENGINE_FIELDS", "Reasoning"]

# (start tag or None, end tag, whether the reply starts inside the reasoning block)
Reasoning = tuple[str | None, str, bool]
# The field each engine takes its constraint in.
ENGINE_FIELDS = {"vllm": "structural_tag", "sglang": "structural_tag", "llamacpp": "grammar"}


class Unconstrainable(ValueError):
    """This tool_choice cannot be enforced here (the dialect or the engine has no way)."""


def _functions(tools: Any) -> list[dict[str, Any]]:
    """OpenAI tools (``{"type": "function", "function": {...}}``), bare function dicts, or a
    name -> function mapping (``ParserRequest.tools``), as function dicts."""
    items = tools.values() if isinstance(tools, Mapping) else tools or ()
    out = []
    for tool in items:
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        if isinstance(fn.get("name"), str):
            out.append(dict(fn))
    return out


def chosen_functions(tools: Any, tool_choice: Any) -> list[dict[str, Any]] | None:
    """The functions one of which the reply must call, or None when it need not call any."""
    functions = _functions(tools)
    if isinstance(tool_choice, Mapping):
        fn = tool_choice.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool_choice.get("name")
        named = [f for f in functions if f["name"] == name]
        if not named:
            raise ValueError(f"tool_choice names tool {name!r}, which is not in tools")
        return named
    if tool_choice == "required":
        if not functions:
            raise ValueError("tool_choice 'required' needs a non-empty tools list")
        return functions
    return None


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


def _single(tool_choice: Any, parallel: bool) -> bool:
    return isinstance(tool_choice, Mapping) or not parallel  # a named tool is called once, as vLLM does


def gbnf_for(dialect: str, tools: Any, tool_choice: Any, parallel: bool = True,
             reasoning: Reasoning | None = None) -> str | None:
    """llama.cpp's ``grammar`` for a reply that must call a tool (None when it need not)."""
    functions = chosen_functions(tools, tool_choice)
    if functions is None:
        return None
    return calls_grammar(dialect_syntax(dialect), functions, _single(tool_choice, parallel), reasoning)


def structural_tag_for(dialect: str, tools: Any, tool_choice: Any, parallel: bool = True,
                       reasoning: Reasoning | None = None) -> dict[str, Any] | None:
    """The XGrammar structural tag for a reply that must call a tool (None when it need not)."""
    functions = chosen_functions(tools, tool_choice)
    if functions is None:
        return None
    return structural_tag(dialect_syntax(dialect), functions, _single(tool_choice, parallel), reasoning)


def constraint_for(dialect: str | None, engine: str, tools: Any, tool_choice: Any, parallel: bool = True,
                   reasoning: Reasoning | None = None) -> dict[str, str] | None:
    """``{field: value}`` for ``engine``'s request (see the module docstring), or None."""
    if chosen_functions(tools, tool_choice) is None:
        return None
    field = ENGINE_FIELDS.get(engine)
    if field is None:
        raise Unconstrainable(f"the {engine} engine has no way to constrain generation")
    if field == "grammar":
        return {field: gbnf_for(dialect or "", tools, tool_choice, parallel, reasoning) or ""}
    tag = structural_tag_for(dialect or "", tools, tool_choice, parallel, reasoning)
    return {field: json.dumps(tag, ensure_ascii=False)}
