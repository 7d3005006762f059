"""Inkling (TML): the ``inkling`` tool and reasoning parsers.

The DESIGN §7 case table runs through tests/test_contract.py (``INKLING`` in ALL_WIRES, markers as
pseudo-tokens).  Here: the typed blocks as PROTOCOLS.md renders them, the header naming the call,
the argument key aliases, the reply's start from the prompt's tail, and cases written after vLLM's
tests/parser/engine/test_inkling.py (expected values written by hand).  Every case goes through the
shared stream validator.
"""

from __future__ import annotations

from lmparse import create_parser

from .support.stream import Expected, check_parse
from .support.wires import INKLING

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "unit": {"type": "string"}}}}}]
M, END, CALL = "<|message_model|>", "<|end_message|>", "<|content_invoke_tool_json|>"
TEXT, THINK = "<|content_text|>", "<|content_thinking|>"


def check(text: str, expected: Expected, prompt: str | None = None) -> None:
    if prompt is None:
        INKLING.check(text, expected, {"tools": TOOLS})
        return
    check_parse(lambda: create_parser(tool_parser="inkling", reasoning_parser="inkling", request={"tools": TOOLS},
                                      prompt=prompt), text, expected, INKLING.chunkings(text))


def call(name: str, body: str) -> str:
    return f"{M}{name}{CALL}{body}{END}"


def test_the_rendered_example_from_protocols():
    text = (f"{TEXT}Let me check.{END}"
            + call("get_weather", '{"name":"get_weather","args":{"city":"Paris","unit":"celsius"}}')
            + "<|content_model_end_sampling|>")
    check(text, Expected("Let me check.", None, [("get_weather", '{"city":"Paris","unit":"celsius"}')]))


def test_parallel_calls_and_text_after_them():
    text = (f"{TEXT}{END}" + call("get_weather", '{"name":"get_weather","args":{"city":"Paris"}}')
            + call("get_weather", '{"name":"get_weather","args":{"city":"Rome"}}') + f"{M}{TEXT}Done.{END}")
    check(text, Expected("Done.", None, [("get_weather", '{"city":"Paris"}'), ("get_weather", '{"city":"Rome"}')]))


def test_thinking_blocks_are_joined_and_end_at_a_text_block():
    text = f"{THINK}first{END}{M}{THINK} second{END}{M}{TEXT}answer{END}"
    check(text, Expected("answer", "first second", []))


def test_arguments_and_parameters_are_read_as_args():
    for key in ("arguments", "parameters"):
        text = call("get_weather", f'{{"name":"get_weather","{key}":{{"city":"Oslo"}}}}')
        check(text, Expected(None, None, [("get_weather", '{"city":"Oslo"}')]))


def test_the_header_names_the_call():
    check(call("get_weather", '{"args":{"city":"Oslo"},"name":"other"}'),
          Expected(None, None, [("get_weather", '{"city":"Oslo"}')]))


def test_a_reply_that_starts_with_a_call_header():  # the prompt ended with <|message_model|>
    text = 'get_weather' + CALL + '{"name":"get_weather","args":{}}' + END
    check(text, Expected(None, None, [("get_weather", "{}")]), prompt=f"...{M}")


def test_bare_text_after_the_prefilled_opener_is_content():
    check(f"Hello there, friend.{END}", Expected("Hello there, friend.", None, []), prompt=f"...{M}")


def test_a_prefilled_thinking_marker_starts_in_reasoning():
    check(f"deep{END}{M}{TEXT}ok{END}", Expected("ok", "deep", []), prompt=f"...{M}{THINK}")


def test_prose_naming_the_opener_is_text():
    check(f"{TEXT}See the {M} tag.{END}", Expected(f"See the {M} tag.", None, []))


def test_without_tools_call_markup_stays_text():
    text = call("get_weather", '{"name":"get_weather","args":{}}')
    INKLING.check(text, Expected(text, None, []), {})


def test_a_call_cut_off_keeps_what_streamed():
    text = M + 'get_weather' + CALL + '{"name":"get_weather","args":{"city":"Par'
    # Rule 6 (issue 23): what streamed is kept and the end closes it as a JSON object.
    check(text, Expected(None, None, [("get_weather", '{"city":"Par"}')]))


