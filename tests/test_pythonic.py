r"""The pythonic tool dialect (``[f(a=1, b="x"), g()]``, Llama 4's ``<|python_start|>`` wrapper)
against DESIGN.md §7.

Every case runs whole, one character per chunk, under seeded random chunkings and at every
real token boundary of the Llama 3.2 tokenizer, through the shared validator.  No official
template in the test data renders pythonic calls (Llama 3.2's renders JSON), so the render
round trip is the hypothesis test at the end.
"""

from __future__ import annotations

import ast
import json
import keyword
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_chunkings, check_invariants, check_parse, decoded, folded, random_chunks
from .support.wires import PYTHONIC

TOKENIZERS = ("llama-3.2",)
PYTHONIC_BARE = replace(PYTHONIC, id="pythonic-bare", reasoning_parser=None)  # a list at the reply's start
REQUEST = PYTHONIC.request()
TOOLS = REQUEST["tools"]
START, END = PYTHONIC.open, PYTHONIC.close
block = PYTHONIC.wrap


def calls(*pairs: tuple[str, str]) -> Expected:
    return Expected(None, None, list(pairs))


STRINGS = (  # each piece one string argument: quotes, triple quotes, escapes, raw and prefixed
    r'[f(s="a)b]c, d=\"e\"", ' + r"t='it\'s (x', " + r'u="""tri"ple""quote""", ' + r"v='''''', "
    + r"w='a\\', " + r'x="\"", y=r"\d", ' + r"z=u'é😀')]"
)
STRINGS_JSON = json.dumps(
    {"s": 'a)b]c, d="e"', "t": "it's (x", "u": 'tri"ple""quote', "v": "", "w": "a\\", "x": '"', "y": "\\d", "z": "é😀"},
    ensure_ascii=False,
)

CASES = [
    ("bare_call", '[get_weather(city="Paris", days=3)]', calls(("get_weather", '{"city": "Paris", "days": 3}'))),
    ("bare_call_leading_whitespace", '\n [f(a=1)]', calls(("f", '{"a": 1}'))),
    ("two_calls", "[f(a=1), g()]", calls(("f", '{"a": 1}'), ("g", "{}"))),
    ("no_argument_call", "[g()]", calls(("g", "{}"))),
    ("duplicate_keywords_kept_in_order", "[f(b=1, a=2, b=3)]", calls(("f", '{"b": 1, "a": 2, "b": 3}'))),
    # A parameter named by a Python keyword, as a template writes it: ``from=`` is not Python, still a call.
    ("keyword_named_arguments", "[f(from='a', to='b', in=\n  1, s='in=2')]",
     calls(("f", '{"from": "a", "to": "b", "in": 1, "s": "in=2"}'))),
    (
        "literal_types_become_json",
        "[f(i=-3, x=1.5e3, t=True, n=None, l=[1, 'two', (3, 4)], d={'k': [False], 1: {}}, e=-0.5)]",
        calls(("f", '{"i": -3, "x": 1500.0, "t": true, "n": null, "l": [1, "two", [3, 4]], "d": {"k": [false], "1": {}}, "e": -0.5}')),
    ),
    ("string_literals_with_syntax_inside", STRINGS, calls(("f", STRINGS_JSON))),
    ("python_end_inside_string_is_data", START + '[f(s="<|python_end|>])")]' + END, calls(("f", '{"s": "<|python_end|>])"}'))),
    ("space_before_parenthesis", "[f (a=1)]", calls(("f", '{"a": 1}'))),
    ("pretty_printed_list", "[\n  f(\n    a=1,\n  ),\n  g()\n]", calls(("f", '{"a": 1}'), ("g", "{}"))),
    ("trailing_comma_in_list", "[f(a=1),]", calls(("f", '{"a": 1}'))),
    ("positional_argument_dropped", "[f(1), g()]", calls(("g", "{}"))),
    ("non_literal_value_dropped", "[f(a=x + 1), g()]", calls(("g", "{}"))),
    ("value_without_json_form_dropped", "[f(a={1, 2}), g(b=b'x'), f(c=1e999), g()]", calls(("g", "{}"))),
    ("invalid_call_alone_is_text", "[print(x)]", Expected("[print(x)]")),
    ("list_of_numbers_is_text", "[1, 2]", Expected("[1, 2]")),
    ("prose_in_brackets_is_text", "[Note: see below] ok", Expected("[Note: see below] ok")),
    ("markdown_link_is_text", "[docs](https://x.y/z) say so", Expected("[docs](https://x.y/z) say so")),
    ("call_shaped_prose_is_text", "[see (this) page]", Expected("[see (this) page]")),
    ("empty_list_is_text", "[]", Expected("[]")),
    ("list_later_in_reply_is_content", "Sure: [f(a=1)]", Expected("Sure: [f(a=1)]")),
    ("text_after_list", "[f(a=1)] Done.", Expected(" Done.", None, [("f", '{"a": 1}')])),
    # (issue 23 rule 2) after a call, an element that is no call is skipped to its separator and dropped
    ("non_call_element_is_dropped_and_the_next_call_parses", "[f(a=1), 2, g()]", calls(("f", '{"a": 1}'), ("g", "{}"))),
    ("non_call_first_element_keeps_a_bare_list_text", "[2, g()]", Expected("[2, g()]")),
    ("truncated_second_call_dropped", '[f(a=1), g(b="x', calls(("f", '{"a": 1}'))),
    ("truncated_first_call_is_text", '[f(a="x', Expected('[f(a="x')),
    ("truncated_list_keeps_its_calls", "[f(a=1)", calls(("f", '{"a": 1}'))),
    ("plain_text", "The weather is fine.", Expected("The weather is fine.")),
    ("python_start_wrapped", START + "[f(a=1)]" + END, calls(("f", '{"a": 1}'))),
    ("python_start_then_text", START + "[f(a=1)]" + END + "Done.", Expected("Done.", None, [("f", '{"a": 1}')])),
    ("python_start_without_end", START + "[f(a=1)]", calls(("f", '{"a": 1}'))),
    ("python_start_code_is_text", START + "print(1)" + END, Expected(START + "print(1)" + END)),
    ("content_then_python_start", "Let me check. " + START + "[f(a=1)]" + END, Expected("Let me check. ", None, [("f", '{"a": 1}')])),
    (
        "two_python_blocks_newline",
        START + "[f()]" + END + "\n" + START + "[g()]" + END,
        calls(("f", "{}"), ("g", "{}")),
    ),
]


@pytest.mark.parametrize("case_id,text,expected", CASES, ids=[c[0] for c in CASES])
def test_pythonic(case_id, text, expected):
    PYTHONIC_BARE.check(text, expected)


REASONING_CASES = [
    ("reasoning_after_tool", "r</think>" + block("[f()]") + "<think>again</think>ok", Expected("ok", "ragain", [("f", "{}")])),
    ("bare_list_after_reasoning_is_content", "a</think>[f(a=1)]", Expected("[f(a=1)]", "a")),
]


@pytest.mark.parametrize("case_id,text,expected", REASONING_CASES, ids=[c[0] for c in REASONING_CASES])
def test_pythonic_with_reasoning(case_id, text, expected):
    PYTHONIC.check(text, expected)


REQUEST_CASES = [
    ("dotted_name_without_request", "[functions.lookup(q='x')]", calls(("functions.lookup", '{"q": "x"}')), None),
]


@pytest.mark.parametrize("case_id,text,expected,request_", REQUEST_CASES, ids=[c[0] for c in REQUEST_CASES])
def test_pythonic_request_switches(case_id, text, expected, request_):
    PYTHONIC_BARE.check(text, expected, request_)


def test_alias_llama4_pythonic():
    assert ToolParserManager.get("llama4-pythonic") is ToolParserManager.get("pythonic")


def test_dropped_calls_are_recorded_once_the_block_holds_a_call():
    p = create_parser(tool_parser="pythonic", request=REQUEST)
    p.parse_complete("[f(1), zzz(a=1), g(a=x), f(**k), f(a=1), g(b=")
    assert [(d.name, d.reason) for d in p.dropped] == [
        ("f", "positional argument"),
        ("zzz", "not among the request's tools"),
        ("g", "argument 'a' is not a literal with a JSON form"),
        ("f", "** argument"),
        ("g", "cut off by the end of input"),
    ]


def test_a_block_without_a_call_records_nothing():
    p = create_parser(tool_parser="pythonic", request=REQUEST)
    assert p.parse_complete("[print(x), 2]").content == "[print(x), 2]"
    assert p.dropped == []


def test_each_call_is_emitted_when_its_parenthesis_closes():
    p = create_parser(tool_parser="pythonic", request=REQUEST)
    seen = []
    for chunk in ['[f(a="x")', ", g(", "b=2", ")", "]"]:
        seen.append([(tc.index, tc.function.name, tc.function.arguments) for d, _ in p.stream_chunk(chunk) for tc in d.tool_calls or ()])
    assert seen == [[(0, "f", '{"a": "x"}')], [], [], [(1, "g", '{"b": 2}')], []]


# ---- a long string argument: bounded router buffer, each call out at its ")" -----------------

def test_long_string_argument_keeps_the_router_buffer_small():
    r"""A call is emitted whole at its ")" (it is valid only then), so a 1 MiB value cannot
    stream early; what matters is that the scanner owns the call's text (the router's
    buffer stays small) and that the first call is out before the second has arrived."""
    line = r'The quick brown fox (jumps) [over] {3} < 4 lazy dogs; é 😀 \\ \" it\'s\n'
    value = (line * ((1 << 20) // len(line) + 1))[: 1 << 20]
    value = value[: len(value) - 1] if value.endswith("\\") else value
    text = f'[f(s="{value}"), g(s="{value}")]'
    first_end = text.index("), g(") + 1
    parser = create_parser(tool_parser="pythonic", request=REQUEST)
    deltas, first_at, max_pending = [], None, 0
    step = 1024
    for i in range(0, len(text), step):
        out = parser.stream_chunk(text[i : i + step], final=i + step >= len(text))
        deltas.extend(out)
        max_pending = max(max_pending, parser.held_chars)
        if first_at is None and out:
            first_at = i + step
    check_invariants(deltas)
    decoded = ast.literal_eval(f'"{value}"')
    content, reasoning, got = folded(deltas)
    assert content is None and [(n, json.loads(a)) for n, a in got] == [("f", {"s": decoded}), ("g", {"s": decoded})]
    assert first_end <= first_at < first_end + step
    assert max_pending < 256


# ---- hypothesis: render() round trips ----------------------------------------------------------

def identifier(pattern: str):
    return st.from_regex(pattern, fullmatch=True).filter(lambda s: not any(keyword.iskeyword(p) for p in s.split(".")))


names = identifier(r"[A-Za-z_][A-Za-z0-9_]{0,10}(\.[A-Za-z_][A-Za-z0-9_]{0,5})?")
keys = identifier(r"[A-Za-z_][A-Za-z0-9_]{0,8}")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=10,
)
call_lists = st.lists(st.tuples(names, st.dictionaries(keys, json_values, max_size=4)), min_size=1, max_size=3)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"), max_size=30)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def round_trip(text: str, reasoning_parser, expected_text: tuple, expected_calls: list, seed: int) -> None:
    def make():
        return create_parser(tool_parser="pythonic", reasoning_parser=reasoning_parser)

    runs = ([text], list(text), random_chunks(text, random.Random(seed), 9))
    check_chunkings(make, text, (*expected_text, expected_calls), runs, decoded)


@SETTINGS
@given(call_lists, prose, st.integers(0, 1000))
def test_bare_render_round_trip(call_list, tail, seed):
    # A tail that is only blanks may count as the block's own at the end of input.
    assume(not tail[:1].isspace() and not tail.lstrip().startswith("<"))
    wire = ToolParserManager.get("pythonic").render([(n, json.dumps(a)) for n, a in call_list])
    round_trip(wire + tail, None, (tail or None, None), call_list, seed)


@SETTINGS
@given(call_lists, prose, prose, st.integers(0, 1000))
def test_wrapped_render_round_trip(call_list, reasoning, content, seed):
    assume("</think>" not in reasoning and "<think>" not in content)
    wire = ToolParserManager.get("pythonic").render([(n, json.dumps(a)) for n, a in call_list])
    text = f"{reasoning}</think>{content}{START}{wire}{END}"
    round_trip(text, "default", (content or None, reasoning or None), call_list, seed)


def literal_forms(value: str) -> list[str]:
    """Ways Python writes ``value``: repr (single quotes, escapes), JSON-style, triple-quoted, raw."""
    forms = [repr(value), json.dumps(value, ensure_ascii=False)]
    plain = all(c == "\n" or c.isprintable() for c in value)
    for q in ("'''", '"""'):
        if plain and q[0] not in value and "\\" not in value:
            forms.append(q + value + q)
    if value.isprintable() and "\\" in value and "'" not in value and not value.endswith("\\"):
        forms.append("r'" + value + "'")
    return forms


string_values = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(list("'\"\\()[]{},\n")), max_size=12
)


@SETTINGS
@given(st.dictionaries(keys, string_values, max_size=4), st.data())
def test_string_literal_forms_round_trip(values, data):
    args = ", ".join(f"{k}={data.draw(st.sampled_from(literal_forms(v)))}" for k, v in values.items())
    text = f"[f({args}), g()]"
    expected = json.dumps(values, ensure_ascii=False)
    check_parse(lambda: create_parser(tool_parser="pythonic"), text, Expected(None, None, [("f", expected), ("g", "{}")]))
