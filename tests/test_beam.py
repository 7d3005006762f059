"""``beam``: a Beam checkpoint's ``response_template`` under vLLM's rules (PROTOCOLS.md, "``beam``").

No Beam checkpoint, template or output is public, so the metadata is hand-written Beam-style
(tests/support/response_templates.py).  ``VLLM_CASES`` replays the parse-level cases of vLLM's
tests/parser/test_response_template.py (its Gemma 4-shaped metadata, prompts and outputs) with
lmparse's own expected values, and says for each whether vLLM expects the same message.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from lmparse import ResponseParserManager, create_parser
from lmparse.families import get_family
from lmparse.response.template import BeamTemplateParser, ResponseTemplate, ResponseTemplateParser

from .support.response_templates import BEAM_DELIMITED, BEAM_GEMMA, BEAM_XML, QWEN3
from .support.stream import Expected, check_parse


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


TOOLS = [_tool(n) for n in ("set_alarm", "get_weather", "complex_function", "configure", "get-weather")]
PREFIX = "<|turn>model\n"
THINKING = "<|channel>thought\nplan<channel|>"
ALARM = '<|tool_call>call:set_alarm{hour:7,label:<|"|>morning<|"|>}<tool_call|>'
ALARM_ARGS = '{"hour": 7, "label": "morning"}'
ALARM_CALL = ("set_alarm", ALARM_ARGS)


class Case(NamedTuple):
    prompt: str
    text: str
    expected: Expected
    same_as_vllm: bool  # vLLM's expected (content, reasoning, calls) is this one
    request: dict[str, Any] | None = None


# Where lmparse differs, the reason is one of docs/response-template.md's: a closer of the
# implicit content field stays text (the server's stop handling removes it); a broken,
# truncated or undeclared call keeps its text or what it had (vLLM drops it, or forwards a call
# to an undeclared tool); a region is never continued across the prompt / reply boundary.
VLLM_CASES = {
    "content": Case(PREFIX, "Hello<turn|>", Expected("Hello<turn|>"), False),
    "reasoning": Case(PREFIX, THINKING + "The answer is 42.<turn|>", Expected("The answer is 42.<turn|>", "plan"),
                      False),
    "tool": Case(PREFIX, THINKING + ALARM, Expected(None, "plan", [ALARM_CALL]), True),
    "content_then_tool": Case(PREFIX, "Let me check." + ALARM, Expected("Let me check.", None, [ALARM_CALL]), True),
    "multiple_tools": Case(
        PREFIX, '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>' + ALARM,
        Expected(None, None, [("get_weather", '{"city": "Paris", "unit": "celsius"}'), ALARM_CALL]), True),
    "nested_arguments": Case(
        PREFIX, '<|tool_call>call:complex_function{nested:{inner:<|"|>value<|"|>},list:[<|"|>a<|"|>,<|"|>b<|"|>]}'
        "<tool_call|>", Expected(None, None, [("complex_function", '{"nested": {"inner": "value"}, "list": ["a", "b"]}')]),
        True),
    "nullable_values": Case(
        PREFIX, "<|tool_call>call:configure{enabled:false,ratio:5.0,label:null,value:null}<tool_call|>",
        Expected(None, None, [("configure", '{"enabled": false, "ratio": 5.0, "label": null, "value": null}')]), True),
    "prefilled_reasoning": Case(PREFIX + "<|channel>thought\n", "continued reasoning<channel|>Final answer<turn|>",
                                Expected("Final answer<turn|>", "continued reasoning"), False),
    "direct_answer": Case(PREFIX, "Direct answer without reasoning.<turn|>",
                          Expected("Direct answer without reasoning.<turn|>"), False),
    # Rule 6 (issue 23): a call cut off keeps what streamed, and the end closes it as a JSON
    # object (``"``, ``}``), so the arguments are never unparseable.
    "incomplete_call": Case(PREFIX, '<|tool_call>call:get_weather{city:<|"|>London',
                            Expected(None, None, [("get_weather", '{"city": "London"}')]), False),
    "content_after_call": Case(PREFIX, ALARM + "Done.<turn|>", Expected("Done.<turn|>", None, [ALARM_CALL]), False),
    "hyphenated_name": Case(PREFIX, '<|tool_call>call:get-weather{city:<|"|>London<|"|>}<tool_call|>',
                            Expected('<|tool_call>call:get-weather{city:<|"|>London<|"|>}<tool_call|>'), False),
    "prefill_reasoning_text": Case(PREFIX + "<|channel>thought\nprefill", " generated<channel|>",
                                   Expected(" generated<channel|>"), False),
    "prefill_content": Case(PREFIX + "prefill ", "generated<turn|>", Expected("generated<turn|>"), False),
    "prefill_unresolved_partial_delimiter": Case(PREFIX + "<|chan", "nel", Expected("nel"), True),
    "prefill_completed_partial_delimiter": Case(PREFIX + "<|chan", "nel>thought\nreason<channel|>",
                                                Expected("nel>thought\nreason<channel|>"), False),
    "unknown_call": Case(PREFIX, ALARM.replace("call:set_alarm", "call:unknown"), Expected(), False),
    "tool_choice_none": Case(PREFIX, ALARM, Expected(ALARM), True, {"tools": TOOLS, "tool_choice": "none"}),
    # vLLM drops the call when its closer never comes, and completes it when the closer was the
    # stop token (ids only); lmparse, which reads text, gives the complete call either way.
    "call_cut_before_its_closer": Case(PREFIX, ALARM.removesuffix("<tool_call|>"), Expected(None, None, [ALARM_CALL]),
                                       False),
    "delimited_plain_content": Case("<assistant>", "<think>plan</think>answer", Expected("answer", "plan"), True),
}


def _beam(case: Case, template: Any = BEAM_GEMMA) -> Any:
    return create_parser(response_parser="beam", response_template=template, request=case.request or {"tools": TOOLS},
                         prompt=case.prompt)


@pytest.mark.parametrize("name", VLLM_CASES)
def test_vllm_response_template_cases(name: str) -> None:
    case = VLLM_CASES[name]
    template = BEAM_DELIMITED if case.prompt == "<assistant>" else BEAM_GEMMA
    check_parse(lambda: _beam(case, template), case.text, case.expected)


def test_how_many_vllm_cases_beam_handles_identically() -> None:
    """The count the docs give: 8 of the 20 parse cases end in the message vLLM expects."""
    assert sum(c.same_as_vllm for c in VLLM_CASES.values()) == 8 and len(VLLM_CASES) == 20


def test_generation_before_the_call_region_closes_streams_the_arguments() -> None:
    """Beyond vLLM (whole calls at region close): identity first, then the argument text."""
    p = _beam(Case(PREFIX, "", Expected(), True))
    deltas = p.stream_chunk('<|tool_call>call:set_alarm{label:<|"|>mor')
    calls = [tc for d, _ in deltas for tc in (d.tool_calls or [])]
    assert calls[0].function.name == "set_alarm"
    assert "mor" in "".join(tc.function.arguments or "" for tc in calls)


def test_separate_replies_get_distinct_call_ids() -> None:
    ids = [_beam(VLLM_CASES["tool"]).parse_complete(ALARM).tool_calls[0].id for _ in range(2)]
    assert ids[0] and ids[1] and ids[0] != ids[1]


# ---- what the Beam rules change against the plain response-template parser ---------------------

def test_a_json_region_without_transform_is_a_name_arguments_object() -> None:
    text = 'Sure.\n<think>plan</think><call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'
    check_parse(lambda: _beam(Case("<assistant>", "", Expected(), True), BEAM_DELIMITED), text,
                Expected("Sure.\n", "plan", [("get_weather", '{"city": "Paris"}')]))
    calls_only = {**BEAM_DELIMITED, "fields": {"tool_calls": BEAM_DELIMITED["fields"]["tool_calls"]}}
    with pytest.raises(ValueError, match="not supported"):
        create_parser(response_template=calls_only)  # the plain parser refuses it


def test_the_thinking_opener_is_the_shortest_one_every_other_ends_with() -> None:
    """``\\n<think>`` and ``<think>`` open the field: reasoning starts at ``<think>``; the newline
    before it is text."""
    assert ResponseTemplate(BEAM_DELIMITED, "beam").reasoning_class.start_tag == "<think>"  # type: ignore[union-attr]
    check_parse(lambda: _beam(Case("<assistant>", "", Expected(), True), BEAM_DELIMITED), "Hi\n<think>a</think>b",
                Expected("Hi\nb", "a"))


@pytest.mark.parametrize("thinking,prompt,expected", [
    (None, "<|im_start|>assistant\n<think>\n", Expected("b", "a")),
    (True, "<|im_start|>assistant\n<think>\n", Expected("b", "a")),
    (False, "<|im_start|>assistant\n<think>\n", Expected("a</think>b")),  # thinking off: reasoning has ended
    (None, "<|im_start|>assistant\n", Expected("a</think>b")),
])
def test_enable_thinking_false_means_the_reasoning_has_ended(thinking: bool | None, prompt: str,
                                                             expected: Expected) -> None:
    request: dict[str, Any] = {"tools": TOOLS}
    if thinking is not None:
        request["chat_template_kwargs"] = {"enable_thinking": thinking}

    def make() -> Any:
        return create_parser(response_parser="beam", response_template=BEAM_XML, request=request, prompt=prompt)

    check_parse(make, "a</think>b", expected)


def test_xml_inline_calls_stream_their_values() -> None:
    text = "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"

    def make() -> Any:
        return create_parser(response_parser="beam", response_template=BEAM_XML, request={"tools": TOOLS})

    # Whitespace before an opener is content (docs/response-template.md), as in hf mode.
    check_parse(make, text, Expected("Checking.\n", None, [("get_weather", '{"city": "Paris"}')]))


def _with_field(template: dict[str, Any], name: str, **changes: Any) -> dict[str, Any]:
    fields = dict(template["fields"])
    fields[name] = {**fields.get(name, {}), **changes}
    return {**template, "fields": fields}


@pytest.mark.parametrize("template,message", [
    (QWEN3, r"\['reasoning_content'\] are not Beam fields"),  # transformers' name, not vLLM's
    (_with_field(BEAM_GEMMA, "citations", open="<citation>", close="</citation>"), "citations"),
    ({**BEAM_GEMMA, "defaults": {"role": "assistant", "content": ""}}, r"defaults \['content'\]"),
    (_with_field(BEAM_GEMMA, "content", content="json"), "'content' cannot be streamed"),
    (_with_field(BEAM_GEMMA, "thinking", transform="{content}"), "'thinking' cannot be streamed"),
    (_with_field(BEAM_GEMMA, "content", repeats=True, join=""), "'content' cannot be streamed"),
    (_with_field(BEAM_GEMMA, "tool_calls", content="python-call-list", transform=None,
                 open_pattern=None, open="<calls>"), "python-call-list"),
])
def test_what_vllm_refuses_for_beam_is_refused_by_name(template: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_parser(response_parser="beam", response_template=template)


# ---- the name, the family, the factory ---------------------------------------------------------

def test_beam_is_a_family_whose_response_parser_runs_the_template_in_beam_mode() -> None:
    family = get_family("beam")
    assert family.response_parser == "beam" and family.tool is None and family.reasoning is None
    assert ResponseParserManager.get("beam") is BeamTemplateParser
    assert issubclass(BeamTemplateParser, ResponseTemplateParser)
    assert type(create_parser(response_parser="beam", response_template=BEAM_GEMMA)) is BeamTemplateParser
    assert type(create_parser(response_template=BEAM_GEMMA)) is ResponseTemplateParser


def test_beam_needs_a_template_and_the_matching_compiled_mode() -> None:
    with pytest.raises(ValueError, match='response_parser="beam" needs response_template='):
        create_parser(response_parser="beam")
    with pytest.raises(ValueError, match="compiled for mode 'hf', not 'beam'"):
        create_parser(response_parser="beam", response_template=ResponseTemplate(BEAM_GEMMA))
    with pytest.raises(ValueError, match="tool_parser"):
        create_parser(response_parser="beam", response_template=BEAM_GEMMA, tool_parser="gemma4")
    with pytest.raises(ValueError, match="mode 'vllm'"):
        ResponseTemplate(BEAM_GEMMA, "vllm")
