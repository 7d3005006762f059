"""MiniMax-M3 (``minimax-m3`` tool and reasoning parsers) and the element-to-JSON translator under it.

The DESIGN §7 case table runs through tests/test_contract.py (``MINIMAX_M3`` in ALL_WIRES, cut
at the MiniMax-M2 vocabulary's boundaries, which split NS into six pieces: no M3 tokenizer
exists here, so every token claim is unverified); here: nested elements and ``<item>`` lists,
how values stream, the variants PROTOCOLS.md lists, the reasoning switch (``thinking_mode``
and the prompt's tail, the bare ``</mm:think>``), round trips through the official template
and hypothesis round trips with adversarial strings.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser
from lmparse.tools.dialects.minimax_m3 import BROKEN as BROKEN_REASON
from lmparse.tools.recovery import MALFORMED_CALL

from .support.stream import (Expected, arguments_after, check_chunkings, check_parse, decoded, random_chunks,
                             result_of)
from .support.tokenizers import load_tokenizer, real_token_chunkings
from .support.turns import tool_call_conversation
from .support.wires import MINIMAX_M3, MINIMAX_NS as NS, minimax_elements

WEATHER_SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "ratio": {"type": "number"},
    "live": {"type": "boolean"}, "opts": {"type": "object", "properties": {"unit": {"type": "string"}}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "spots": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    "none_yet": {"type": "array"}, "blank": {"type": "object"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}},
         *({"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
           for n in ("f", "g"))]


def parser(request=None, prompt=None):
    return create_parser(tool_parser="minimax-m3", reasoning_parser="minimax-m3",
                         request={"tools": TOOLS} if request is None else request, prompt=prompt)


def block(*invokes: str) -> str:
    return f"{NS}<tool_call>\n" + "".join(invokes) + f"{NS}</tool_call>"


def invoke(name: str, body: str) -> str:
    return f'{NS}<invoke name="{name}">{body}{NS}</invoke>\n'


def el(key: str, body: str) -> str:
    return f"{NS}<{key}>{body}{NS}</{key}>"


# ---- nested elements ------------------------------------------------------------------------

NESTED = [
    ("scalars_by_schema", el("city", 'Paris "FR" & <x>') + el("days", "3") + el("ratio", "2.5") + el("live", "true"),
     {"city": 'Paris "FR" & <x>', "days": 3, "ratio": 2.5, "live": True}),
    ("object_and_lists", el("opts", el("unit", "c")) + el("tags", el("item", "a") + el("item", "b"))
     + el("spots", el("item", el("n", "1")) + el("item", el("n", "2"))),
     {"opts": {"unit": "c"}, "tags": ["a", "b"], "spots": [{"n": 1}, {"n": 2}]}),
    ("empty_elements_by_schema", el("none_yet", "") + el("blank", "") + el("city", ""),
     {"none_yet": [], "blank": {}, "city": ""}),
    ("raw_text_with_markup_and_newlines", el("city", "a <b>\n</c> ]<] [>[ " + NS + "<d> e"),
     {"city": "a <b>\n</c> ]<] [>[ " + NS + "<d> e"}),
    ("container_given_as_json_text", el("tags", '["x", "y"]'), {"tags": ["x", "y"]}),
]


@pytest.mark.parametrize("body,value", [c[1:] for c in NESTED], ids=[c[0] for c in NESTED])
def test_nested_elements_become_json_under_any_chunking(body, value):
    text = "Sure." + block(invoke("get_weather", body))
    got = check_parse(parser, text, None, real_token_chunkings(text, MINIMAX_M3.tokenizers))
    assert (got[0], [(n, json.loads(a)) for n, a in got[2]]) == ("Sure.", [("get_weather", value)])


def test_untyped_values_are_strings_and_untyped_children_make_objects_or_lists():
    body = el("n", "3") + el("o", el("k", "true")) + el("l", el("item", "1") + el("item", el("z", "")))
    text = block(invoke("f", body))
    assert decoded(result_of(parser().parse_complete(text)))[2] == [
        ("f", {"n": "3", "o": {"k": "true"}, "l": ["1", {"z": ""}]})]


def test_a_key_named_item_is_a_key_where_the_schema_says_object():
    schema = {"type": "object", "properties": {"o": {"type": "object"}}}
    tools = [{"type": "function", "function": {"name": "h", "parameters": schema}}]
    text = block(invoke("h", el("o", el("item", "x"))))
    assert decoded(result_of(parser({"tools": tools}).parse_complete(text)))[2] == [("h", {"o": {"item": "x"}})]


# ---- streaming -------------------------------------------------------------------------------

def test_string_value_streams_as_it_grows():
    head = f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<city>'
    steps = arguments_after(parser(), [head, "Par", 'is "F', "R" + NS[:4], NS[4:] + "</city>"])
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris \\"F', '{"city": "Paris \\"FR']
    assert steps[4] == '{"city": "Paris \\"FR"'


def test_typed_scalar_waits_for_its_closer():
    head = f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<days>'
    steps = arguments_after(parser(), [head, "1", "0", f"{NS}</days>", f"{NS}<opts>{NS}<unit>", "k"])
    # Rule 6 (issue 23): the key is held until its value begins, so nothing follows ``{`` while
    # the typed value is buffered; the scalar goes out whole at its closer, with its key.
    assert steps[0:3] == ['{'] * 3
    assert steps[3] == '{"days": 10'
    assert steps[5] == '{"days": 10, "opts": {"unit": "k'


# ---- variants and malformed output -------------------------------------------------------------

W = [("get_weather", {"city": "Oslo"})]
VARIANTS = [
    ("single_quoted_name", block(f"{NS}<invoke name='get_weather'>" + el("city", "Oslo") + f"{NS}</invoke>\n"),
     Expected(None, None, [("get_weather", '{"city": "Oslo"}')])),
    ("bare_name", block(f"{NS}<invoke name=get_weather>" + el("city", "Oslo") + f"{NS}</invoke>\n"),
     Expected(None, None, [("get_weather", '{"city": "Oslo"}')])),
    ("value_closer_missing_ends_at_invoke", block(f'{NS}<invoke name="get_weather">{NS}<city>Oslo{NS}</invoke>\n'),
     Expected(None, None, [("get_weather", '{"city": "Oslo"}')])),
    ("invoke_closer_missing_ends_at_block", f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<city>Oslo'
     f"{NS}</tool_call>ok", Expected("ok", None, [("get_weather", '{"city": "Oslo"}')])),
    ("invoke_closer_missing_ends_at_the_next_call", f'{NS}<tool_call>\n{NS}<invoke name="f">{NS}<a>x'
     + invoke("g", el("b", "y")) + f"{NS}</tool_call>", Expected(None, None, [("f", '{"a": "x"}'), ("g", '{"b": "y"}')])),
    ("unknown_name_dropped", block(invoke("zzz", el("a", "1")), invoke("g", "")),
     Expected(None, None, [("g", "{}")])),
    ("text_where_a_parameter_belongs", block(f'{NS}<invoke name="f">oops{NS}</invoke>\n'),
     Expected(None, None, [("f", "{}")])),
    ("no_invoke_is_text", f"{NS}<tool_call>hello{NS}</tool_call>", Expected(f"{NS}<tool_call>hello{NS}</tool_call>")),
    ("cut_off_inside_a_nested_value", f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<opts>{NS}<unit>c',
     Expected(None, None, [("get_weather", '{"opts": {"unit": "c"}}')])),
    ("adaptive_bare_closer_is_dropped", "</mm:think>Hi." + block(invoke("f", "")),
     Expected("Hi.", None, [("f", "{}")])),
    ("model_opens_reasoning", "<mm:think>hmm</mm:think>Hi.", Expected("Hi.", "hmm")),
]


@pytest.mark.parametrize("text,expected", [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_wire_variants(text, expected):
    check_parse(parser, text, expected, real_token_chunkings(text, MINIMAX_M3.tokenizers))


# ---- the reasoning switch ----------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,reasoning", [({}, False), ({"thinking_mode": "adaptive"}, False),
                                              ({"thinking_mode": "disabled"}, False),
                                              ({"thinking_mode": "enabled"}, True), ({"enable_thinking": True}, True)])
def test_thinking_mode_decides_the_start_without_a_prompt(kwargs, reasoning):
    m = parser({"tools": TOOLS, "chat_template_kwargs": kwargs}).parse_complete("a</mm:think>b")
    assert (m.content, m.reasoning_content) == (("b", "a") if reasoning else ("ab", None))


# ---- round trips through the official template ---------------------------------------------

jinja2 = pytest.importorskip("jinja2")


def template():
    from .test_xml_templates import load_template

    return load_template("templates/MiniMax-M3.jinja")


@pytest.mark.parametrize("mode,reasoning", [(None, False), ("adaptive", False), ("disabled", False),
                                            ("enabled", True)])
def test_the_generation_prompt_tail_decides_the_start(mode, reasoning):
    kwargs = {} if mode is None else {"thinking_mode": mode}
    prompt = template().render(messages=[{"role": "user", "content": "Hi"}], tools=TOOLS, add_generation_prompt=True,
                               **kwargs)
    m = parser({"tools": TOOLS}, prompt=prompt).parse_complete("a</mm:think>b")
    assert (m.content, m.reasoning_content) == (("b", "a") if reasoning else ("ab", None))


def reply_of(messages) -> str:
    """The assistant turn as the template writes it (after ``]~b]ai\\n``, up to ``[e~[``)."""
    full = template().render(messages=messages, tools=TOOLS, add_generation_prompt=False)
    return full[full.rindex("]~b]ai\n") + len("]~b]ai\n"):].split("[e~[")[0]


SCENARIOS = {
    "typed_nested_values": [("get_weather", {
        "city": 'Paris "FR" & <x>', "days": 3, "ratio": 2.5, "live": False, "opts": {"unit": "c"},
        "tags": ["a", "b"], "spots": [{"n": 1}, {"n": 2}], "none_yet": [], "blank": {}})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Rome"}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("get_weather", {"city": "a <b> </c>\n]<]minimax[>x <tool_call> </mm:think>",
                                                "tags": ["<item>", " x "]})],
}


@pytest.mark.parametrize("with_reasoning", [True, False])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario, with_reasoning):
    calls = SCENARIOS[scenario]
    reply = reply_of(tool_call_conversation(calls, with_reasoning))
    content, reasoning, got = check_parse(parser, reply, None, real_token_chunkings(reply, MINIMAX_M3.tokenizers))
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert (content, reasoning) == ("Let me check.", "The user wants weather." if with_reasoning else None)
    wire = ToolParserManager.get("minimax-m3").render([(n, json.dumps(a)) for n, a in calls])
    assert wire in reply  # render() writes what the template writes


def test_null_members_are_omitted_as_the_template_omits_them():
    wire = ToolParserManager.get("minimax-m3").render([("f", '{"a": null, "b": {"c": null, "d": "x"}}')])
    assert wire == block(invoke("f", el("b", el("d", "x"))))


# ---- hypothesis: adversarial strings round trip, typed by a schema built alongside -------------

keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
HAZARDS = ["<", ">", "</", "<item>", "</item>", "\n", " ", "]<]", "minimax", "[>[", "&", '"', "\\", "<tool_call>",
           "</mm:think>", "<mm:think>", "</invoke>", "</a>"]
strings = st.lists(st.sampled_from(HAZARDS) | st.text(max_size=3), max_size=8).map("".join).filter(
    lambda s: NS not in s)
SCALARS = {"string": strings, "integer": st.integers(-10**9, 10**9), "boolean": st.booleans(),
           "number": st.floats(allow_nan=False, allow_infinity=False)}
typed_scalars = st.sampled_from(sorted(SCALARS)).flatmap(
    lambda kind: SCALARS[kind].map(lambda v: (v, {"type": kind})))


def _containers(kids):
    arrays = st.sampled_from(sorted(SCALARS)).flatmap(lambda kind: st.lists(SCALARS[kind], max_size=3).map(
        lambda vs: (vs, {"type": "array", "items": {"type": kind}})))
    objects = st.dictionaries(keys, kids, max_size=3).map(lambda d: (
        {k: v for k, (v, _) in d.items()}, {"type": "object", "properties": {k: s for k, (_, s) in d.items()}}))
    return arrays | objects


typed_values = st.recursive(typed_scalars, _containers, max_leaves=8)
arguments_st = st.dictionaries(keys, typed_values, max_size=4).map(lambda d: (
    {k: v for k, (v, _) in d.items()}, {"type": "object", "properties": {k: s for k, (_, s) in d.items()}}))
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<]"),
                max_size=20).map(
    lambda s: "«" + s if s else s)  # a lead no marker holds: the conservation check's matching cannot take
# a one-letter text from inside a tag name ("e" of "opensource") and report the tag's rest as lost


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(arguments_st, min_size=1, max_size=3), prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    names = [f"t{i}" for i in range(len(calls))]
    tools = [{"type": "function", "function": {"name": n, "parameters": schema}} for n, (_, schema) in zip(names, calls, strict=True)]
    pairs = [(n, json.dumps(args)) for n, (args, _) in zip(names, calls, strict=True)]
    wire_text = MINIMAX_M3.calls(*pairs)
    assert wire_text == ToolParserManager.get("minimax-m3").render(pairs)
    text = (f"<mm:think>{reasoning}</mm:think>" if reasoning else "</mm:think>") + content + wire_text

    def make():
        return parser({"tools": tools})

    want = (content or None, reasoning or None, [(n, args) for n, (args, _) in zip(names, calls, strict=True)])
    assert decoded(result_of(make().parse_complete(text))) == want
    check_chunkings(make, text, want, (list(text), random_chunks(text, random.Random(seed), 9)), decoded)


def test_the_wire_helper_writes_what_the_template_macro_writes():
    assert minimax_elements({"a": [1, {"b": True}], "c": None}) == el("a", el("item", "1") + el("item", el("b", "true")))


# ---- tokens (unverified: no MiniMax-M3 tokenizer) -----------------------------------------------

def test_the_m2_vocabulary_splits_the_namespace_marker_into_pieces():
    """What PROTOCOLS.md measured: the M2 tokenizer (the stand-in for chunkings) has no NS token,
    so the contract matrix cuts NS in six places; the M3 vocabulary's single tokens are unverified."""
    try:
        tok = load_tokenizer("minimax-m2")
    except Exception as exc:  # pragma: no cover - depends on the test data
        pytest.skip(f"minimax-m2 tokenizer unavailable: {exc}")
    assert len(tok.encode(NS)) == 6


def test_required_tool_choice_is_refused_not_mis_constrained():
    """No call syntax (a parameter's closer repeats its own key): constraints refuse with Unconstrainable (a clear 400 when serving)."""
    from lmparse.constrain import Unconstrainable, gbnf_for

    with pytest.raises(Unconstrainable):
        gbnf_for("minimax-m3", TOOLS, "required")


def test_layout_before_text_that_breaks_the_members_is_not_lost_at_a_chunk_boundary():
    """Found by the fuzz suite: one character at a time, the space after ``<invoke name="h">``
    was taken as layout before ``name=...`` broke the call, and vanished from the text."""
    text = 'Sure.\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="h"> name="h">]<]x'

    def make():
        return create_parser("minimax-m3", request=None)

    check_chunkings(make, text, result_of(make().parse_complete(text)), (list(text),))
    assert " name=" in (make().parse_complete(text).content or "")


# ---- issue 13 variants: whitespace after NS, broken calls recorded -------------------------------

SPACED = [
    ("space_after_ns_everywhere", f"Hi.{NS} <tool_call>\n{NS} <invoke name=\"get_weather\">{NS} <city>Oslo"
     f"{NS} </city>{NS} </invoke>\n{NS} </tool_call>", Expected("Hi.", None, [("get_weather", '{"city": "Oslo"}')])),
    ("newline_after_ns_in_the_opener", f"{NS}\n<tool_call>\n" + invoke("get_weather", el("city", "Oslo")) + f"{NS}</tool_call>",
     Expected(None, None, [("get_weather", '{"city": "Oslo"}')])),
    ("space_after_ns_inside_nested_values", block(f'{NS}<invoke name="get_weather">{NS} <opts>{NS} <unit>c{NS} </unit>'
     f"{NS} </opts>{NS} <tags>{NS} <item>a{NS} </item>{NS} </tags>{NS} </invoke>\n"),
     Expected(None, None, [("get_weather", '{"opts": {"unit": "c"}, "tags": ["a"]}')])),
    ("space_after_ns_before_prose_is_still_value_text", block(f'{NS}<invoke name="get_weather">{NS}<city>a{NS} b'
     f"{NS}</city>{NS}</invoke>\n"), Expected(None, None, [("get_weather", json.dumps({"city": f"a{NS} b"}))])),
]


@pytest.mark.parametrize("text,expected", [v[1:] for v in SPACED], ids=[v[0] for v in SPACED])
def test_whitespace_between_the_namespace_and_its_tag_is_layout(text, expected):
    check_parse(parser, text, expected, real_token_chunkings(text, MINIMAX_M3.tokenizers))


# A call broken inside its invoke is skipped to its ``NS</invoke>`` (issue 23 rule 2: the calls
# after it still parse); markup no invoke closes is dropped with the block, up to its closer.
BROKEN = [
    ("text_after_a_parameter", block(f'{NS}<invoke name="f">{NS}<a>x{NS}</a>xx{NS}</invoke>\n'),
     [("f", '{"a": "x"}')], MALFORMED_CALL, f"xx{NS}</invoke>"),
    ("garbled_invoke", block(invoke("f", ""), f"{NS}<invoke nam"), [("f", "{}")], BROKEN_REASON, f"{NS}<invoke nam"),
    ("text_where_a_parameter_belongs", block(f'{NS}<invoke name="f">oops{NS}</invoke>\n'), [("f", "{}")],
     MALFORMED_CALL, f"oops{NS}</invoke>"),
]


@pytest.mark.parametrize("text,calls,reason,markup", [v[1:] for v in BROKEN], ids=[v[0] for v in BROKEN])
def test_a_broken_calls_markup_is_recorded_in_dropped(text, calls, reason, markup):
    from .support.stream import check_invariants, chunkings, feed, folded

    for chunks in [*chunkings(text).values(), *real_token_chunkings(text, MINIMAX_M3.tokenizers).values()]:
        p = parser()
        deltas = feed(p, chunks)
        assert folded(deltas) == (None, None, calls), chunks
        assert [(d.reason, d.text) for d in p.dropped] == [(reason, markup)], chunks
        check_invariants(deltas, text)  # (the converted call's own stretch accounts the markup)
