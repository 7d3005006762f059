"""Gemma 4 (``gemma4`` tool and reasoning parsers) and the literal-to-JSON translator under it.

The DESIGN §7 case table runs through tests/test_contract.py (``GEMMA4`` in ALL_WIRES, cut
at every real ``gemma-4/`` token boundary); here: the object literal's translation and how
it streams, the variants PROTOCOLS.md lists, round trips through both official templates
and hypothesis round trips with adversarial strings, and the token facts the dialect rests on.
"""

from __future__ import annotations

import gc
import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ReasoningParserManager, ToolParserManager, create_parser
from lmparse.tools.value_grammar import GEMMA_LITERAL, LiteralTranslator, ValueGrammar

from .support.prefixes import check_declared, observed_prefixes
from .support.stream import (Expected, arguments_after, check_chunkings, check_parse, decoded, random_chunks,
                             result_of)
from .support.tokenizers import load_tokenizer, real_token_chunkings
from .support.wires import GEMMA4, GEMMA_STRING as Q, gemma_literal

TOOLS = GEMMA4.request()["tools"]


def parser(request=None):
    return create_parser(tool_parser="gemma4", reasoning_parser="gemma4",
                         request={"tools": TOOLS} if request is None else request)


def translate(chunks: list[str], grammar: ValueGrammar = GEMMA_LITERAL) -> tuple[str, bool, bool]:
    """``chunks`` through one translator, as a tool parser drives it (what it leaves is re-sent)."""
    t = LiteralTranslator(grammar)
    out, pending = [], ""
    for i, chunk in enumerate(chunks):
        text = pending + chunk
        pending = text[t.feed(text, 0, final=i == len(chunks) - 1):]
        out.append(t.writer.take())
    return "".join(out), t.done, t.broken


# ---- the object literal -------------------------------------------------------------------

LITERALS = [
    ("{}", {}),
    (f"{{city:{Q}Paris \"FR\" & <x>{Q},days:3,opts:{{unit:{Q}c{Q}}}}}",
     {"city": 'Paris "FR" & <x>', "days": 3, "opts": {"unit": "c"}}),
    (f"{{a:[],b:{{}},c:[1,-7,3.14,1.5e10,true,false,null],d:[{{e:{Q}x{Q}}},[{Q}y{Q}]]}}",
     {"a": [], "b": {}, "c": [1, -7, 3.14, 1.5e10, True, False, None], "d": [{"e": "x"}, ["y"]]}),
    (f"{{s:{Q}a, b}} c: d\n\"e\"]{Q}}}", {"s": 'a, b} c: d\n"e"]'}),
    ("{w:plain words,n:None}", {"w": "plain words", "n": None}),  # a bare non-number is its text; None is null
    ("{v:108.}", {"v": "108."}),  # not JSON number syntax: a string
    (" { a : 1 , b : [ 2 , 3 ] } ", {"a": 1, "b": [2, 3]}),  # whitespace between tokens is layout
]


@pytest.mark.parametrize("literal,value", LITERALS, ids=[f"literal{i}" for i in range(len(LITERALS))])
def test_literal_translates_to_json_under_any_chunking(literal, value):
    whole, done, broken = translate([literal])
    assert (json.loads(whole), done, broken) == (value, True, False)
    rng = random.Random(len(literal))
    for chunks in (list(literal), *(random_chunks(literal, rng, 5) for _ in range(20))):
        assert translate(chunks) == (whole, True, False), chunks


def test_json_spacing_and_numbers_as_written():
    assert translate([f"{{a:1.5e10,b:[-0,{{c:{Q}d{Q}}}]}}"])[0] == '{"a": 1.5e10, "b": [-0, {"c": "d"}]}'


@pytest.mark.parametrize("literal", ["{a:[1,]}", "{a:}", "{,}", "{a:1<tool_call|>", f"{{{Q}k{Q}:1}}", "x"])
def test_malformed_literal_breaks_without_inventing(literal):
    out, done, broken = translate([literal])
    assert broken and not done
    assert "<" not in out


def test_grammar_with_escaped_quoted_strings_is_another_parameter():
    """The machinery is the grammar's, not Gemma's: a backslash-escaped ``"`` string works too."""
    grammar = ValueGrammar('"', '"', escape="\\")
    literal = r'{k:"say \"hi\", ok",n:2}'
    assert translate([literal], grammar) == ('{"k": "say \\"hi\\", ok", "n": 2}', True, False)
    assert translate(list(literal), grammar)[0] == translate([literal], grammar)[0]


# ---- streaming -------------------------------------------------------------------------------

def test_bare_scalar_is_withheld_until_its_terminator():
    steps = arguments_after(parser(), ["<|tool_call>call:f{a:", "tr", "ue", ",b:108.", "2", "}"])
    # A key and its colon are held with the value (issue 23 rule 6): streamed alone, a reply cut
    # there could not be closed as JSON without inventing a value. ``tr`` could still be a string.
    assert steps[1:4] == ['{', '{', '{"a": true']
    assert steps[4] == '{"a": true'  # ``108.`` then ``108.2``: still one number
    assert steps[5] == '{"a": true, "b": 108.2}'


def test_string_value_streams_as_it_grows():
    steps = arguments_after(parser(), ["<|tool_call>call:f{s:", Q, "Par", 'is "F', "R", Q, "}"])
    assert steps[1:5] == ['{"s": "', '{"s": "Par', '{"s": "Paris \\"F', '{"s": "Paris \\"FR']
    assert steps[6] == '{"s": "Paris \\"FR"}'


def test_a_split_string_delimiter_is_held_not_emitted():
    steps = arguments_after(parser(), ["<|tool_call>call:f{s:", Q, "ab<|", '"|', ">}"])
    assert steps[2] == steps[3] == '{"s": "ab'
    assert steps[4] == '{"s": "ab"}'


def test_a_long_scalar_arriving_a_character_at_a_time_is_not_rescanned():
    """Held scalar text lives in the translator's buffer: a chunk costs its own length."""
    def cost(n: int) -> float:
        best = float("inf")
        for _ in range(3):
            t = LiteralTranslator(GEMMA_LITERAL)
            t.feed("{a:", 0)
            gc.disable()
            start = time.process_time()
            for _ in range(n):
                t.feed("7", 0)
            t.feed("}", 0)
            best = min(best, time.process_time() - start)
            gc.enable()
        return best / n

    small, large = cost(1 << 13), cost(1 << 17)
    assert large < 4 * small, (small, large)  # 16 times the input, at most 4 times the per-character cost


# ---- the wire: calls, reasoning, variants ----------------------------------------------------

A = '{"city": "Paris", "days": 3}'
CALL = GEMMA4.call("get_weather", A)
WEATHER = [("get_weather", json.dumps(json.loads(A)))]

VARIANTS = [
    ("back_to_back_calls", "Sure." + GEMMA4.calls(("get_weather", A), ("f", "{}")),
     Expected("Sure.", None, [*WEATHER, ("f", "{}")])),
    ("tool_response_ends_generation", CALL + "<|tool_response>", Expected(None, None, WEATHER)),
    ("model_playing_the_tool_is_not_the_reply", CALL + f"<|tool_response>response:get_weather{{v:{Q}x{Q}}}",
     Expected(None, None, WEATHER)),
    ("content_after_calls_then_end", CALL + "Done.<|tool_response>", Expected("Done.", None, WEATHER)),
    ("call_without_the_word_call", "<|tool_call>:get_weather{city:" + Q + "Paris" + Q + ",days:3}<tool_call|>",
     Expected(None, None, WEATHER)),
    ("turn_end_in_place_of_close", "<|tool_call>call:get_weather{city:" + Q + "Paris" + Q + ",days:3}<turn|>",
     Expected(None, None, WEATHER)),
    ("reasoning_label_is_stripped", "<|channel>thought\nhmm<channel|>ok", Expected("ok", "hmm")),
    ("channel_without_its_label", "<|channel>hmm<channel|>ok", Expected("ok", "hmm")),
    ("doubled_channel_open", "<|channel><|channel>thought\nhmm<channel|>ok", Expected("ok", "hmm")),
    ("label_only_at_the_start", "<|channel>thought\nthought\n<channel|>", Expected(None, "thought\n")),
    ("empty_channel_after_content", "ok<|channel>thought\n<channel|>", Expected("ok")),
    ("call_ends_reasoning", "<|channel>thought\nhmm" + CALL, Expected(None, "hmm", WEATHER)),
    ("stray_close_after_a_call_is_dropped", "<|channel>thought\nhm" + CALL + "<channel|>Done.",
     Expected("Done.", "hm", WEATHER)),
    ("key_that_breaks_off_goes_back_to_text", "<|tool_call>call:f{ab<b>x", Expected("ab<b>x", None, [("f", "{}")])),
    ("no_call_word_is_text", "<|tool_call>hello<tool_call|>", Expected("<|tool_call>hello<tool_call|>")),
    ("unknown_name_dropped", GEMMA4.call("zzz", "{}") + CALL, Expected(None, None, WEATHER)),
]


@pytest.mark.parametrize("text,expected", [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_wire_variants(text, expected):
    check_parse(parser, text, expected, real_token_chunkings(text, GEMMA4.tokenizers))


def test_text_past_the_end_of_generation_is_recorded_in_dropped():
    p = parser()
    p.parse_complete(CALL + "<|tool_response>response:x{}")
    assert [(d.reason, d.text) for d in p.dropped] == [
        ("after <|tool_response>: the model wrote past its end of generation", "response:x{}")]


def test_reply_starts_plain_whatever_the_thinking_switch():
    for kwargs in ({}, {"enable_thinking": True}, {"enable_thinking": False}):
        m = parser({"tools": TOOLS, "chat_template_kwargs": kwargs}).parse_complete("Hello.")
        assert (m.content, m.reasoning_content) == ("Hello.", None)


# ---- round trips through the official templates ---------------------------------------------

jinja2 = pytest.importorskip("jinja2")


def gemma_template(name: str):
    from .test_xml_templates import load_template

    return load_template(f"templates/{name}")


def reply_of(template, messages) -> str:
    """The model turn's own text as the template writes it (after ``<|turn>model\\n``, up to
    ``<turn|>``): the generation prompt prefills an empty channel the history turn omits."""
    full = template.render(messages=messages, tools=TOOLS, add_generation_prompt=False)
    reply = full[full.rindex("<|turn>model\n") + len("<|turn>model\n"):]
    return reply.split("<turn|>")[0]


SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, {"k": "v"}, [], {}]}})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("f", {"s": "a,b}:c]\n{\"x\": 1}<tool_call|>", "t": "<|channel>x<channel|>"})],
}
TEMPLATES = ["google-gemma-4-31B-it.jinja", "google-gemma-4-31B-it-interleaved.jinja"]


def sorted_keys(value):
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(template, scenario):
    calls = SCENARIOS[scenario]
    assistant = {"role": "assistant", "content": "Let me check.", "reasoning_content": "The user wants weather.",
                 "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                                for i, (n, a) in enumerate(calls)]}
    messages = [{"role": "user", "content": "Weather in Paris?"}, assistant]
    reply = reply_of(gemma_template(template), messages)
    content, reasoning, got = check_parse(parser, reply, None, real_token_chunkings(reply, GEMMA4.tokenizers))
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert content == "Let me check."
    if reasoning is not None:  # written only for the turn after the last user message that calls tools
        assert reasoning.strip() == "The user wants weather."
    # render() writes the calls as the template does (it sorts keys; render keeps the order given).
    wire = ToolParserManager.get("gemma4").render([(n, json.dumps(sorted_keys(a))) for n, a in calls])
    assert wire in reply


# ---- hypothesis: adversarial strings round trip -----------------------------------------------

keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
HAZARDS = ['"', ",", "}", "{", ":", "]", "[", "\n", "<|", '|>', "\\", "<tool_call|>", "<channel|>", "<|tool_call>"]
strings = st.lists(st.sampled_from(HAZARDS) | st.text(max_size=3), max_size=8).map("".join).filter(
    lambda s: Q not in s)
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) \
    | strings
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(keys, kids, max_size=3),
                      max_leaves=8)
calls_st = st.lists(st.tuples(st.sampled_from(["f", "g", "get_weather"]), st.dictionaries(keys, values, max_size=4)),
                    max_size=3)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"), max_size=20).map(
    lambda s: "«" + s if s else s)  # the conservation check must not match a one-letter text inside "thought\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_st, prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    wire_text = "".join(GEMMA4.call(n, json.dumps(a)) for n, a in calls)
    assert wire_text == ToolParserManager.get("gemma4").render([(n, json.dumps(a)) for n, a in calls])
    text = (f"<|channel>thought\n{reasoning}<channel|>" if reasoning else "") + content + wire_text
    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    assert decoded(result_of(parser().parse_complete(text))) == want
    check_chunkings(parser, text, want, (list(text), random_chunks(text, random.Random(seed), 9)), decoded)


# ---- tokenizer facts (gemma-4/, converted from llama.cpp's vocab GGUF) ------------------------

@pytest.mark.parametrize("marker,token_id", [("<|tool_call>", 48), ("<tool_call|>", 49), ("<|tool_response>", 50),
                                             (Q, 52), ("<|channel>", 100), ("<channel|>", 101), ("<turn|>", 106)])
def test_markers_are_single_tokens(marker, token_id):
    assert load_tokenizer("gemma-4").encode(marker) == [token_id]
    assert observed_prefixes("gemma-4", marker) == set()


def test_declared_prefixes_match_the_real_tokenizer():
    reasoning = ReasoningParserManager.get("gemma4")
    check_declared(reasoning.start_tag_prefixes, reasoning.start_tag, ("gemma-4",))
    assert len(load_tokenizer("gemma-4").encode(reasoning.start_label)) == 2  # thought, \n: held as text
    check_declared(reasoning.end_tag_prefixes, reasoning.end_tag, ("gemma-4",))
    tool = ToolParserManager.get("gemma4")
    check_declared(tool.tool_close_prefixes, tool.tool_close_tag, ("gemma-4",))


def test_literal_in_real_tokens_round_trips():
    literal = gemma_literal({"city": "London", "n": [1, 2], "o": {}})
    text = f"<|tool_call>call:f{literal}<tool_call|>"
    runs = real_token_chunkings(text, ("gemma-4",))
    if not runs:
        pytest.skip("gemma-4 tokenizer test data missing")
    assert check_parse(parser, text, None, runs)[2] == [("f", '{"city": "London", "n": [1, 2], "o": {}}')]


def test_reasoning_renders_with_its_label_and_parses_back():
    written = ReasoningParserManager.get("gemma4").render("Paris, then.")
    assert written == "<|channel>thought\nParis, then.<channel|>"
    assert result_of(parser().parse_complete(written + "Sunny.")) == ("Sunny.", "Paris, then.", [])


# ---- issue 13 variants: what real replies add to the template's syntax --------------------------

PARIS = "{city:" + Q + "Paris" + Q + ",days:3}"
MORE_VARIANTS = [
    ("parenthesised_arguments", "<|tool_call>call:get_weather(city:" + Q + "Paris" + Q + ",days:3)<tool_call|>",
     Expected(None, None, WEATHER)),
    ("parenthesised_string_holding_a_paren", "<|tool_call>call:f(s:" + Q + "a) b" + Q + ")<tool_call|>",
     Expected(None, None, [("f", '{"s": "a) b"}')])),
    ("eos_in_place_of_tool_response", CALL + "<eos>", Expected(None, None, WEATHER)),
    ("eos_after_content_after_calls", CALL + "Done.<eos>", Expected("Done.", None, WEATHER)),
    ("eos_without_a_call_stays_text", "Hi.<eos>", Expected("Hi.<eos>")),
    ("stray_trailing_channel_close", "ok<channel|>", Expected("ok")),
    ("doubled_channel_open_after_content", "ok<|channel><|channel>thought\nhm<channel|>", Expected("ok", "hm")),
    ("thought_word_later_is_content", "I thought\nso.", Expected("I thought\nso.")),
    ("thought_without_newline_is_content", "thoughtful", Expected("thoughtful")),
    ("bare_call_prose_is_text", "call:get_weather{days:3} is how to call it", Expected(
        "call:get_weather{days:3} is how to call it")),
    ("bare_call_of_an_unoffered_tool_is_text", "call:zzz{a:1}", Expected("call:zzz{a:1}")),
    ("bare_call_after_text_is_text", "See call:get_weather" + PARIS, Expected("See call:get_weather" + PARIS)),
    ("bare_call_broken_is_text", "call:get_weather{ab<b>", Expected("call:get_weather{ab<b>")),
    ("bare_call_cut_off_is_text", "call:get_weather{city:" + Q + "Par", Expected("call:get_weather{city:" + Q + "Par")),
    ("bare_call_whole_reply", "call:get_weather" + PARIS, Expected(None, None, WEATHER)),
    ("bare_call_tag_form", "  <call>get_weather" + PARIS + "\n", Expected("\n", None, WEATHER)),
]


@pytest.mark.parametrize("text,expected", [v[1:] for v in MORE_VARIANTS], ids=[v[0] for v in MORE_VARIANTS])
def test_more_wire_variants(text, expected):
    check_parse(parser, text, expected, real_token_chunkings(text, GEMMA4.tokenizers))


def test_parenthesised_arguments_stream_as_they_grow():
    steps = arguments_after(parser(), ["<|tool_call>call:f(s:", Q, "ab", "c", Q, ")", "<tool_call|>"])
    assert steps[2:6] == ['{"s": "ab', '{"s": "abc', '{"s": "abc"', '{"s": "abc"}']


def test_a_bare_call_needs_offered_tools():
    """With no tools offered every name is accepted, so no name proves a bare call: text."""
    m = create_parser(tool_parser="gemma4", reasoning_parser="gemma4").parse_complete("call:f{a:1}")
    assert (m.content, m.tool_calls) == ("call:f{a:1}", [])


def each_chunking(text: str):
    runs = {"whole": [text], "chars": list(text)}
    runs.update(real_token_chunkings(text, GEMMA4.tokenizers))
    runs.update((f"random{seed}", random_chunks(text, random.Random(seed), 5)) for seed in range(6))
    return runs.values()


@pytest.mark.parametrize("rest,want", [("Hello.", ("Hello.", None, [])), ("", (None, None, [])),
                                       ("Sure." + CALL, ("Sure.", None, WEATHER))])
def test_spurious_thought_label_at_the_start_is_dropped_and_recorded(rest, want):
    """With thinking off the model may still write the channel's label first (vLLM strips
    it): only ``thought`` + newline, only at the very start of the reply; kept in ``dropped``."""
    from .support.stream import check_invariants, feed, folded

    text = "thought\n" + rest
    for chunks in each_chunking(text):
        p = parser()
        deltas = feed(p, chunks)
        assert folded(deltas) == want, chunks
        records = [d for d in p.dropped if d.text == "thought\n"]
        assert len(records) == 1, p.dropped
        check_invariants(deltas, text, [d.text for d in p.dropped if d.text])
