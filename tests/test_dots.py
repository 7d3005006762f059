"""dots / dots3 (``dots``; reasoning ``dots``, the model opens ``<think>``).

The DESIGN §7 case table runs through tests/test_contract.py (``DOTS`` in ALL_WIRES).  Here:
bellwether's dots3 rendering, the value framing, and vLLM ``dots``'s published cases
(tests/tool_parsers/test_dots_tool_parser.py) restated by hand; where lmparse answers
differently by design the case says so.
"""

from __future__ import annotations

import json

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_parse
from .support.wires import DOTS, pseudo_tokens

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}
OPEN_TOOL = {"type": "function", "function": {"name": "open", "parameters": {
    "type": "object", "properties": {"id": {"type": "integer"}}}}}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}}


def parser_for(*tools):
    return lambda: create_parser(tool_parser="dots", reasoning_parser="dots", request={"tools": list(tools)})


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, DOTS.pseudo_token_markers)}


def test_the_dots3_rendering_after_content():
    text = ('Let me check.\n<dots_function_call>\n<invoke name="get_weather">\n<parameter name="city">\nParis\n'
            '</parameter>\n<parameter name="unit">\ncelsius\n</parameter>\n</invoke>\n</dots_function_call>')
    check_parse(parser_for(WEATHER), text,
                Expected("Let me check.", None, [("get_weather", '{"city": "Paris", "unit": "celsius"}')]),
                chunkings(text))


def test_a_reply_with_no_text_starts_with_the_lead_newline():
    text = '\n<dots_function_call>\n<invoke name="f">\n</invoke>\n</dots_function_call>'
    check_parse(parser_for({"type": "function", "function": {"name": "f"}}), text, Expected(None, None, [("f", "{}")]))


def test_a_multi_line_value_keeps_its_inner_newlines_and_quotes():
    text = ('<dots_function_call>\n<invoke name="search">\n<parameter name="query">\n  a "b"\n\\c\n\n'
            '</parameter>\n</invoke>\n</dots_function_call>')
    check_parse(parser_for(SEARCH), text, Expected(None, None, [("search", '{"query": "  a \\"b\\"\\n\\\\c\\n"}')]),
                chunkings(text))


def test_reasoning_opened_by_the_model_then_a_call():
    text = ('<think>\nWhich city?\n</think>\n\nOK.\n<dots_function_call>\n<invoke name="search">\n'
            '<parameter name="query">\nchairs\n</parameter>\n</invoke>\n</dots_function_call>')
    # ``\n\n`` after ``</think>`` is no call's layout: content, verbatim.
    check_parse(parser_for(SEARCH), text,
                Expected("\n\nOK.", "\nWhich city?\n", [("search", '{"query": "chairs"}')]), chunkings(text))


def test_two_blocks_separated_by_the_template_newline():
    text = DOTS.calls(("search", '{"query": "a"}'), ("search", '{"query": "b"}'))
    assert "</dots_function_call>\n<dots_function_call>" in text
    check_parse(parser_for(SEARCH), text,
                Expected(None, None, [("search", '{"query": "a"}'), ("search", '{"query": "b"}')]), chunkings(text))


def test_render_writes_one_invoke_per_block():
    rendered = ToolParserManager.get("dots").render([("f", '{"a": "x", "n": 2}'), ("g", "{}")])
    assert rendered == ('<dots_function_call>\n<invoke name="f">\n<parameter name="a">\nx\n</parameter>\n'
                        '<parameter name="n">\n2\n</parameter>\n</invoke>\n</dots_function_call>\n'
                        '<dots_function_call>\n<invoke name="g">\n</invoke>\n</dots_function_call>')


def test_dots3_is_the_same_parser():
    assert ToolParserManager.get("dots3") is ToolParserManager.get("dots")


# ---- vLLM ``dots``'s published cases, restated -------------------------------------------------------


def test_vllm_schema_types_converted_through_ref():
    """A value typed only through ``$ref`` into ``$defs`` is converted by the type found there,
    as vLLM does."""
    tool = {"type": "function", "function": {"name": "set_location", "parameters": {
        "type": "object",
        "properties": {"location": {"$ref": "#/$defs/Location"}, "days": {"type": "integer"},
                       "include_weather": {"type": "boolean"}},
        "$defs": {"Location": {"type": "object", "properties": {"city": {"type": "string"}}}}}}}
    text = ('ok<dots_function_call><invoke name="set_location"><parameter name="location">{"city": "Shanghai"}'
            '</parameter><parameter name="days">3</parameter><parameter name="include_weather">true</parameter>'
            "</invoke></dots_function_call>")
    content, _, calls = check_parse(parser_for(tool), text)
    assert content == "ok"
    assert [(n, json.loads(a)) for n, a in calls] == [
        ("set_location", {"location": {"city": "Shanghai"}, "days": 3, "include_weather": True})]


def test_vllm_several_invokes_in_one_block():
    text = ('<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter></invoke>'
            '<invoke name="open"><parameter name="id">7</parameter></invoke></dots_function_call>')
    check_parse(parser_for(SEARCH, OPEN_TOOL), text,
                Expected(None, None, [("search", '{"query": "chairs"}'), ("open", '{"id": 7}')]))


def test_vllm_json_body_inside_the_wrapper_is_not_read():
    """vLLM reads ``{"name": .., "arguments": ..}`` in the wrapper; no dots rendering writes it,
    and lmparse keeps the block as text (a difference, by choice)."""
    text = '<dots_function_call>{"name":"search","arguments":{"query":"tables"}}</dots_function_call>'
    check_parse(parser_for(SEARCH), text, Expected(text, None, []))


def test_vllm_unknown_tool_is_dropped_not_content():
    """vLLM turns a call to an undeclared tool back into content; lmparse drops it with a record."""
    text = ('<dots_function_call><invoke name="ghost"><parameter name="query">chairs</parameter></invoke>'
            "</dots_function_call>")
    parser = parser_for(SEARCH)()
    message = parser.parse_complete(text)
    assert (message.content, message.tool_calls) == (None, [])
    assert [d.name for d in parser.dropped] == ["ghost"]


def test_vllm_partial_marker_then_two_blocks():
    text = ('visible<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter></invoke>'
            '</dots_function_call><dots_function_call><invoke name="search"><parameter name="query">tables'
            "</parameter></invoke></dots_function_call>")
    split = text.index("tion_call>")
    got = check_parse(parser_for(SEARCH), text,
                      Expected("visible", None, [("search", '{"query": "chairs"}'), ("search", '{"query": "tables"}')]),
                      {"vllm": [text[:split], text[split:]]})
    assert got[0] == "visible"


def test_vllm_garbage_block_is_text_and_a_later_block_a_call():
    """vLLM strips the wrapper of a malformed block (content ``garbage``); lmparse keeps it verbatim."""
    garbage = "<dots_function_call>garbage</dots_function_call>"
    text = garbage + ('<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter>'
                      "</invoke></dots_function_call>")
    check_parse(parser_for(SEARCH), text, Expected(garbage, None, [("search", '{"query": "chairs"}')]))


def test_vllm_stray_end_marker_stays_text():
    """vLLM removes a stray ``</dots_function_call>``; lmparse keeps all text that is no call."""
    text = "some text </dots_function_call>"
    check_parse(parser_for(SEARCH), text, Expected(text, None, []))


def test_vllm_partial_opening_marker_at_the_end_is_text():
    check_parse(parser_for(SEARCH), "answer <dots_func", Expected("answer <dots_func", None, []))


def test_vllm_tools_given_as_chunks_of_the_block():
    chunks = ["<dots_function_call>", '<invoke name="search"><parameter name="query">table</parameter></invoke>',
              "</dots_function_call>"]
    check_parse(parser_for(SEARCH), "".join(chunks), Expected(None, None, [("search", '{"query": "table"}')]),
                {"vllm": chunks})
