"""GigaChat 3 / 3.1 (``gigachat3``; no reasoning markers, so no reasoning parser).

The DESIGN §7 case table runs through tests/test_contract.py (``GIGACHAT3`` in ALL_WIRES,
3.1's layout, the markers as pseudo-tokens: no GigaChat vocabulary is here).  Here: 3.0's
role-turn layout, how arguments stream, the reply's start, round trips through both official
templates and hypothesis round trips with hazardous strings.
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
from .support.wires import GIGACHAT3, TOOLS, pseudo_tokens

A = '{"city": "Paris", "days": 3}'


def parser(request=None):
    return create_parser(tool_parser="gigachat3", request={"tools": TOOLS} if request is None else request)


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, GIGACHAT3.pseudo_token_markers)}


@pytest.mark.parametrize("text", [
    "Let me check." + GIGACHAT3.role_turn("get_weather", A),  # 3.0
    "Let me check." + GIGACHAT3.call("get_weather", A),  # 3.1
], ids=["3.0-role-turn", "3.1-marker"])
def test_both_layouts_after_content(text):
    check_parse(parser, text, Expected("Let me check.", None, [("get_weather", A)]), chunkings(text))


def test_a_reply_that_is_only_the_call_turn():
    text = GIGACHAT3.role_turn("get_weather", A).removeprefix("<|message_sep|>\n\n")
    check_parse(parser, text, Expected(None, None, [("get_weather", A)]), chunkings(text))


def test_the_words_function_call_are_prose():
    text = "A function call is a request.<|message_sep|>"
    assert parser().parse_complete(text).content == "A function call is a request."


def test_string_value_streams_as_it_grows():
    steps = arguments_after(parser(), ['<|function_call|>{"name": "get_weather", "arguments": {"city": "', "Par",
                                       'is \\"F', 'R"}}', "<|message_sep|>"])
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris \\"F', '{"city": "Paris \\"FR"}']


# ---- the official templates ------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")
TEMPLATES = ["templates/GigaChat3-10B-A1.8B.jinja", "templates/GigaChat3.1-10B-A1.8B.jinja"]


def render(name: str, messages, **switches) -> str:
    from .test_xml_templates import load_template

    # The templates describe each tool's parameters: the typed tools have descriptions.
    return load_template(name).render(messages=messages, tools=DESCRIBED_TOOLS, **switches)


@pytest.mark.parametrize("name", TEMPLATES)
def test_prompt_ends_in_the_assistant_turn(name):
    prompt = render(name, [{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert prompt.endswith("assistant<|role_sep|>\n")
    assert parser().parse_complete("Hello.").content == "Hello."  # no reasoning parser: plain


SCENARIOS = {
    "typed_values": ("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, None, {"k": "v"}, [], {}]}}),
    "no_arguments": ("now", {}),
    "hazards_inside_strings": ("get_weather", {"city": "a}<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\":"}),
}


@pytest.mark.parametrize("name", TEMPLATES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(name, scenario):
    call = SCENARIOS[scenario]
    assistant = assistant_calling([call], content="Let me check.")
    user = [{"role": "user", "content": "Weather in Paris?"}]
    prompt = render(name, user, add_generation_prompt=True)
    full = render(name, [*user, assistant])
    assert full.startswith(prompt)
    reply = full[len(prompt):]
    reply = reply[:reply.rindex("<|message_sep|>") + len("<|message_sep|>")]  # generation stops there
    request = {"tools": DESCRIBED_TOOLS}
    content, reasoning, got = check_parse(lambda: parser(request), reply, None, chunkings(reply))
    assert [(n, json.loads(a)) for n, a in got] == [call]
    assert (content, reasoning) == ("Let me check.", None)
    if "3.1" in name:  # render() writes 3.1's layout
        assert reply.endswith(ToolParserManager.get("gigachat3").render([(call[0], json.dumps(call[1],
                                                                                              ensure_ascii=False))]))


# ---- hypothesis: adversarial strings round trip -----------------------------------------------

HAZARDS = ['"', "\\", ",", "}", "{", ":", "\n", "<|message_sep|>", "<|function_call|>", "function call<|role_sep|>",
           '"name": ', "é"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_with(HAZARDS), prose, st.integers(0, 1000))
def test_render_round_trip(calls, content, seed):
    rendered = [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    wire_text = ToolParserManager.get("gigachat3").render(rendered)
    assert wire_text == GIGACHAT3.calls(*rendered)
    text = content + wire_text

    def make():  # no request: any name
        return create_parser(tool_parser="gigachat3")

    want = (content or None, None, [(n, a) for n, a in calls])
    check_round_trip(make, text, want, seed)
