"""The ``response-template`` parser: a Hugging Face ``response_template`` run on lmparse's router.

``ResponseTemplate(source)`` reads the template (``template_spec``) and compiles its three
served fields, as transformers' serving maps them, onto the machinery every dialect uses:

* ``reasoning_content`` / ``thinking`` / ``reasoning`` (``text``): the router's reasoning tags;
* ``tool_calls``: a tool dialect built from the region's opener, closer and content type
  (``lmparse.tools.template_calls``), so arguments stream as they arrive, identity first;
* the implicit field (``content``): the router's plain text.

The reply starts where the prompt leaves it (HF's ``prefix``): inside reasoning when the
prompt ends with the reasoning opener unclosed, else as content; without a prompt, as content.

Where lmparse differs from transformers 5.24.0's executor (docs/response-template.md):
content is streamed verbatim and concatenated (HF strips a ``text`` value and the last close
overwrites: content before a call is lost); a call written inside a reasoning region is a call,
and the reasoning goes on after it (HF leaves the call in the reasoning text); ``xml-inline``
values lose one newline on each side (HF strips all whitespace); whitespace before an opener is
content and the implicit field's end-of-turn closers are text of the reply (the server's stop
handling removes them); a field other than the three served ones is refused.

``ResponseTemplate(source, mode="beam")`` (the ``beam`` response parser) applies vLLM's rules
for Beam checkpoints on top: only ``thinking``, ``content`` and ``tool_calls`` fields and only
``role`` in ``defaults``; ``thinking`` and ``content`` plain ``text`` (no transform, no join);
no ``python-call-list``; ``json`` calls without a transform are ``{"name", "arguments"}``
objects; several thinking openers route on the shortest when every other ends with it; and
``enable_thinking: false`` means the reasoning has already ended, whatever the prompt says.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..reasoning import ReasoningParser
from ..request import ParserRequest
from ..tools.base import ToolParser
from ..tools.template_calls import (envelope_parser, literal_call_parser, named_json_parser, python_list_parser,
                                    xml_call_parser)
from ..tools.value_grammar import ValueGrammar
from .base import BaseResponseParser
from .template_spec import FieldSpec, Part, TemplateSpec, pattern_parts, read_template

__all__ = ["BeamTemplateParser", "ResponseTemplate", "ResponseTemplateParser"]

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
SERVED_FIELDS = frozenset((*REASONING_FIELDS, "content", "tool_calls"))
BEAM_FIELDS = frozenset(("thinking", "content", "tool_calls"))  # vLLM's fixed names for Beam
BEAM_CALL_CONTENT = frozenset(("json", "xml-inline", "kv-lines"))  # vLLM's vendored call content parsers
MODES = ("hf", "beam")
_ENVELOPE = {"type": "function", "function": "{content}"}
_NAMED = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


class ResponseTemplateParser(BaseResponseParser):
    """The router, with the tool and reasoning parsers a ``ResponseTemplate`` compiled.  Built
    by ``create_parser(response_template=...)`` or ``ResponseTemplate.parser``."""

    summary = "a Hugging Face response_template (tokenizer_config.json), executed on the router"
    streaming = "content and reasoning as they arrive; tool arguments as they arrive (json, xml-inline)"
    template_mode: ClassVar[str] = "hf"  # the ``ResponseTemplate`` mode a parser of this class runs


class BeamTemplateParser(ResponseTemplateParser):
    """Beam checkpoints (vLLM ``beam``): the checkpoint's ``response_template`` under vLLM's
    field-name and content-parser rules.  ``create_parser(response_parser="beam",
    response_template=...)`` or ``ResponseTemplate(source, mode="beam").parser``."""

    summary = "a Beam checkpoint's response_template, with vLLM's field and content-parser rules"
    template_mode = "beam"


class ResponseTemplate:
    """A compiled template; ``parser()`` builds one response's parser (cheap: classes are made once)."""

    def __init__(self, source: Any, mode: str = "hf") -> None:
        if mode not in MODES:
            raise ValueError(f"response_template mode {mode!r}; valid: {', '.join(MODES)}")
        spec = source if isinstance(source, TemplateSpec) else read_template(source)
        beam = mode == "beam"
        if beam:
            _check_beam(spec)
        extra = sorted(set(spec.fields) - SERVED_FIELDS)
        if extra:
            raise ValueError(f"{spec.source}: field(s) {extra} are not served (lmparse serves "
                             f"{', '.join(sorted(SERVED_FIELDS))})")
        implicit = [f.name for f in spec.fields.values() if f.implicit]
        if implicit and implicit != ["content"]:
            raise ValueError(f"{spec.source}: the field without an opener must be 'content', not {implicit[0]!r}")
        content = spec.fields.get("content")
        if content is not None and (not content.implicit or content.content != "text"):
            raise ValueError(f"{spec.source}: 'content' must be the text field without an opener "
                             "(lmparse routes every other text to it)")
        self.spec, self.mode = spec, mode
        self.parser_class = BeamTemplateParser if beam else ResponseTemplateParser
        self.reasoning_class = _reasoning_class(spec, beam)
        calls = spec.fields.get("tool_calls")
        self.tool_class = _tool_class(spec.source, calls, beam) if calls is not None else None

    def parser(self, request: Any = None, prompt: str | None = None, tokenizer: Any = None) -> ResponseTemplateParser:
        """A fresh parser for one response, from this compiled template: ``request`` as for
        ``create_parser``, ``prompt`` the rendered prompt (where the reply starts)."""
        from ..request import normalize_request

        req = ParserRequest.accept_all() if request is None else normalize_request(request)
        tool = self.tool_class(req) if self.tool_class is not None else None
        reasoner = self.reasoning_class(req, prompt) if self.reasoning_class is not None else None
        return self.parser_class(req, tool_parser=tool, reasoning_parser=reasoner, tokenizer=tokenizer)


def _check_beam(spec: TemplateSpec) -> None:
    """vLLM's startup checks for a Beam checkpoint's template (PROTOCOLS.md, ``beam``)."""
    where = spec.source
    extra = sorted(set(spec.fields) - BEAM_FIELDS)
    if extra:
        raise ValueError(f"{where}: field(s) {extra} are not Beam fields (beam serves "
                         f"{', '.join(sorted(BEAM_FIELDS))})")
    defaults = sorted(set(spec.default_keys) - {"role"})
    if defaults:
        raise ValueError(f"{where}: defaults {defaults}: beam takes only 'role'")
    for name in ("thinking", "content"):
        field = spec.fields.get(name)
        if field is not None and (field.content != "text" or field.transform is not None or field.join is not None):
            raise ValueError(f"{where}: field {name!r} cannot be streamed: beam needs content 'text' "
                             "with no transform or join")
    calls = spec.fields.get("tool_calls")
    if calls is not None and calls.content not in BEAM_CALL_CONTENT:
        raise ValueError(f"{where}: tool_calls content {calls.content!r} is not a Beam call content "
                         f"(valid: {', '.join(sorted(BEAM_CALL_CONTENT))})")


class _PrefixDecides(ReasoningParser):
    """Reasoning opened by the template's region: the prompt after its last start anchor decides
    the start (HF's prefix); without a prompt, content."""

    initial_mode = "auto"
    anchors: tuple[str, ...] = ()
    thinking_off_is_content = False  # beam: ``enable_thinking: false`` = the reasoning has ended

    def __init__(self, request: ParserRequest, prompt: str | None = None) -> None:
        if self.thinking_off_is_content and request.thinking is False:
            prompt = ""  # a prompt that opens nothing: the reply starts as content
        elif prompt is not None:
            cut = max((at + len(a) for a in self.anchors if (at := prompt.rfind(a)) >= 0), default=0)
            prompt = prompt[cut:]
        super().__init__(request, prompt)

    def starts_in_reasoning(self) -> bool:
        return False  # HF with an empty prefix starts in the implicit field


def _reasoning_class(spec: TemplateSpec, beam: bool = False) -> type[ReasoningParser] | None:
    field = spec.field(*REASONING_FIELDS)
    if field is None:
        return None
    if field.content != "text":
        raise ValueError(f"{spec.source}: reasoning field {field.name!r} must have content 'text'")
    opens = _shortest_suffix(field.opens) if beam else field.opens
    start, end = _literal(spec.source, field, opens, "open"), _literal(spec.source, field, field.closes, "close")
    return type("TemplateReasoningParser", (_PrefixDecides,),
                {"start_tag": start, "end_tag": end, "anchors": spec.anchors, "thinking_off_is_content": beam})


def _shortest_suffix(alternatives: tuple[tuple[Part, ...], ...]) -> tuple[tuple[Part, ...], ...]:
    """vLLM's Beam reasoning start: the shortest literal opener, when every other ends with it
    (what comes before it in a longer opener is then text of the reply)."""
    texts = [t for t in map(_text_of, alternatives) if t is not None]
    if len(texts) < 2 or len(texts) != len(alternatives):
        return alternatives
    shortest = min(texts, key=len)
    return ((Part("text", shortest),),) if all(t.endswith(shortest) for t in texts) else alternatives


def _literal(where: str, field: FieldSpec, alternatives: tuple[tuple[Part, ...], ...], key: str) -> str:
    texts = [_text_of(parts) for parts in alternatives]
    if len(texts) != 1 or texts[0] is None:
        raise ValueError(f"{where}: field {field.name!r} needs one literal {key} (no captures) for lmparse to route it")
    return texts[0]


def _text_of(parts: tuple[Part, ...]) -> str | None:
    """The literal a part sequence spells, leading / trailing optional whitespace aside (None: not literal)."""
    core = _trim(parts)
    return "".join(p.value for p in core) if core and all(p.kind == "text" for p in core) else None


def _trim(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    start, end = 0, len(parts)
    while start < end and parts[start].kind == "space":
        start += 1
    while end > start and parts[end - 1].kind == "space":
        end -= 1
    return parts[start:end]


def _close(where: str, field: FieldSpec) -> tuple[str | None, str | None]:
    """(function close, block close) from the closer: ``</function>\\s*</tool_call>`` or one literal."""
    if not field.closes:
        return None, None
    if len(field.closes) > 1:
        raise ValueError(f"{where}: tool_calls close must be one marker, not {len(field.closes)} alternatives")
    core = _trim(field.closes[0])
    texts = [p.value for p in core if p.kind == "text"]
    if len(texts) != len(core) - core.count(Part("space")) or not 1 <= len(texts) <= 2:
        raise ValueError(f"{where}: tool_calls close must be one literal, or two joined by \\s*")
    return (texts[0], texts[1]) if len(texts) == 2 else (None, texts[0])


def _tool_class(where: str, field: FieldSpec, beam: bool = False) -> type[ToolParser]:
    if field.implicit:
        raise ValueError(f"{where}: tool_calls needs an opener")
    shape = _call_shape(where, field.transform)
    if beam and shape == "list" and field.content == "json":
        shape = "envelope"  # vLLM reads the region's object as {"name", "arguments"}
    opener = _trim(field.opens[0])
    function_close, close = _close(where, field)
    if field.content == "python-call-list":
        return python_list_parser(_need_literal(where, opener), close)
    if field.content == "json" and shape == "envelope":
        tags = tuple(_need_literal(where, _trim(o)) for o in field.opens)
        return envelope_parser(tags, close)
    if field.content == "json" and shape == "named":
        return _literal_calls(where, field, opener, close)
    if field.content == "xml-inline" and shape == "named":
        return _xml_calls(where, field, opener, function_close, close)
    raise ValueError(f"{where}: tool_calls with content {field.content!r} and transform {field.transform!r} "
                     "is not supported (json, xml-inline or python-call-list calls)")


def _call_shape(where: str, transform: Any) -> str:
    if transform == _ENVELOPE:
        return "envelope"
    if transform == _NAMED:
        return "named"
    if transform is None:
        return "list"
    raise ValueError(f"{where}: tool_calls transform {transform!r}: expected {_ENVELOPE} or {_NAMED}")


def _need_literal(where: str, parts: tuple[Part, ...]) -> str:
    text = _text_of(parts)
    if text is None:
        raise ValueError(f"{where}: tool_calls open must be literal text here")
    return text


def _split_open_tag(text: str) -> tuple[str, str]:
    """``<|tool_call>call:`` as the tag (through its last ``>``) and what follows it."""
    cut = text.rfind(">") + 1
    return (text[:cut], text[cut:]) if cut else (text, "")


def _literal_calls(where: str, field: FieldSpec, opener: tuple[Part, ...], close: str | None) -> type[ToolParser]:
    if [p.kind for p in opener] != ["text", "capture"] or opener[1].name != "name":
        raise ValueError(f"{where}: a named json call's open must be TEXT(?P<name>...)")
    args = field.content_args
    delims = args.get("string_delims") or []
    tag, head = _split_open_tag(opener[0].value)
    if not args.get("unquoted_keys") and not delims:
        return named_json_parser(tag, head, opener[1].value, close)
    if not args.get("unquoted_keys") or len(delims) != 1:
        raise ValueError(f"{where}: a named json call takes plain JSON, or unquoted_keys with one string_delims pair")
    return literal_call_parser(tag, head, opener[1].value, ValueGrammar(delims[0][0], delims[0][1]), close)


def _xml_calls(where: str, field: FieldSpec, opener: tuple[Part, ...], function_close: str | None,
               close: str | None) -> type[ToolParser]:
    texts = [p for p in opener if p.kind != "space"]
    if [p.kind for p in texts] != ["text", "text", "capture", "text"] or texts[2].name != "name":
        raise ValueError(f"{where}: an xml-inline call's open must be TAG\\s*FUNCTION(?P<name>...)END")
    tag_pattern = field.content_args.get("tag_pattern")
    if not isinstance(tag_pattern, str):
        raise ValueError(f"{where}: xml-inline needs content_args.tag_pattern")
    tag = [p for p in pattern_parts(tag_pattern) if p.kind != "space"]
    if [(p.kind, p.name) for p in tag] != [("text", ""), ("capture", "key"), ("text", ""), ("capture", "value"),
                                          ("text", "")]:
        raise ValueError(f"{where}: tag_pattern must be OPEN(?P<key>...)END\\s*(?P<value>.*?)\\s*CLOSE")
    return xml_call_parser(texts[0].value, texts[1].value, texts[3].value, tag[0].value, tag[2].value,
                           tag[4].value, function_close or "", close)
