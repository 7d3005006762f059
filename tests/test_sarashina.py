"""SoftBank Sarashina (``sarashina``; no reasoning markers).

The DESIGN §7 case table runs through tests/test_contract.py (``SARASHINA`` in ALL_WIRES, the
marker as a pseudo-token).  Here: SMG ``sarashina.rs``'s unit tests restated by hand (SMG
trims the content it returns; lmparse keeps it verbatim, so texts here carry no outer blanks).
"""

from __future__ import annotations

import json

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_parse
from .support.wires import SARASHINA, pseudo_tokens


def parser(tools=None):
    return lambda: create_parser(tool_parser="sarashina", request={"tools": tools} if tools else None)


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, SARASHINA.pseudo_token_markers)}


def calls_of(text: str, extra=None) -> list[tuple[str, object]]:
    _, _, calls = check_parse(parser(), text, None, extra)
    return [(name, json.loads(arguments)) for name, arguments in calls]


def test_with_marker():
    text = "<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]"
    check_parse(parser(), text, Expected(None, None, [("get_weather", '{"city": "Tokyo"}')]), chunkings(text))


def test_bare_leading_list():
    text = "[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]"
    check_parse(parser(), text, Expected(None, None, [("get_weather", '{"city": "Tokyo"}')]))


def test_leading_text_with_marker():
    text = "Let me check.<|tool_calls|>[{'name': 'ping', 'arguments': {}}]"
    check_parse(parser(), text, Expected("Let me check.", None, [("ping", "{}")]), chunkings(text))


def test_two_calls():
    text = "[{'name': 'search', 'arguments': {'q': 'rust'}}, {'name': 'get_weather', 'arguments': {'city': 'Paris'}}]"
    assert calls_of(text) == [("search", {"q": "rust"}), ("get_weather", {"city": "Paris"})]


def test_nested_arguments():
    text = "[{'name': 'process', 'arguments': {'config': {'nested': {'values': [1, 2, 3]}}}}]"
    assert calls_of(text) == [("process", {"config": {"nested": {"values": [1, 2, 3]}}})]


def test_python_constants_become_json():
    text = "[{'name': 'flags', 'arguments': {'a': True, 'b': False, 'c': None}}]"
    check_parse(parser(), text, Expected(None, None, [("flags", '{"a": true, "b": false, "c": null}')]))


def test_escaped_apostrophe_and_brackets_inside_a_string():
    text = "[{'name': 'say', 'arguments': {'text': 'it\\'s [done]'}}]"
    assert calls_of(text) == [("say", {"text": "it's [done]"})]


def test_plain_text_untouched():
    check_parse(parser(), "The weather in Tokyo is sunny.", Expected("The weather in Tokyo is sunny.", None, []))


def test_a_list_of_no_calls_stays_text():
    check_parse(parser(), "[1, 2, 3]", Expected("[1, 2, 3]", None, []))


def test_streamed_bare_list_split_inside_strings():
    chunks = ["[{'name': 'get_", "weather', 'arguments': {'city': 'To", "kyo'}}]"]
    assert calls_of("".join(chunks), {"smg": chunks}) == [("get_weather", {"city": "Tokyo"})]


def test_streamed_marker_split_across_chunks():
    chunks = ["Sure.", "<|tool_ca", "lls|>[{'name': 'ping', 'arg", "uments': {}}]"]
    check_parse(parser(), "".join(chunks), Expected("Sure.", None, [("ping", "{}")]), {"smg": chunks})


def test_streamed_whitespace_between_the_bracket_and_the_first_dict():
    chunks = ["[ ", "  {'name': 'ping', 'arguments': {}}]"]
    check_parse(parser(), "".join(chunks), Expected(None, None, [("ping", "{}")]), {"smg": chunks})


def test_marker_not_leaked_when_the_list_is_cut_off():
    text = "before <|tool_calls|>[{'name': 'x'"
    p = parser()()
    message = p.parse_complete(text)
    assert (message.content, message.tool_calls) == ("before ", [])
    assert [d.text for d in p.dropped] == ["<|tool_calls|>[{'name': 'x'"]


# ---- beyond SMG's cases ----------------------------------------------------------------------------


def test_a_single_dict_after_the_marker():
    text = "<|tool_calls|>{'name': 'ping', 'arguments': {'n': 1}}"
    check_parse(parser(), text, Expected(None, None, [("ping", '{"n": 1}')]), chunkings(text))


def test_a_bracket_in_prose_is_no_call():
    text = "See [{'name': 'x', 'arguments': {}}] in the docs."
    check_parse(parser(), text, Expected(text, None, []))


def test_a_later_element_that_is_no_call_is_dropped():
    text = "[{'name': 'a', 'arguments': {}}, {'oops': 1}, {'name': 'b', 'arguments': {'k': 'v'}}]"
    p = parser()()
    assert [(c.function.name, c.function.arguments) for c in p.parse_complete(text).tool_calls] == [
        ("a", "{}"), ("b", '{"k": "v"}')]
    assert [d.reason for d in p.dropped] == ["not a dict with a string 'name'"]


def test_render_writes_python_literals():
    rendered = ToolParserManager.get("sarashina").render([("f", '{"s": "it\'s", "b": true, "n": null}')])
    assert rendered == "<|tool_calls|>[{'name': 'f', 'arguments': {'s': \"it's\", 'b': True, 'n': None}}]"
