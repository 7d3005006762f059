"""Cohere Command A / R7B / Cohere2MoE (``cohere-command``, alias ``command-a``).

The DESIGN §7 case table runs through tests/test_contract.py (``COHERE`` in ALL_WIRES, the
markers as pseudo-tokens: no Command A vocabulary is published).  Here: the content
wrappers of cmd3 and cmd4, the model's ``tool_call_id``, how arguments stream, the initial
reasoning mode from both templates' prompts, round trips through both official templates and
hypothesis round trips with strings holding the family's markers and JSON punctuation.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.strategies import assistant_calling, calls_with, prose
from .support.stream import Expected, arguments_after, check_parse, check_round_trip
from .support.wires import COHERE, COHERE_MARKERS, TOOLS, pseudo_tokens

COHERE2MOE = "templates/Cohere2MoE.jinja"
R7B = "templates/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja"


def parser(request=None, prompt=None):
    return create_parser(tool_parser="cohere-command", reasoning_parser="cohere-command",
                         request={"tools": TOOLS} if request is None else request, prompt=prompt)


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, COHERE_MARKERS)}


PLAIN = "<|START_THINKING|><|END_THINKING|>"  # what both templates prefill with reasoning off


@pytest.mark.parametrize("open_,close", [("<|START_RESPONSE|>", "<|END_RESPONSE|>"), ("<|START_TEXT|>", "<|END_TEXT|>")],
                         ids=["cmd3", "cmd4"])
def test_content_wrappers_are_markup(open_, close):
    text = f"<|START_THINKING|>plan<|END_THINKING|>{open_}It is sunny.{close}"
    check_parse(lambda: parser(prompt="<|CHATBOT_TOKEN|>"), text, Expected("It is sunny.", "plan"), chunkings(text))


@pytest.mark.parametrize("request_", [{}, {"tools": TOOLS, "tool_choice": "none"}], ids=["no-tools", "choice-none"])
@pytest.mark.parametrize("open_,close", [("<|START_RESPONSE|>", "<|END_RESPONSE|>"), ("<|START_TEXT|>", "<|END_TEXT|>")],
                         ids=["cmd3", "cmd4"])
def test_content_is_unwrapped_without_tools_too(open_, close, request_):
    """No tool parser is at work: the reasoning parser names the wrappers as the family's framing."""
    text = f"<|START_THINKING|>plan<|END_THINKING|>{open_}It is sunny.{close}"
    check_parse(lambda: parser(request_, prompt="<|CHATBOT_TOKEN|>"), text, Expected("It is sunny.", "plan"),
                chunkings(text))


def test_alias_is_the_same_dialect():
    assert ToolParserManager.get("command-a") is ToolParserManager.get("cohere-command")


def test_model_call_ids_are_passed_over_for_fresh_ones():
    """The template renumbers calls from 0 in every conversation: "0" would repeat across turns."""
    text = COHERE.calls(("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Rome"}'))
    message = parser(prompt=PLAIN).parse_complete(text)
    ids = [tc.id for tc in message.tool_calls]
    assert len(set(ids)) == 2 and not {"0", "1"} & set(ids)
    assert [json.loads(tc.function.arguments) for tc in message.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]


def test_string_value_streams_as_it_grows():
    head = '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "'
    steps = arguments_after(parser(prompt=PLAIN), [head, "Par", 'is \\"F', 'R"}}\n]', "<|END_ACTION|>"])
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris \\"F', '{"city": "Paris \\"FR"}']


def test_end_action_inside_a_string_is_text():
    args = json.dumps({"q": "x]<|END_ACTION|>}, {\"tool_name\": \"g\""})
    text = COHERE.call("f", args) + "<|START_TEXT|>done<|END_TEXT|>"
    check_parse(lambda: parser(prompt=PLAIN), text, Expected("done", None, [("f", args)]), chunkings(text))


# ---- the official templates ------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")


def template(name: str):
    from .test_xml_templates import load_template

    return load_template(name)


def prompt_of(name: str, **switches) -> str:
    return template(name).render(messages=[{"role": "user", "content": "Weather?"}], tools=TOOLS,
                                 add_generation_prompt=True, **switches)


@pytest.mark.parametrize("name,switches,reasoning", [
    (COHERE2MOE, {}, True),  # ``reasoning`` defaults to on: the prompt ends with the opener
    (COHERE2MOE, {"reasoning": False}, False),
    (COHERE2MOE, {"reasoning_effort": "none"}, False),
    (R7B, {"enable_thinking": True}, False),  # nothing prefilled: content until the model opens
    (R7B, {"enable_thinking": False}, False),
])
def test_initial_mode_from_the_rendered_prompt(name, switches, reasoning):
    p = parser(prompt=prompt_of(name, **switches))
    message = p.parse_complete("Hi.<|END_THINKING|>" if reasoning else "<|START_RESPONSE|>Hi.<|END_RESPONSE|>")
    assert (message.content, message.reasoning_content) == ((None, "Hi.") if reasoning else ("Hi.", None))


SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, None, {"k": "v"}, [], {}]}})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("f", {"s": "a]}\n{\"tool_name\": 1}<|END_ACTION|>", "t": "<|START_TEXT|>x"})],
}


@pytest.mark.parametrize("name", [COHERE2MOE, R7B])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(name, scenario):
    calls = SCENARIOS[scenario]
    assistant = assistant_calling(calls, reasoning_content="The user wants weather.")
    messages = [{"role": "user", "content": "Weather in Paris?"}, assistant]
    switches = {} if name == COHERE2MOE else {"enable_thinking": True}
    full = template(name).render(messages=messages, tools=TOOLS, **switches)
    prompt = prompt_of(name, **switches).replace("Weather?", "Weather in Paris?")
    assert full.startswith(prompt)  # the reply is what follows the generation prompt
    reply = full[len(prompt):].split("<|END_OF_TURN_TOKEN|>")[0]
    content, reasoning, got = check_parse(lambda: parser(prompt=prompt), reply, None, chunkings(reply))
    assert [(n, json.loads(a)) for n, a in got] == calls
    assert (content, reasoning) == (None, "The user wants weather.")
    wire = ToolParserManager.get("cohere-command").render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert wire in reply  # render() writes the calls as the template does


# ---- hypothesis: adversarial strings round trip -----------------------------------------------

HAZARDS = ['"', "\\", ",", "]", "[", "}", "{", ":", "\n", "<|END_ACTION|>", "<|START_ACTION|>", "<|END_TEXT|>",
           '"tool_name": ', "é"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_with(HAZARDS), prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    rendered = [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    wire_text = ToolParserManager.get("cohere-command").render(rendered)
    assert wire_text == COHERE.calls(*rendered)
    text = f"<|START_THINKING|>{reasoning}<|END_THINKING|><|START_TEXT|>{content}<|END_TEXT|>{wire_text}"

    def make():  # no request: any name; R7B with thinking on prefills nothing
        return create_parser(tool_parser="cohere-command", reasoning_parser="cohere-command",
                             prompt="<|CHATBOT_TOKEN|>")

    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    check_round_trip(make, text, want, seed)
