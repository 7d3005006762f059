"""The JSON-envelope tool dialects (qwen, internlm, llama3) against DESIGN.md §7.

Every case runs whole, one character per chunk, under seeded random chunkings and at
every real token boundary of the family's tokenizers, through the shared validator.
"""

from __future__ import annotations

import pytest

from lmparse import create_parser

from .support.stream import Expected, check_parse
from .support.tokenizers import real_token_chunkings
from .support.wires import QWEN, TAGGED
from .support.wires import JsonWire as Wire

REQUEST = QWEN.request()
TOOLS = REQUEST["tools"]


def cases(w: Wire):
    """(id, text, expected, request) for one tagged JSON dialect."""
    A = '{"city": "Paris", "days": 3}'
    yield "reasoning_then_content", "<think>plan</think>\n\nAnswer.", Expected("\n\nAnswer.", "plan"), REQUEST
    yield (
        "content_then_call",
        "</think>Let me check.\n" + w.call("get_weather", A),
        Expected(w.before_block("Let me check.\n"), None, [("get_weather", A)]),  # the template's lead is syntax
        REQUEST,
    )
    yield "name_after_arguments", "</think>" + w.call("f", A, args_first=True), Expected(None, None, [("f", A)]), REQUEST
    yield "no_argument_field", "</think>" + w.call("f"), Expected(None, None, [("f", "{}")]), REQUEST
    yield "empty_arguments", "</think>" + w.call("f", "{}"), Expected(None, None, [("f", "{}")]), REQUEST
    dup = '{"a": 1, "a": 2}'
    yield "duplicate_keys_kept", "</think>" + w.call("f", dup), Expected(None, None, [("f", dup)]), REQUEST
    yield (
        "two_calls_newline",
        "</think>" + w.call("f", A) + "\n" + w.call("g", "{}"),
        Expected(w.between_blocks("\n"), None, [("f", A), ("g", "{}")]),
        REQUEST,
    )
    yield (
        "two_calls_blank_line",
        "</think>" + w.call("f", A) + "\n\n" + w.call("g", "{}"),
        Expected(w.between_blocks("\n\n"), None, [("f", A), ("g", "{}")]),  # beyond the template's: text
        REQUEST,
    )
    yield (
        "text_after_block",
        "</think>" + w.call("f", A) + "\nDone.",
        Expected("\nDone.", None, [("f", A)]),
        REQUEST,
    )
    yield (
        "trailing_newline_is_content",
        "</think>" + w.call("f", A) + "\n",
        Expected("\n", None, [("f", A)]),
        REQUEST,
    )
    tricky = '{"s": "é \\" \\\\ } ] ' + w.close.strip() + ' 😀", "n": [1, {"k": null}], "t": true}'
    yield "close_tag_inside_string_is_data", "</think>" + w.call("f", tricky), Expected(None, None, [("f", tricky)]), REQUEST
    yield (
        "double_encoded_arguments_unwrapped",
        "</think>" + w.call("f", '"{\\"q\\": 1}"'),
        Expected(None, None, [("f", '{"q": 1}')]),
        REQUEST,
    )
    # Cut off inside the arguments: what streamed, closed as a JSON object by its owed closers
    # alone (issue 23 rule 6: a malformed call never yields arguments that are not JSON; the
    # end completes the scalar ``2``, invents no value). It was kept unclosed before rule 6.
    yield (
        "truncated_arguments_closed_as_json",
        "</think>ok" + w.call("f", '{"a": [1, 2')[: -len(w.close) - 1],
        Expected("ok", None, [("f", '{"a": [1, 2]}')]),
        REQUEST,
    )
    yield "literal_tag_in_prose", "</think>use " + w.open + " tags", Expected("use " + w.open + " tags"), REQUEST
    yield (
        "tag_in_prose_then_real_call",
        "</think>see " + w.open.strip() + " x " + w.call("f", A),
        Expected("see " + w.open.strip() + " x ", None, [("f", A)]),
        REQUEST,
    )
    yield (
        "envelope_without_name_dropped",
        "</think>" + w.call("f", A).replace('"name"', '"nom"') + "\n" + w.call("g", "{}"),
        Expected(None, None, [("g", "{}")]),
        REQUEST,
    )
    extra_brace = w.call("f", A).replace(w.close, "}" + w.close)
    yield (
        "stray_brace_before_close_tag_dropped",
        "</think>" + extra_brace + "\nDone.",
        Expected("\nDone.", None, [("f", A)]),
        REQUEST,
    )
    prose = " Here is a much longer explanation of what I did."
    yield (
        "long_text_before_close_tag_stays_content",
        "</think>" + w.call("f", A).replace(w.close, prose + w.close),
        Expected(prose.lstrip() + w.close, None, [("f", A)]),  # whitespace after the envelope is syntax
        REQUEST,
    )


ALL = [(w, *c) for w in TAGGED for c in cases(w)]


@pytest.mark.parametrize("wire,case_id,text,expected,request_", ALL, ids=[f"{a[0].id}-{a[1]}" for a in ALL])
def test_tagged_json_dialect(wire, case_id, text, expected, request_):
    wire.check(text, expected, request_)


def test_acceptance_example():
    p = create_parser(
        tool_parser="qwen",
        reasoning_parser="default",
        request={"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    )
    m = p.parse_complete('<think>a</think>b<tool_call>{"name":"f","arguments":{"x":1}}</tool_call>')
    assert (m.reasoning_content, m.content, m.tool_calls[0].function.arguments) == ("a", "b", '{"x":1}')


# ---- llama3: bare JSON at the start of the reply, <|python_tag|>, ';'-separated calls ----------

LLAMA_TOKENIZERS = ("llama-3.2",)


def llama(text, expected, request=REQUEST):
    def make():
        return create_parser(tool_parser="llama3", request=request)

    return check_parse(make, text, expected, real_token_chunkings(text, LLAMA_TOKENIZERS))


A = '{"city": "Paris"}'

LLAMA_CASES = [
    ("bare_call", '{"name": "f", "parameters": ' + A + "}", Expected(None, None, [("f", A)])),
    ("bare_call_leading_whitespace", '\n {"name": "f", "parameters": ' + A + "}", Expected(None, None, [("f", A)])),
    ("python_tag_call", '<|python_tag|>{"name": "f", "parameters": ' + A + "}", Expected(None, None, [("f", A)])),
    (
        "semicolon_separated_calls",
        '{"name": "f", "parameters": ' + A + '}; {"name": "g", "parameters": {}}',
        Expected(None, None, [("f", A), ("g", "{}")]),
    ),
    ("arguments_field_is_not_parameters", '{"name": "f", "arguments": ' + A + "}", Expected(None, None, [("f", "{}")])),
    ("json_content_is_not_a_call", '{"answer": 42}', Expected('{"answer": 42}')),
    ("json_without_name_is_content", '{"parameters": {}} ok', Expected('{"parameters": {}} ok')),
    ("json_later_in_reply_is_content", 'Sure: {"name": "f", "parameters": {}}', Expected('Sure: {"name": "f", "parameters": {}}')),
    ("unknown_name_dropped", '{"name": "zzz", "parameters": {}}; {"name": "f", "parameters": {}}', Expected(None, None, [("f", "{}")])),
    # Whitespace after the last call is text: no Llama 3 template writes anything after a call.
    ("text_after_call", '<|python_tag|>{"name": "f", "parameters": {}}\nThanks', Expected("\nThanks", None, [("f", "{}")])),
    # Cut off in a string value: closed as JSON by ``"}`` (issue 23 rule 6; was kept unclosed).
    ("truncated_call", '{"name": "f", "parameters": {"a": "b', Expected(None, None, [("f", '{"a": "b"}')])),
    ("plain_text", "The weather is fine.", Expected("The weather is fine.")),
]


@pytest.mark.parametrize("case_id,text,expected", LLAMA_CASES, ids=[c[0] for c in LLAMA_CASES])
def test_llama3(case_id, text, expected):
    llama(text, expected)


def test_llama3_tool_choice_none_keeps_json_as_content():
    text = '{"name": "f", "parameters": {}}'
    llama(text, Expected(text), request={"tools": TOOLS, "tool_choice": "none"})
