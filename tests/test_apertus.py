"""Apertus (``apertus`` tool and reasoning parsers).

The DESIGN §7 case table runs through tests/test_contract.py (``APERTUS`` in ALL_WIRES, the
markers as pseudo-tokens: no Apertus vocabulary is here).  Here: the name-as-key envelope,
calls inside reasoning, how arguments stream, the initial mode from the template's prompt,
round trips through the official template and hypothesis round trips with hazardous strings.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.strategies import assistant_calling, calls_with, prose
from .support.stream import Expected, arguments_after, check_parse, check_round_trip
from .support.typed_tools import TOOLS as DESCRIBED_TOOLS
from .support.wires import APERTUS, APERTUS_MARKERS, TOOLS, pseudo_tokens

TEMPLATE = "templates/Apertus-8B-Instruct.jinja"


def parser(request=None):
    return create_parser(tool_parser="apertus", reasoning_parser="apertus",
                         request={"tools": TOOLS} if request is None else request)


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, APERTUS_MARKERS)}


def test_name_is_the_key_and_its_value_the_arguments():
    text = 'Let me check.<|tools_prefix|>[{"get_weather": {"city": "Paris", "days": 3}}, {"f": {}}]<|tools_suffix|>'
    expected = Expected("Let me check.", None, [("get_weather", '{"city": "Paris", "days": 3}'), ("f", "{}")])
    check_parse(parser, text, expected, chunkings(text))


def test_a_call_inside_reasoning_is_a_call():
    """The block-form history interleaves thoughts and calls (SGLang's Apertus2509Detector)."""
    text = '<|inner_prefix|>look it up<|tools_prefix|>[{"f": {}}]<|tools_suffix|>then answer<|inner_suffix|>Done.'
    check_parse(parser, text, Expected("Done.", "look it upthen answer", [("f", "{}")]), chunkings(text))


def test_an_empty_name_is_dropped():
    p = parser(None)
    message = p.parse_complete('<|tools_prefix|>[{"": {"a": 1}}, {"f": {}}]<|tools_suffix|>')
    assert [tc.function.name for tc in message.tool_calls] == ["f"]


def test_string_value_streams_as_it_grows():
    steps = arguments_after(parser(), ['<|tools_prefix|>[{"get_weather": {"city": "', "Par", 'is \\"F', 'R"}}]',
                                       "<|tools_suffix|>"])
    assert steps[0] == '{"city": "'
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris \\"F', '{"city": "Paris \\"FR"}']


# ---- the official template -------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")


def render(messages, **switches) -> str:
    from .test_xml_templates import load_template

    # The template requires tool descriptions: the typed tools have them (only the prompt's text differs).
    return load_template(TEMPLATE).render(messages=messages, tools=DESCRIBED_TOOLS, strftime_now=lambda _: "2026-12-01",
                                          **switches)


@pytest.mark.parametrize("switches", [{}, {"enable_thinking": True}, {"enable_thinking": False}])
def test_reply_starts_plain_whatever_the_switch(switches):
    prompt = render([{"role": "user", "content": "Hi"}], add_generation_prompt=True, **switches)
    assert prompt.endswith("<|assistant_start|>")  # the switch only writes "Deliberation: ..."
    p = create_parser(tool_parser="apertus", reasoning_parser="apertus", request={"tools": TOOLS,
                      "chat_template_kwargs": switches}, prompt=prompt)
    assert p.parse_complete("Hello.").content == "Hello."


SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, None, {"k": "v"}, [], {}]}})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("f", {"s": "a]}, {\"g\": {}}]<|tools_suffix|>", "t": "<|inner_prefix|>x"})],
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario):
    calls = SCENARIOS[scenario]
    assistant = assistant_calling(calls, content="Let me check.")
    user = [{"role": "user", "content": "Weather in Paris?"}]
    prompt = render(user, add_generation_prompt=True)
    full = render([*user, assistant])
    assert full.startswith(prompt)
    reply = full[len(prompt):].split("<|assistant_end|>")[0]
    content, reasoning, got = check_parse(parser, reply, None, chunkings(reply))
    assert [(n, json.loads(a)) for n, a in got] == calls
    assert (content, reasoning) == ("Let me check.", None)
    wire = ToolParserManager.get("apertus").render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert reply == "Let me check." + wire  # render() writes the calls as the template does


# ---- hypothesis: adversarial strings round trip -----------------------------------------------

HAZARDS = ['"', "\\", ",", "]", "[", "}", "{", ":", "\n", "<|tools_suffix|>", "<|tools_prefix|>", "<|inner_suffix|>",
           '{"f": ', "é"]


def test_one_letter_reasoning_and_content_beside_the_markers():
    """Found by hypothesis in CI: reasoning ``r`` and content ``p`` are also letters of
    ``<|inner_prefix|>``; the conservation check once matched them there."""
    text = '<|inner_prefix|>r<|inner_suffix|>p<|tools_prefix|>[{"f": {}}]<|tools_suffix|>'
    check_round_trip(lambda: create_parser(tool_parser="apertus", reasoning_parser="apertus"), text,
                     ("p", "r", [("f", {})]), 0)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_with(HAZARDS), prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    rendered = [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    wire_text = ToolParserManager.get("apertus").render(rendered)
    assert wire_text == APERTUS.calls(*rendered)
    text = f"<|inner_prefix|>{reasoning}<|inner_suffix|>{content}{wire_text}" if reasoning else content + wire_text

    def make():  # no request: any name
        return create_parser(tool_parser="apertus", reasoning_parser="apertus")

    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    check_round_trip(make, text, want, seed)
