"""XGrammar structural tags (vLLM ``structured_outputs.structural_tag``, SGLang ``structural_tag``).

Plain dicts in the shape of xgrammar 0.2.9's ``StructuralTag`` (``{"type": "structural_tag",
"format": ...}``), built from a dialect's CallSyntax, so the core needs no xgrammar: one
``tag`` per tool (begin: the call up to its arguments, content: the arguments' JSON schema
in the dialect's style, end: the call's end), in a ``tags_with_separator`` with
``at_least_one`` (a call is required) and ``stop_after_first`` (one call only), inside the
section markers of a dialect that groups its calls, after the reasoning block if any.
Pythonic and Gemma 4 object-literal arguments, and XML parameter layouts XGrammar has no
style for (Kimi-K3's XTML), have no XGrammar style: their content is the GBNF of
``gbnf.py``, which XGrammar's EBNF parser reads.
"""

from __future__ import annotations

from typing import Any

from ..tools.syntax import CallSyntax
from .gbnf import GbnfRules, arguments_rule
from .literals import literals_for

__all__ = ["structural_tag"]

Format = dict[str, Any]
# The XML parameter styles of xgrammar 0.2.9's ``json_schema`` content.
XGRAMMAR_STYLES = frozenset({"json", "qwen_xml", "minimax_xml", "deepseek_xml", "glm_xml"})


def _const(text: str) -> Format:
    return {"type": "const_string", "value": text}


def _arguments(syntax: CallSyntax, schema: Any) -> Format:
    schema = {"type": "object", **schema} if isinstance(schema, dict) else {"type": "object"}
    content: Format
    if syntax.arguments not in XGRAMMAR_STYLES:  # no XGrammar style: a grammar of their own
        rules = GbnfRules(literals_for(syntax.arguments))
        rules.rules["root"] = ""
        rules.rules["root"] = arguments_rule(rules, syntax, schema)
        content = {"type": "grammar", "grammar": rules.render()}
    else:
        content = {"type": "json_schema", "json_schema": schema, "style": syntax.arguments}
    if syntax.numbered:
        content = {"type": "sequence", "elements": [{"type": "regex", "pattern": "[0-9]{1,4}"},
                                                    _const(syntax.args_open), content]}
    return content


def _tag(syntax: CallSyntax, fn: dict[str, Any]) -> Format:
    return {"type": "tag", "begin": syntax.call_begin(fn["name"]), "content": _arguments(syntax, fn.get("parameters")),
            "end": syntax.call_end}


def structural_tag(syntax: CallSyntax, functions: list[dict[str, Any]], single: bool,
                   reasoning: tuple[str | None, str, bool] | None = None) -> dict[str, Any]:
    """One call (``single``) or one or more calls of ``functions``, after the reasoning block
    ``(start tag or None, end tag, the reply starts inside it)`` when there is one."""
    fmt: Format = {"type": "tags_with_separator", "tags": [_tag(syntax, fn) for fn in functions],
                   "separator": syntax.separator, "at_least_one": True, "stop_after_first": single}
    if syntax.section_open or syntax.section_close:
        fmt = {"type": "sequence", "elements": [_const(syntax.section_open), fmt, _const(syntax.section_close)]}
    if reasoning is not None:
        start, end, inside = reasoning
        thought: Format = {"type": "tag", "begin": "" if inside else start or "", "content": {"type": "any_text"},
                           "end": end}
        if not inside:
            thought = {"type": "optional", "content": thought}
        if inside or start:
            fmt = {"type": "sequence", "elements": [thought, {"type": "regex", "pattern": "[ \\n]{0,2}"}, fmt]}
    return {"type": "structural_tag", "format": fmt}
