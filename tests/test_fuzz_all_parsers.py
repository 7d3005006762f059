"""Every registered parser, fed text built from every dialect's marker fragments: nothing
raises, the stream invariants hold, and any chunking folds to the complete parse."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ReasoningParserManager, ToolParserManager, create_parser

from .support.stream import check_chunkings, random_chunks, result_of

# Syntax pieces of every family (whole markers and the ways they split), plus JSON and
# XML punctuation, so random text keeps wandering into and out of real blocks.
PIECES = [
    "<think>", "</think>", "<th", "</", "<tool_call>", "</tool_call>", "<tool_call>\n", "\n</tool_call>",
    '{"name": "f", "arguments": ', '{"name": "g", "parameters": ', '{"arguments": {}, "name": "f"}', "}", "{", "[",
    "]", '"', "\\", ",", ":", " ", "\n", "\n\n", "x", "é", "😀", "1", "null", "true",
    "<function=f>", "<parameter=a>", "</parameter>", "</function>", "<arg_key>", "</arg_key>", "<arg_value>",
    "</arg_value>", "f\n", '<invoke name="f">', '<parameter name="a">', "</invoke>", "<minimax:tool_call>",
    "</minimax:tool_call>", "<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>",
    "<｜DSML｜function_calls>", "</｜DSML｜function_calls>", "<｜DSML｜invoke name=\"f\">", "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="a" string="true">', '<｜DSML｜parameter name="b" string="false">',
    "</｜DSML｜parameter>", "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>",
    "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.f:0", "<|tool_call_argument_begin|>",
    "<|tool_call_end|>", "<|tool_calls_section_end|>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>",
    "function<｜tool▁sep｜>f\n```json\n", "f<｜tool▁sep｜>", "\n```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>",
    "[TOOL_CALLS]", "f[ARGS]", "[CALL_ID]abc", "[THINK]", "[/THINK]", "[f(a=1)", "g()", ")", "(", "'",
    "<|python_tag|>", "<|action_start|><|plugin|>\n", "<|action_end|>", "<|python_start|>", "<|python_end|>",
    "<function=f>\n<parameter=a>\nv\n</parameter>\n</function>",
    "<|tool_call>", "<tool_call|>", "call:f{", ":g{", '<|"|>', "a:", "b:1", "<|tool_response>", "<turn|>",
    "<|channel>thought\n", "<|channel>", "<channel|>", '<|tool_call>call:f{a:<|"|>x, y}<|"|>,b:[2,{c:true}]}<tool_call|>',
    # Kimi-K3 XTML
    "<|open|>tools<|sep|>", "<|close|>tools<|sep|>", '<|open|>call tool="f" index="1"<|sep|>', "<|close|>call<|sep|>",
    '<|open|>argument key="a" type="string"<|sep|>', '<|open|>argument key="b" type="number"<|sep|>',
    "<|close|>argument<|sep|>", '<|open|>json type="object"<|sep|>', "<|close|>json<|sep|>", "<|open|>",
    "<|close|>", "<|sep|>", "&quot;", "&amp;", "<|open|>think<|sep|>", "<|close|>think<|sep|>",
    "<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>", "<|end_of_msg|>",
    # MiniCPM5
    '<function name="f">', "<function name='g'>", '<param name="a">', '<param name="b">', "</param>",
    "<![CDATA[", "]]>", "]]", "True", "None", "{'a': 1}",
    "]<]minimax[>[", "]<]minimax[>[<tool_call>\n", "]<]minimax[>[</tool_call>", ']<]minimax[>[<invoke name="f">',
    "]<]minimax[>[</invoke>\n", "]<]minimax[>[<a>", "]<]minimax[>[</a>", "]<]minimax[>[<item>", "]<]minimax[>[</item>",
    "]<]min", "<mm:think>", "</mm:think>",
    "<tool_calls:opensource>\n", "</tool_calls:opensource>", "<tool_call:opensource>f<tool_sep:opensource>\n",
    "</tool_call:opensource>\n", "<arg_key:opensource>a</arg_key:opensource>", "<arg_value:opensource>",
    "</arg_value:opensource>", "<think:opensource>", "</think:opensource>", ":opensource>",
    "<｜DSML｜ calls>", "</｜DSML｜ calls>", '<｜DSML｜ invoke name="f">', "</｜DSML｜ invoke>", "</｜DSML｜ parameter>",
    '<｜DSML｜ parameter name="a" string="true">', '<｜DSML｜ parameter name="b" string="false">',
    "<|START_ACTION|>", "<|END_ACTION|>", '[{"tool_call_id": "0", "tool_name": "f", "parameters": ', '"tool_name": "g"',
    "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>",
    "<|tools_prefix|>", "<|tools_suffix|>", '[{"f": ', '{"g": {}}', "<|inner_prefix|>", "<|inner_suffix|>",
    "<|tool_call_start|>", "<|tool_call_end|>", "[f(a='x', c=null)", "b=true)", "g(o={\"k\": [1]})]",
    "<|message_sep|>", "\n\nfunction call<|role_sep|>\n", "<|function_call|>", "<|role_sep|>",
]
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": ["number", "null"]}}}}}
    for n in ("f", "g")
]

DIALECTS = sorted({ToolParserManager.get(n).__name__: n for n in ToolParserManager.names()}.values())
REASONERS = sorted({ReasoningParserManager.get(n).__name__: n for n in ReasoningParserManager.names()}.values())

texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40).map("".join)


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, seed=st.integers(0, 10**6), with_tools=st.booleans())
def test_any_text_through_any_dialect(dialect, text, seed, with_tools):
    rng = random.Random(seed)
    reasoning = rng.choice(REASONERS + [None])
    request = {"tools": TOOLS} if with_tools else None

    def make():
        return create_parser(tool_parser=dialect, reasoning_parser=reasoning, request=request)

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, (list(text), random_chunks(text, rng, 7)))
    # Nothing invented: check_chunkings checks conservation, which implies each text channel
    # holds only characters of the input, in order.


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randint(0, 12))
        kind = rng.randrange(4)
        if kind == 0:
            text = text[:i] + text[j:]  # delete a span
        elif kind == 1:
            text = text[:j] + text[i:j] + text[j:]  # repeat a span
        elif kind == 2:
            text = text[:i] + rng.choice(PIECES) + text[i:]  # insert syntax
        else:
            text = text[:i]  # cut off
    return text


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_mutated_valid_replies(dialect, seed):
    """Near-valid replies (a rendered reply with spans deleted, repeated, cut or spliced)."""
    rng = random.Random(seed)
    calls = [
        (rng.choice(["f", "g", "h"]), rng.choice(['{"a": "x y", "b": 2}', "{}", '{"c": null, "a": "<\\"q\\">"}']))
        for _ in range(rng.randint(1, 3))
    ]
    text = "<think>plan</think>Sure.\n" + ToolParserManager.get(dialect).render(calls) + "\nDone."
    text = _mutate(text, rng)

    def make():
        return create_parser(tool_parser=dialect, reasoning_parser="default", request={"tools": TOOLS})

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, (list(text), random_chunks(text, rng, 5)))


# Inputs the two tests above once failed on, kept as plain examples: (dialect, reasoning
# parser, tools offered, text).
FOUND = [
    # A close tag cut short after a call (``</｜DSMLSML``) is content; the checker spelled it
    # sooner as the ``</｜DSML`` of ``</｜DSML｜invoke>`` plus ``SML``, split inside that marker
    # (seed 11): a sooner spelling now splits only before a block's opening character.
    ("deepseek-v4", "default", True,
     '<think>plan</think>Sure.\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="g">\n\n</｜DSML｜invoke>\n</｜DSMLSML'),
    # A framing marker spliced into a call's close: a content piece split around the dropped
    # marker whose spelling search ran out of budget (the checker now remembers dead ends).
    ("kimi-k3", "default", True,
     '<think>plan</think>Sure.\n<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument key="a" '
     'type="string"<|sep|>x y<|close{"name": "f", "arguments": |>argument<|sep|><|open|>argument key="b" '
     'type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|s<|close|>message<|sep|>ep|><|open|>call tool="h" '
     'index="2"<|sep|><|open|>argument key="a" type="string"<|sep|>x y<|close|>argument<|sep|><|open|>argument '
     'key="b" type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool="g" index="3"<|sep|>'
     '<|open|>argument key="a" type="string"<|sep|>x y<|close|>argument<|sep|><|open|>argument key="b" '
     'type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>\nDone.'),
    # A dropped call (tool h is not offered) whose close is split by a framing marker: the
    # content after it has a spelling (runs around the dropped call and the marker) that the
    # search found only past its budget of 4000 finds.
    ("kimi-k3", "default", True,
     '<think>plan</think>Sure.\n<|open|>tools<|sep|><|open|>call tool="h" index="1"<|sep|><|open|>argument key="a"'
     ' type="string"<|sep|>x y<|close|>argument<|sep|><|open|>argument key="b" type="number"<|sep|>2<|close|>argum'
     'ent<|sep|><|clo<|open|>response<|sep|>se|>call<|sep|><|open|>call tool="f" index="2"<|sep|><|open|>argument '
     'key="c" type="null"<|sep|>null<|close|>argument<|sep|><|open|>argument key="a" type="string"<|sep|><"q"><|cl'
     'ose|>argument<|sep|><|close|>call<|sep|><|open|>call tool="g" index="3"<|sep|><|open|>argument key="a" type='
     '"string"<|sep|>x y<|close|>argument<|sep|><|open|>argument key="b" type="number"<|sep|>2<|close|>argument<|s'
     'ep|><|close|>call<|sep|><|close|>tools<|sep|>\nDone.'),
    # Content after a converted call (gemma4): a spelling scattered over the call's syntax
    # (``<|`` of ``<|"|>``, ``tool_call`` of ``<tool_call|>``) ended sooner than the content's
    # own text and was taken (the checker now takes a sooner spelling of at most two runs).
    ("gemma4", "default", True,
     '<think>plan</think>Sure.\n<|tool_call>call:f{}<tool_call|><|tool_call>call:g{a:<|"|>x y<|"|>,b:2}<tool_call|>'
     '<|tool_callol_call'),
    # Content after a converted call (minicpm5) was spelled as two runs around a separator
    # inside the call's syntax (``<param`` + ``ame="`` of ``<param name="a">``): a sooner
    # spelling is now taken only around a dropped block.
    ("minicpm5", "default", True,
     '<think>plan</think>Sure.\n<function name="f"><param name="a">x y</param><paramame="'),
    # A literal call broken right after its opener (seed 72158): its arguments were ``{`` (not
    # JSON) and the ``{`` of the input came out in the content too.  The call's arguments are
    # now closed as JSON and the rest of its block is a ``dropped`` record.
    ("gemma4", "default", True,
     '<think>plan</think>Sure.\n<|tool_call>call:f({c:null,a:<|"|></think><"q"><|"|>}<tool_call|><|tool_call>call:g{}'
     '<tool_call|>\nDone.'),
]


@pytest.mark.parametrize("dialect,reasoning,with_tools,text", FOUND, ids=[f"{d}-{i}" for i, (d, *_) in enumerate(FOUND)])
def test_found_inputs(dialect, reasoning, with_tools, text):
    def make():
        return create_parser(tool_parser=dialect, reasoning_parser=reasoning, request={"tools": TOOLS} if with_tools else None)

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, ([text], list(text), random_chunks(text, random.Random(0), 7)))
    for _name, arguments in expected[2]:
        assert isinstance(json.loads(arguments), dict), arguments  # a malformed call never yields non-JSON


HARMONY_PIECES = ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>",
                  "assistant", "analysis", "final", "commentary", " to=functions.f", "json", "{}", '{"a": 1}']


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_mutated_harmony_text(seed):
    """gpt-oss on its text path (no token ids): near-valid Harmony replies."""
    pytest.importorskip("openai_harmony")
    from lmparse.response.harmony import render_reply

    rng = random.Random(seed)
    parts = [("analysis", "think it over"), ("call", rng.choice("fgh"), '{"a": "x"}'), ("final", "The answer.")]
    text = render_reply(parts[: rng.randint(1, 3)], header=rng.choice(["template", "model"]))
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randint(0, 10))
        text = rng.choice([text[:i] + text[j:], text[:i] + rng.choice(HARMONY_PIECES) + text[i:], text[:i]])

    def make():
        return create_parser(response_parser="gpt-oss", request={"tools": TOOLS})

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, (list(text), random_chunks(text, rng, 6)))
