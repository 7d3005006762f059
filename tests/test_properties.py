"""Property tests: render random calls with each dialect's renderer, wrap them in random
reasoning and content, re-chunk randomly, and parse them back exactly."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import check_chunkings, random_chunks, result_of
from .support.wires import QWEN

MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>", "<|action_start|>", "<|action_end|>",
           "<|python_tag|>")

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True) | st.text(min_size=1, max_size=8)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4), max_leaves=12)
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=5).flatmap(
    lambda d: st.sampled_from([None, 2]).map(lambda indent: json.dumps(d, ensure_ascii=False, indent=indent))
)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(list("<>/{}[]\"\\\n|")), max_size=40)


def clean(text: str) -> bool:
    return not any(m in text for m in MARKERS)


@st.composite
def replies(draw, dialect: str):
    calls = draw(st.lists(st.tuples(names, arguments), min_size=0, max_size=3))
    reasoning = draw(prose)
    content = draw(prose)
    tail = draw(prose) if calls else ""
    assume(clean(reasoning) and clean(content) and clean(tail))
    # The tail after the last block must not be mistaken for a separator before another block.
    cls = ToolParserManager.get(dialect)
    wire = cls.render(calls)
    return reasoning, content, calls, tail, wire


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _check(dialect, reasoning_parser, text, expected, seed):
    def make():
        return create_parser(tool_parser=dialect, reasoning_parser=reasoning_parser)

    assert result_of(make().parse_complete(text)) == expected
    check_chunkings(make, text, expected, (list(text), random_chunks(text, random.Random(seed), 9)))


@SETTINGS
@given(replies("qwen"), st.integers(0, 1000))
def test_qwen_round_trip(reply, seed):
    reasoning, content, calls, tail, wire = reply
    text = f"<think>{reasoning}</think>{content}{wire}{tail}"
    # The newline the template writes before a block is the block's (block_lead).
    kept = QWEN.before_block(content) if calls else content
    expected = (kept + tail or None, reasoning or None, [(n, a) for n, a in calls])
    _check("qwen", "default", text, expected, seed)


@SETTINGS
@given(replies("internlm"), st.integers(0, 1000))
def test_internlm_round_trip(reply, seed):
    reasoning, content, calls, tail, wire = reply
    text = f"{content}{wire}{tail}"
    expected = (content + tail or None, None, [(n, a) for n, a in calls])
    _check("internlm", None, text, expected, seed)


@SETTINGS
@given(st.lists(st.tuples(names, arguments), min_size=1, max_size=3), st.integers(0, 1000))
def test_llama3_round_trip(calls, seed):
    text = ToolParserManager.get("llama3").render(calls)
    _check("llama3", None, text, (None, None, [(n, a) for n, a in calls]), seed)
