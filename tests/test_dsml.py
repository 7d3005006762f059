"""DeepSeek-V3.2 / V4 / V4.1 DSML (``deepseek-v32``, ``deepseek-v4``, ``deepseek-v41``) against DESIGN.md §7.

Every case runs whole, one character per chunk, under seeded random chunkings and at
every real token boundary of the V3.2 and V4 tokenizers, through the shared validator.
Wire text is written here from the official templates' layout, independently of render().
"""

from __future__ import annotations

import json
import random
from functools import partial

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, arguments_after, check_chunkings, decoded, random_chunks, result_of
from .support.wires import DSML, DSML_WIRES, V4, V32, V41, DsmlWire, dsml_json, dsml_string, dsml_untyped

WIRES = DSML_WIRES

PROPS = {
    "city": {"type": "string"},
    "days": {"type": "integer"},
    "temp": {"type": "number"},
    "flag": {"type": "boolean"},
    "nothing": {"type": "null"},
    "items": {"type": "array"},
    "opts": {"type": "object"},
    "maybe": {"type": ["integer", "null"]},
    "either": {"anyOf": [{"type": "null"}, {"type": "number"}]},
}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": PROPS}}}
    for n in ("f", "g", "get_weather")
]
REQUEST = {"tools": TOOLS, "chat_template_kwargs": {"thinking": True}}
PLAIN = {"tools": TOOLS, "chat_template_kwargs": {"thinking": False}}


def cases(w: DsmlWire):
    """(id, text, expected, request) for one DSML dialect."""
    s, j, bare = (partial(write, prefix=w.prefix) for write in (dsml_string, dsml_json, dsml_untyped))
    paris = w.call_with("get_weather", s("city", "Paris"), j("days", "3"))
    A = '{"city": "Paris", "days": 3}'
    yield "block_at_reply_start", paris, Expected(None, None, [("get_weather", A)]), PLAIN
    yield (
        "blank_lines_before_block_are_its_layout",  # issue 13 item 5: both templates write them
        "</think>Let me check.\n\n" + paris,
        Expected("Let me check.", None, [("get_weather", A)]),
        REQUEST,
    )
    yield "block_right_after_text", "</think>Checking." + paris, Expected("Checking.", None, [("get_weather", A)]), REQUEST
    yield "no_argument_call", "</think>" + w.call_with("f"), Expected(None, None, [("f", "{}")]), REQUEST
    yield (
        "no_argument_call_other_layout",
        "</think>" + w.invokes(f'<{w.prefix}invoke name="f">\n\n\n</{w.prefix}invoke>\n'),
        Expected(None, None, [("f", "{}")]),
        REQUEST,
    )
    yield (
        "duplicate_parameters_kept_in_order",
        "</think>" + w.call_with("f", j("days", "1"), s("city", "x"), j("days", "2")),
        Expected(None, None, [("f", '{"days": 1, "city": "x", "days": 2}')]),
        REQUEST,
    )
    yield (
        "several_invokes_in_one_block",
        "</think>" + w.invokes(w.invoke("f", s("city", "a")), w.invoke("g"), w.invoke("f", j("days", "2"))),
        Expected(None, None, [("f", '{"city": "a"}'), ("g", "{}"), ("f", '{"days": 2}')]),
        REQUEST,
    )
    yield (
        "two_blocks_blank_line",
        "</think>" + paris + "\n\n" + w.call_with("g"),
        Expected(None, None, [("get_weather", A), ("g", "{}")]),
        REQUEST,
    )
    yield (
        "two_blocks_newline",
        "</think>" + paris + "\n" + w.call_with("g"),
        Expected(None, None, [("get_weather", A), ("g", "{}")]),
        REQUEST,
    )
    yield "text_after_block", "</think>" + paris + "\nDone.", Expected("\nDone.", None, [("get_weather", A)]), REQUEST
    yield "reasoning_after_tool", "a" + paris + "b</think>", Expected(None, "ab", [("get_weather", A)]), REQUEST
    yield (
        "outer_close_tag_inside_string_value_is_data",
        "</think>" + w.call_with("f", s("city", f"a {w.close} b")),
        Expected(None, None, [("f", json.dumps({"city": f"a {w.close} b"}, ensure_ascii=False))]),
        REQUEST,
    )
    tricky = f'{{"k": "{w.close} </{w.prefix}parameter> </{w.prefix}invoke>", "n": [1, {{"x": null}}]}}'
    yield (
        "closing_tags_inside_json_value_are_data",
        "</think>" + w.call_with("f", j("opts", tricky)),
        Expected(None, None, [("f", f'{{"opts": {tricky}}}')]),
        REQUEST,
    )
    raw = 'He said "hi" \\ back\n\ttabs é 😀 <b> 1 < 2'
    yield (
        "string_value_streams_json_escaped",
        "</think>" + w.call_with("f", s("city", raw)),
        Expected(None, None, [("f", json.dumps({"city": raw}, ensure_ascii=False))]),
        REQUEST,
    )
    yield (
        "declared_string_keeps_its_quotes",
        "</think>" + w.call_with("f", s("city", '"Paris"')),
        Expected(None, None, [("f", '{"city": "\\"Paris\\""}')]),
        REQUEST,
    )
    yield (
        "declared_string_beats_the_schema",
        "</think>" + w.call_with("f", s("days", "3")),
        Expected(None, None, [("f", '{"days": "3"}')]),
        REQUEST,
    )
    yield "empty_string_value", "</think>" + w.call_with("f", s("city", "")), Expected(None, None, [("f", '{"city": ""}')]), REQUEST
    typed = [
        ("days", "42", "42"),
        ("temp", "-1.5e3", "-1.5e3"),
        ("flag", "true", "true"),
        ("nothing", "null", "null"),
        ("items", '[1, "two", {"3": [4]}]', '[1, "two", {"3": [4]}]'),
        ("opts", '{"a": {"b": [true, null]}}', '{"a": {"b": [true, null]}}'),
        ("maybe", "null", "null"),
        ("either", "2.5", "2.5"),
        ("unknown_key", "7", "7"),
        ("unknown_key", '"quoted"', '"quoted"'),
    ]
    for key, value, want in typed:
        yield (
            f"json_value_{key}_{want[:6]}",
            "</think>" + w.call_with("f", j(key, value)),
            Expected(None, None, [("f", f'{{"{key}": {want}}}')]),
            REQUEST,
        )
    by_schema = [
        ("days", "42", "42"),
        ("temp", "2.50", "2.50"),
        ("flag", "False", "false"),
        ("nothing", "None", "null"),
        ("items", "[1, 2]", "[1, 2]"),
        ("opts", "{'a': 1}", '{"a": 1}'),
        ("maybe", "7", "7"),
        ("either", "1e2", "1e2"),
        ("city", "42", '"42"'),
        ("unknown_key", "42", '"42"'),
    ]
    for key, value, want in by_schema:
        yield (
            f"no_string_attribute_{key}_by_schema",
            "</think>" + w.call_with("f", bare(key, value)),
            Expected(None, None, [("f", f'{{"{key}": {want}}}')]),
            REQUEST,
        )
    failing = [
        ("python_style_boolean_converted", j("flag", "True"), '{"flag": true}'),
        ("json_value_failing_schema_stays_string", j("days", "soon"), '{"days": "soon"}'),
        ("integer_schema_rejects_a_fraction", bare("days", "1.5"), '{"days": "1.5"}'),
        ("non_json_value_without_schema_is_string", j("unknown_key", "hello there"), '{"unknown_key": "hello there"}'),
        ("bad_scalar_without_schema_is_string", j("unknown_key", "nothing"), '{"unknown_key": "nothing"}'),
    ]
    for case_id, param, want in failing:
        yield case_id, "</think>" + w.call_with("f", param), Expected(None, None, [("f", want)]), REQUEST
    yield (
        "attributes_in_other_order",
        "</think>" + w.invokes(f'<{w.prefix}invoke name="f">\n<{w.prefix}parameter string="false" name="days">5</{w.prefix}parameter>\n</{w.prefix}invoke>\n'),
        Expected(None, None, [("f", '{"days": 5}')]),
        REQUEST,
    )
    # Malformed or cut short.
    yield "truncated_after_name", "</think>" + w.open + f'\n<{w.prefix}invoke name="f">\n', Expected(None, None, [("f", "{}")]), REQUEST
    yield (
        "truncated_in_string_value_closes_arguments",
        "</think>" + w.open + f'\n<{w.prefix}invoke name="f">\n' + s("city", "Paris is lo")[: -len(f"</{w.prefix}parameter>") - 1],
        Expected(None, None, [("f", '{"city": "Paris is lo"}')]),
        REQUEST,
    )
    # Cut off in a JSON parameter value: its ``]`` is owed as well as the object's ``}`` (issue
    # 23 rule 6: arguments are always a JSON object; before it this ended ``[1, 2}``, not JSON).
    yield (
        "truncated_in_json_value_closed_as_json",
        "</think>" + w.open + f'\n<{w.prefix}invoke name="f">\n' + f'<{w.prefix}parameter name="items" string="false">[1, 2',
        Expected(None, None, [("f", '{"items": [1, 2]}')]),
        REQUEST,
    )
    yield (
        "missing_invoke_close_ended_by_block_close",
        "</think>" + w.open + f'\n<{w.prefix}invoke name="f">\n' + j("days", "1") + w.close,
        Expected(None, None, [("f", '{"days": 1}')]),
        REQUEST,
    )
    yield "literal_open_tag_in_prose", "</think>use " + w.open + " tags", Expected("use " + w.open + " tags"), REQUEST
    yield (
        "open_tag_in_prose_then_real_block",
        "</think>see " + w.open + " x " + paris,
        Expected("see " + w.open + " x ", None, [("get_weather", A)]),
        REQUEST,
    )
    yield (
        "prose_inside_invoke_ends_the_block",
        "</think>" + w.open + f'\n<{w.prefix}invoke name="f">\nhello',
        Expected("\nhello", None, [("f", "{}")]),
        REQUEST,
    )
    yield (
        "parameter_without_name_is_malformed",
        "</think>" + w.open + f'\n<{w.prefix}parameter string="true">x</{w.prefix}parameter>',
        Expected(w.open + f'\n<{w.prefix}parameter string="true">x</{w.prefix}parameter>'),
        REQUEST,
    )


ALL = [(w, *c) for w in WIRES for c in cases(w)]


@pytest.mark.parametrize("wire,case_id,text,expected,request_", ALL, ids=[f"{a[0].id}-{a[1]}" for a in ALL])
def test_dsml_dialect(wire, case_id, text, expected, request_):
    wire.check(text, expected, request_)


def test_v32_block_is_text_for_the_v4_parser_but_its_invoke_is_an_orphan():
    """V3.2's block tags are not V4's, but the invoke inside is V4's syntax with no block around
    it: an orphan invoke, a call when the request offers its tool (issue 23 rule 2), else text."""
    block = V32.call_with("f")
    invoke = V32.invoke("f").rstrip("\n")
    V4.check("</think>" + block, Expected(block.replace(invoke, ""), None, [("f", "{}")]), REQUEST)
    only_g = [{"type": "function", "function": {"name": "g", "parameters": {}}}]
    V4.check("</think>" + block, Expected(block), V4.request(tools=only_g))


def test_v4_and_v41_blocks_are_text_for_each_other():
    """The space after the bar is what tells V4.1 from V4: neither parser takes the other's block."""
    V41.check("</think>" + V4.call_with("f"), Expected(V4.call_with("f")), REQUEST)
    V4.check("</think>" + V41.call_with("f"), Expected(V41.call_with("f")), REQUEST)


def test_v41_renders_protocols_layout():
    """PROTOCOLS.md's V4.1 layout (xgrammar's v4_1 structural tag); no V4.1 template is published."""
    calls = [("get_weather", '{"city": "Paris", "days": 3}'), ("f", "{}")]
    assert ToolParserManager.get("deepseek-v41").render(calls) == (
        "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n"
        '<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\n'
        '<｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>\n'
        "</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"f\">\n\n</｜DSML｜ invoke>\n</｜DSML｜ calls>")


def test_v41_string_value_streams_as_it_grows():
    p = create_parser(tool_parser="deepseek-v41", reasoning_parser="deepseek-v41", request=PLAIN)
    head = '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n<｜DSML｜ parameter name="city" string="true">'
    steps = arguments_after(p, [head, "Par", 'is "F', "R</｜DSML｜ ", "parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>"])
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris \\"F', '{"city": "Paris \\"FR']
    assert steps[4] == '{"city": "Paris \\"FR"}'


# ---- render() round trips (hypothesis) --------------------------------------------------

MARKERS = ("<think>", "</think>", DSML)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,10}", fullmatch=True)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(list('<>/"\\\n|')), max_size=30)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(texts, kids, max_size=3), max_leaves=8)
arguments = st.dictionaries(keys, json_values, max_size=4).map(lambda d: json.dumps(d, ensure_ascii=False))


def clean(text: str) -> bool:
    return not any(m in text for m in MARKERS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(WIRES), st.lists(st.tuples(names, arguments), max_size=3), texts, texts, texts, st.integers(0, 1000))
def test_render_round_trip(wire, calls, reasoning, content, tail, seed):
    assume(clean(reasoning) and clean(content) and clean(tail) and all(clean(a) for _, a in calls))
    wire_text = ToolParserManager.get(wire.tool_parser).render(calls) if calls else ""
    tail = tail if calls else ""
    text = f"<think>{reasoning}</think>{content}{wire_text}{tail}"
    expected_calls = [(n, json.loads(a)) for n, a in calls]

    def make():
        return create_parser(tool_parser=wire.tool_parser, reasoning_parser=wire.reasoning_parser)  # no request: any name

    kept = wire.before_block(content) if calls else content  # the template's lead is the block's
    want = (kept + tail or None, reasoning or None, expected_calls)
    assert decoded(result_of(make().parse_complete(text))) == want
    check_chunkings(make, text, want, (list(text), random_chunks(text, random.Random(seed), 9)), decoded)
