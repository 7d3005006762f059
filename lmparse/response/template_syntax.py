"""A compiled ``response_template``'s calls as a ``CallSyntax``, for generation constraints.

``template_calls(template)`` reads the ``tool_calls`` region the parser was compiled from
(its opener, closer, content type and arguments) into the data ``lmparse.constrain`` builds
structural tags and GBNF from, so what a constraint forces is what the template parser reads:

* ``json`` holding a ``{"name": ..., "arguments": ...}`` object (the ``{"function":
  "{content}"}`` transform, or a Beam region without transform): the object, keys in that order;
* ``json`` after an opener that captures the name: the arguments, as JSON, or as the object
  literal of ``content_args`` (``unquoted_keys`` with the one ``string_delims`` pair lmparse
  has a literal style for, Gemma 4's ``<|"|>``);
* ``xml-inline``: the opener, one ``tag_pattern`` tag per argument, the closer.

A template only says where whitespace may be (``\\s*``), not what a model writes there:
inside a marker the constraint writes one newline (Qwen's layout), at a marker's edges and
where the template says nothing, none.  A region lmparse cannot describe (a
``python-call-list``, an opener capturing more than the name, other string delimiters) is a
``ValueError`` saying why; ``lmparse.constrain`` turns it into ``Unconstrainable``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..request import ParserRequest
from ..tools.syntax import CallSyntax, ParamSyntax
from ..tools.value_grammar import GEMMA_LITERAL
from .template import ResponseTemplate, _call_shape, _trim
from .template_spec import FieldSpec, Part, pattern_parts

__all__ = ["TemplateCalls", "template_calls", "template_reasoning", "sorted_arguments"]

LAYOUT = "\n"  # what the constraint writes where the template allows optional whitespace
_NAME = "\x00"  # where a capture was, once a marker is spelled out
_VALUE = "\x01"
# The call object's keys, as the transform ``{"name": "{name}", "arguments": "{content}"}`` names them.
_ENVELOPE_HEAD, _ENVELOPE_ARGS = '{"name": "', '", "arguments": '


class TemplateCalls(NamedTuple):
    """What a constraint needs to know of a template's calls."""

    syntax: CallSyntax
    name_pattern: str | None  # the regex a name must match (an opener that captures it), or None
    repeats: bool  # the region may occur more than once: several calls


def template_calls(template: ResponseTemplate) -> TemplateCalls:
    """The call syntax of ``template``'s ``tool_calls`` region (``ValueError`` saying why there is none)."""
    field = template.spec.fields.get("tool_calls")
    where = template.spec.source
    if field is None:
        raise ValueError(f"{where} has no tool_calls field")
    shape = _call_shape(where, field.transform)
    if field.content == "json" and (shape == "envelope" or (shape == "list" and template.mode == "beam")):
        begin = _spell(field.opens[0], where)
        syntax = CallSyntax(begin + _ENVELOPE_HEAD, _ENVELOPE_ARGS, "json", "}" + _closer(field, where))
        return TemplateCalls(syntax, None, field.repeats)
    if shape == "named" and field.content in ("json", "xml-inline"):
        before, after, pattern = _named_opener(field, where)
        if field.content == "json":
            syntax = CallSyntax(before, after, _json_style(field, where), _closer(field, where))
        else:
            syntax = CallSyntax(before, after, "xml-inline", _closer(field, where), params=_xml_params(field, where))
        return TemplateCalls(syntax, pattern, field.repeats)
    raise ValueError(f"{where}: tool_calls with content {field.content!r} and transform {field.transform!r} "
                     "has no call syntax to constrain generation with (json and xml-inline calls do)")


def template_reasoning(template: ResponseTemplate, request: ParserRequest,
                       prompt: str | None = None) -> tuple[str | None, str, bool] | None:
    """The reasoning block a constrained reply may hold, as ``lmparse.constrain`` takes it:
    ``(start tag, end tag, the reply starts inside it)``; None when it may hold none (no
    reasoning field, or thinking is off and the prompt left no block open)."""
    cls = template.reasoning_class
    if cls is None:
        return None
    inside = cls(request, prompt).initial_reasoning()
    if not inside and request.thinking is False:
        return None
    return cls.start_tag, cls.end_tag, inside


def _spell(parts: tuple[Part, ...], where: str, names: tuple[str, ...] = ()) -> str:
    """A marker as the text a constraint writes: its literals, ``LAYOUT`` for inner whitespace, and
    ``_NAME`` / ``_VALUE`` for the captures ``names`` lists (in that order); another capture is refused."""
    out = []
    for part in _trim(parts):
        if part.kind == "capture":
            if part.name not in names:
                raise ValueError(f"{where}: the capture (?P<{part.name}>{part.value}) in a tool_calls marker "
                                 "has no text a constraint could write")
            out.append((_NAME, _VALUE)[names.index(part.name)])
        else:
            out.append(LAYOUT if part.kind == "space" else part.value)
    return "".join(out)


def _closer(field: FieldSpec, where: str) -> str:
    return _spell(field.closes[0], where) if field.closes else ""


def _named_opener(field: FieldSpec, where: str) -> tuple[str, str, str]:
    """The opener's text before and after the captured name, and the name's pattern."""
    opener = field.opens[0]
    before, _, after = _spell(opener, where, ("name",)).partition(_NAME)
    pattern = next(p.value for p in opener if p.kind == "capture")
    return before, after, pattern


def _json_style(field: FieldSpec, where: str) -> str:
    """The argument style of a named json call: JSON, or the object literal its content_args describe."""
    args = field.content_args
    delims = args.get("string_delims") or []
    if not args.get("unquoted_keys") and not delims:
        return "json"
    if [list(d) for d in delims] == [[GEMMA_LITERAL.string_open, GEMMA_LITERAL.string_close]]:
        return "gemma"
    raise ValueError(f"{where}: tool_calls object literals with string_delims {delims!r} have no grammar here "
                     f"(only {GEMMA_LITERAL.string_open!r} strings with unquoted keys, or plain JSON)")


def _xml_params(field: FieldSpec, where: str) -> ParamSyntax:
    """One argument of an xml-inline call, from ``content_args.tag_pattern``."""
    tag = _spell(pattern_parts(field.content_args["tag_pattern"]), where, ("key", "value"))
    open_, _, rest = tag.partition(_NAME)
    key_end, _, close = rest.partition(_VALUE)
    return ParamSyntax(open_, key_end, key_end, close)


def sorted_arguments(schema: Any) -> Any:
    """``schema`` with every object's properties in name order (how vLLM's Beam grammar writes them)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {key: sorted_arguments(properties[key]) for key in sorted(properties)}
    if isinstance(schema.get("items"), dict):
        out["items"] = sorted_arguments(schema["items"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            out[key] = [sorted_arguments(option) for option in schema[key]]
    return out
