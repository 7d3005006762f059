"""IQuest: Q1 (``iquest``), Coder V2 (``iquest-coder-v2``) and Coder v1 (``iquest-coder`` = ``qwen3coder``).

The DESIGN §7 case table runs through tests/test_contract.py (``IQUEST`` and
``IQUEST_CODER_V2`` in ALL_WIRES).  Here: bellwether's Q1 rendering, and vLLM's published
``iquest_coder_v2`` and ``iquest_coder`` cases restated by hand (tokenizer and request-shape
cases have no counterpart: lmparse takes tools as a plain JSON list).
"""

from __future__ import annotations

import json

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_parse
from .support.wires import IQUEST, pseudo_tokens

WEATHER = {"type": "function", "function": {"name": "get_current_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "state": {"type": "string"},
                                     "days": {"type": "integer"}}}}}
Q1_WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}}

V2_OPEN, V2_CLOSE = "<iquestcoder_tool_call>", "</iquestcoder_tool_call>"


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, IQUEST.pseudo_token_markers)}


def q1(request=None):
    return create_parser(tool_parser="iquest", reasoning_parser="iquest",
                         request={"tools": [Q1_WEATHER]} if request is None else request)


def v2(tools=(WEATHER,)):
    return lambda: create_parser(tool_parser="iquest-coder-v2", request={"tools": list(tools)} if tools else None)


def v2_call(name: str, *pairs: tuple[str, str]) -> str:
    return V2_OPEN + name + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in pairs) + V2_CLOSE


# ---- IQuest-Q1 ------------------------------------------------------------------------------------


def test_q1_rendering_after_reasoning_opened_by_the_prompt():
    text = ("Paris, then.</think>Let me check.<iquest_tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris"
            "</arg_value><arg_key>unit</arg_key><arg_value>celsius</arg_value></iquest_tool_call>")
    check_parse(q1, text, Expected("Let me check.", "Paris, then.",
                                   [("get_weather", '{"city": "Paris", "unit": "celsius"}')]), chunkings(text))


def test_q1_thinking_off_is_plain_text_and_calls_back_to_back():
    text = ("Hello!<iquest_tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
            "</iquest_tool_call><iquest_tool_call>get_weather</iquest_tool_call>")
    check_parse(lambda: q1({"tools": [Q1_WEATHER], "chat_template_kwargs": {"enable_thinking": False}}), text,
                Expected("Hello!", None, [("get_weather", '{"city": "Paris"}'), ("get_weather", "{}")]),
                chunkings(text))


def test_q1_render_is_the_inline_layout():
    assert ToolParserManager.get("iquest").render([("f", '{"a": "x", "n": 2}'), ("g", "{}")]) == (
        "<iquest_tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value><arg_key>n</arg_key><arg_value>2"
        "</arg_value></iquest_tool_call><iquest_tool_call>g</iquest_tool_call>")


def test_glm_wrapper_is_not_an_iquest_block():
    text = "<tool_call>get_weather</tool_call>"
    check_parse(lambda: q1({"tools": [Q1_WEATHER], "chat_template_kwargs": {"enable_thinking": False}}), text,
                Expected(text, None, []))


# ---- vLLM iquest_coder_v2's published cases, restated ----------------------------------------------


def test_v2_no_call_is_content():
    text = "Just a plain assistant reply with no tool call."
    check_parse(v2(), text, Expected(text, None, []))


def test_v2_typed_arguments_by_schema():
    text = v2_call("get_current_weather", ("city", "Dallas"), ("state", "TX"), ("days", "3"))
    check_parse(v2(), text, Expected(None, None, [("get_current_weather",
                                                   '{"city": "Dallas", "state": "TX", "days": 3}')]), chunkings(text))


def test_v2_string_parameter_is_never_json_decoded():
    check_parse(v2(), v2_call("get_current_weather", ("city", "12345")),
                Expected(None, None, [("get_current_weather", '{"city": "12345"}')]))


def test_v2_call_without_arguments():
    check_parse(v2(), f"{V2_OPEN}get_current_weather{V2_CLOSE}", Expected(None, None, [("get_current_weather", "{}")]))


def test_v2_leading_content_kept_with_its_newline():
    text = "Let me look that up for you.\n" + v2_call("get_current_weather", ("city", "Dallas"))
    check_parse(v2(), text, Expected("Let me look that up for you.\n", None,
                                     [("get_current_weather", '{"city": "Dallas"}')]), chunkings(text))


def test_v2_parallel_calls_keep_dense_indices():
    text = v2_call("get_current_weather", ("city", "Dallas")) + v2_call("get_current_weather", ("city", "Orlando"))
    check_parse(v2(), text, Expected(None, None, [("get_current_weather", '{"city": "Dallas"}'),
                                                  ("get_current_weather", '{"city": "Orlando"}')]), chunkings(text))


def test_v2_newlines_around_the_tags_are_layout():
    text = (f"{V2_OPEN}get_current_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n{V2_CLOSE}")
    check_parse(v2(), text, Expected(None, None, [("get_current_weather", '{"city": "Dallas"}')]), chunkings(text))


def test_v2_value_missing_its_close_tag_ends_at_the_call_close():
    """vLLM drops such a call; lmparse's rule for every XML dialect ends the value at the
    enclosing close tag (docs/architecture.md, robustness rules): a difference by design."""
    text = f"{V2_OPEN}get_current_weather<arg_key>city</arg_key><arg_value>Dallas{V2_CLOSE}"
    check_parse(v2(), text, Expected(None, None, [("get_current_weather", '{"city": "Dallas"}')]))


def test_v2_without_tools_text_passes_through():
    check_parse(v2(tools=()), "Hello world", Expected("Hello world", None, []), {"vllm": ["Hello ", "world"]})


def test_v2_streamed_content_then_call():
    chunks = ["Checking the weather.", V2_OPEN, "get_current_weather", "<arg_key>city</arg_key>",
              "<arg_value>Dallas</arg_value>", V2_CLOSE]
    check_parse(v2(), "".join(chunks), Expected("Checking the weather.", None,
                                                [("get_current_weather", '{"city": "Dallas"}')]), {"vllm": chunks})


def test_v2_open_tag_split_across_chunks_leaks_nothing():
    chunks = [V2_OPEN[:5], V2_OPEN[5:], "get_current_weather",
              "<arg_key>city</arg_key><arg_value>Dallas</arg_value>", V2_CLOSE]
    check_parse(v2(), "".join(chunks), Expected(None, None, [("get_current_weather", '{"city": "Dallas"}')]),
                {"vllm": chunks})


# ---- IQuest-Coder v1: the qwen3coder dialect (vLLM iquest_coder's cases) ------------------------------

QWEN_CALL = ("<tool_call>\n<function=get_current_weather>\n<parameter=city>\n{city}\n</parameter>\n"
             "<parameter=state>\n{state}\n</parameter>\n</function>\n</tool_call>")


def coder(tools):
    return lambda: create_parser(tool_parser="iquest-coder", request={"tools": tools})


def test_coder_v1_is_qwen3coder():
    assert ToolParserManager.get("iquest-coder") is ToolParserManager.get("qwen3coder")


def test_coder_v1_newline_between_parallel_calls_is_never_content():
    first, second = QWEN_CALL.format(city="Dallas", state="TX"), QWEN_CALL.format(city="Orlando", state="FL")
    text = first + "\n" + second
    split = text.index("\n<tool_call>", 1)
    check_parse(coder([WEATHER]), text, Expected(None, None, [
        ("get_current_weather", '{"city": "Dallas", "state": "TX"}'),
        ("get_current_weather", '{"city": "Orlando", "state": "FL"}')]), {"fused": [text[:split], text[split:]]})


def test_coder_v1_every_schema_type_survives():
    tool = {"type": "function", "function": {"name": "do_it", "parameters": {"type": "object", "properties": {
        "text": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
        "flag": {"type": "boolean"}, "tags": {"type": "array"}, "opts": {"type": "object"},
        "numeric_str": {"type": "string"}}}}}
    text = ("<tool_call>\n<function=do_it>\n<parameter=text>\nhello\n</parameter>\n<parameter=count>\n42\n"
            "</parameter>\n<parameter=ratio>\n3.14\n</parameter>\n<parameter=flag>\ntrue\n</parameter>\n"
            '<parameter=tags>\n["a", "b"]\n</parameter>\n<parameter=opts>\n{"k": 1, "nested": [1, 2, 3]}\n'
            "</parameter>\n<parameter=numeric_str>\n007\n</parameter>\n</function>\n</tool_call>")
    _, _, calls = check_parse(coder([tool]), text)
    assert json.loads(calls[0][1]) == {"text": "hello", "count": 42, "ratio": 3.14, "flag": True, "tags": ["a", "b"],
                                       "opts": {"k": 1, "nested": [1, 2, 3]}, "numeric_str": "007"}
