"""The thin late-2026 families (PROTOCOLS.md): ZAYA1, Granite 4.2, Step-5, Ricursive Ripple.

Each is an existing dialect with other tags, layout or reasoning rule; their wires (``ZAYA``,
``STEP5``, ``RIPPLE``; Granite 4.2 is ``qwen3coder`` + ``default``, the ``QWEN3CODER`` wire) run the
contract.  Here: what sets each apart, with hand-written expectations.
"""

from __future__ import annotations

import pytest

from lmparse import ReasoningParserManager, ToolParserManager

from .support.stream import Expected
from .support.wires import RIPPLE, STEP5, TOOLS, ZAYA

REQ = {"tools": TOOLS}
PARIS = '{"city": "Paris", "days": 3}'
XML_BODY = "\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n"
JSON_BODY = '\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'


# ---- zaya -----------------------------------------------------------------------------------

def zaya(body: str) -> str:
    return f"<zyphra_tool_call>{body}</zyphra_tool_call>"


def test_zaya_xml_aliases():
    assert ToolParserManager.get("zaya-xml") is ToolParserManager.get("zaya")


@pytest.mark.parametrize("body", [XML_BODY, JSON_BODY], ids=["xml", "json"])
def test_zaya_reads_xml_and_json_bodies(body):
    ZAYA.check("Checking." + zaya(body), Expected("Checking.", None, [("get_weather", PARIS)]),
               {**REQ, "chat_template_kwargs": {"enable_thinking": False}})


def test_zaya_json_arguments_are_forwarded_verbatim_and_mixed_blocks_keep_indices():
    text = "plan</think>" + zaya('{"name": "f", "arguments": {"x": [1, 2]}}') + zaya(XML_BODY) + " done"
    ZAYA.check(text, Expected(" done", "plan", [("f", '{"x": [1, 2]}'), ("get_weather", PARIS)]), REQ)


def test_zaya_starts_in_reasoning_and_a_wrapper_ends_it():
    ZAYA.check("let me look" + zaya(XML_BODY), Expected(None, "let me look", [("get_weather", PARIS)]), REQ)


def test_zaya_bare_function_still_opens_a_call():
    ZAYA.check("x</think>" + XML_BODY.lstrip("\n"), Expected(None, "x", [("get_weather", PARIS)]), REQ)


def test_zaya_json_object_without_a_name_is_no_call():
    text = "a</think>b" + zaya('{"x": 1}')
    message = ZAYA.parser(REQ).parse_complete(text)
    assert (message.content, message.tool_calls) == ("b", [])


# ---- granite4.2 -----------------------------------------------------------------------------

def test_granite42_is_nemotron3s_dialect_with_think_on_by_default():
    assert ToolParserManager.get("granite4.2") is ToolParserManager.get("qwen3coder")
    assert ReasoningParserManager.get("granite4.2") is ReasoningParserManager.get("default")
    from lmparse import create_parser

    message = create_parser(tool_parser="granite4.2", reasoning_parser="granite4.2", request=REQ).parse_complete(
        "hmm\n</think>\nSure.\n\n<tool_call>" + XML_BODY + "</tool_call>")
    # lmparse keeps text verbatim: vLLM's reasoning parser strips the "\n" after </think>.
    assert (message.reasoning_content, message.content) == ("hmm\n", "\nSure.")
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [("get_weather", PARIS)]


# ---- step5 ----------------------------------------------------------------------------------

def test_step5_keeps_whitespace_only_content_before_a_call():
    call = "<tool_call>" + XML_BODY + "</tool_call>"
    STEP5.check("x</think>\n\n" + call, Expected("\n\n", "x", [("get_weather", PARIS)]), REQ)


def test_step5_keeps_whitespace_between_and_after_calls():
    call = "<tool_call>" + XML_BODY + "</tool_call>"
    STEP5.check("x</think>Ok.\n" + call + "\n" + call + "\n",
                Expected("Ok.\n\n\n", "x", [("get_weather", PARIS), ("get_weather", PARIS)]), REQ)


def test_step5_renders_back_to_back():
    rendered = ToolParserManager.get("step5").render([("f", "{}"), ("g", "{}")])
    assert rendered == "<tool_call>\n<function=f>\n</function>\n</tool_call><tool_call>\n<function=g>\n</function>\n</tool_call>"


# ---- ripple ---------------------------------------------------------------------------------

RIPPLE_CALL = "<tool_call>\n" + JSON_BODY.strip("\n") + "\n</tool_call>"


def test_ripple_is_the_qwen_dialect():
    assert ToolParserManager.get("ripple") is ToolParserManager.get("qwen")


def test_ripple_starts_plain_whatever_the_switch():
    RIPPLE.check("Hello.", Expected("Hello."), {**REQ, "chat_template_kwargs": {"enable_thinking": True}})


def test_ripple_per_turn_think_then_call():
    RIPPLE.check("<think>\nweather?\n</think>\nChecking.\n" + RIPPLE_CALL,
                 Expected("\nChecking.", "\nweather?\n", [("get_weather", PARIS)]), REQ)


def test_ripple_call_inside_reasoning_ends_it():
    RIPPLE.check("<think>need data\n" + RIPPLE_CALL, Expected(None, "need data", [("get_weather", PARIS)]), REQ)
