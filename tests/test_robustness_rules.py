"""Issue 13 item 5: robustness rules that hold for every dialect family, one test per family.

- whitespace around and between calls is content verbatim unless the family's template
  writes it as part of the call syntax (``ToolParser.block_separator`` / ``block_lead``);
- an XML-like value whose own close tag is missing ends at the enclosing function's or
  block's close tag;
- schema type names beyond JSON Schema's (``int``, ``double``, ``dict``...) and unions
  coerce alike wherever a dialect coerces by schema;
- (issue 23, rule 4) value typing follows ``$ref`` chains into ``$defs`` / ``definitions``,
  ``allOf``, ``anyOf`` / ``oneOf`` and ``const``: a value is the one type its text is
  among those allowed, and a string where a string is allowed and the text is not
  unambiguously another type;
- (issue 23, rule 5) a family whose tool markers are single special tokens parses the
  spelling an engine decoding with ``spaces_between_special_tokens`` writes (one space on
  each side of every special token);
- gpt-oss messages to built-in recipients that are not offered are ``dropped``, not reasoning.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from lmparse import ToolParserManager, create_parser
from lmparse.tools.xml import MALFORMED_CALL

from .support.stream import Expected, check_parse
from .support.tokenizers import HF_TOKENIZERS, added_tokens_in, decode_with_spaces, load_hf_tokenizer
from .support.typed_tools import TOOLS as TYPED_TOOLS
from .support.wires import (ALL_WIRES, DSML, DSML_WIRES, GCML, HUNYUAN, HUNYUAN_PLAIN, HUNYUAN_PLAIN_WIRES, HY_V4,
                            LLAMA3, MINICPM5, MINIMAX_M3, MINIMAX_NS, V4, V41, XML_WIRES, DsmlWire,
                            Wire, XmlWire, XtmlWire, dsml_untyped)

SCHEMA_WIRES = (*XML_WIRES, *DSML_WIRES)  # the families that coerce values by the tool's schema


def value_close(w: Wire) -> str:
    """The tag that closes one argument value on ``w``'s wire."""
    if isinstance(w, DsmlWire):
        return f"</{w.prefix}parameter>"
    return "</arg_value>" if w.tool_parser.startswith(("glm", "ling")) else "</parameter>"


def one_call(w: Wire, name: str, params: list[tuple[str, str]]) -> str:
    if isinstance(w, DsmlWire):
        return w.call_with(name, *(dsml_untyped(k, v, w.prefix) for k, v in params))
    assert isinstance(w, XmlWire)
    return w.call(name, params)


# ---- an XML value whose own close tag is missing --------------------------------------------

WEATHER = [("city", "Paris"), ("days", "3")]
WEATHER_ARGS = '{"city": "Paris", "days": 3}'


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_the_function_close(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    close = value_close(w)
    cut = call.rindex(close)
    broken = call[:cut] + call[cut + len(close):].removeprefix("\n")
    w.check(w.plain + broken + "after" + w.call("g", ()) if isinstance(w, XmlWire) else w.plain + broken + "after",
            Expected("after", None, [("get_weather", WEATHER_ARGS)] + ([("g", "{}")] if isinstance(w, XmlWire) else [])))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_the_block_close(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    broken = call[:call.rindex(value_close(w))] + w.close
    w.check(w.plain + broken + "after", Expected("after", None, [("get_weather", WEATHER_ARGS)]))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_a_block_close_on_its_own_line(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    broken = call[:call.rindex(value_close(w))] + "\n" + w.close  # Ling 3's function close is "\n</tool_call>"
    w.check(w.plain + broken + "after", Expected("after", None, [("get_weather", WEATHER_ARGS)]))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_block_close_inside_a_value_is_data_when_the_value_closes_later(w: Wire) -> None:
    value = f"x {w.close} y"
    w.check(w.plain + one_call(w, "f", [("s", value)]), Expected(None, None, [("f", json.dumps({"s": value}, ensure_ascii=False))]))


# ---- schema type names ------------------------------------------------------------------------

KINDS: dict[str, Any] = {
    "i": {"type": "int"}, "integer": {"type": "integer"}, "f": {"type": "float"}, "d": {"type": "double"},
    "number": {"type": "number"}, "b": {"type": "bool"}, "boolean": {"type": "boolean"},
    "s": {"type": "str"}, "string": {"type": "string"}, "o": {"type": "dict"}, "object": {"type": "object"},
    "l": {"type": "list"}, "array": {"type": "array"}, "u": {"type": ["int", "null"]},
    "un": {"type": ["integer", "null"]}, "v": {"anyOf": [{"type": "null"}, {"type": "double"}]},
}
WRITTEN = {"i": "3", "integer": "4", "f": "2.5", "d": "-1.25", "number": "7", "b": "true", "boolean": "False",
           "s": "12", "string": "true", "o": '{"a": 1}', "object": "{'k': [1]}", "l": "[1, 2]", "array": '["x"]',
           "u": "5", "un": "None", "v": "0.5"}
COERCED = {"i": 3, "integer": 4, "f": 2.5, "d": -1.25, "number": 7, "b": True, "boolean": False, "s": "12",
           "string": "true", "o": {"a": 1}, "object": {"k": [1]}, "l": [1, 2], "array": ["x"], "u": 5, "un": None,
           "v": 0.5}
KIND_TOOLS = [{"type": "function", "function": {"name": "kinds", "parameters": {"type": "object", "properties": KINDS}}}]


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_schema_type_names_beyond_json_schemas_coerce_alike(w: Wire) -> None:
    text = w.plain + one_call(w, "kinds", list(WRITTEN.items()))
    w.check(text, Expected(None, None, [("kinds", json.dumps(COERCED, ensure_ascii=False))]), w.request(tools=KIND_TOOLS))


# ---- schema typing through $ref, allOf, anyOf / oneOf, const (issue 23, rule 4) ----------------
# Every family whose values are raw text typed by the tool's schema: the XML-like ones, DSML's
# untyped parameters, Hunyuan's pairs, MiniCPM5's params and MiniMax-M3's elements.

TYPED_WIRES = (*SCHEMA_WIRES, HUNYUAN, HY_V4, MINICPM5, MINIMAX_M3)

REF_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Count": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "Alias": {"$ref": "#/$defs/Count"},  # a chain of two
        "Loop": {"$ref": "#/$defs/Loop"},  # a cycle constrains nothing: a string
        "Bool": {"type": "boolean"},
        "Flag": {"allOf": [{"$ref": "#/$defs/Bool"}, {"description": "on or off"}]},
        "Maybe": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Num"}]},
    },
    "definitions": {"Num": {"type": "number"}},
    "properties": {
        "n": {"$ref": "#/$defs/Alias"}, "word": {"$ref": "#/$defs/Count"}, "zip": {"$ref": "#/$defs/Count"},
        "flag": {"$ref": "#/$defs/Flag"}, "ratio": {"$ref": "#/$defs/Maybe"}, "none": {"$ref": "#/$defs/Maybe"},
        "loop": {"$ref": "#/$defs/Loop"}, "mode": {"const": 3}, "whole": {"allOf": [{"type": "number"}, {"type": "int"}]},
        "ids": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
        "note": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
}
REF_WRITTEN = [("n", "-7"), ("word", "seven"), ("zip", "007"), ("flag", "true"), ("ratio", "2.5"), ("none", "null"),
               ("loop", "12"), ("mode", "3"), ("whole", "4"), ("ids", "[1, 2]"), ("note", "costs 5")]
REF_TYPED = {"n": -7, "word": "seven", "zip": "007", "flag": True, "ratio": 2.5, "none": None, "loop": "12",
             "mode": 3, "whole": 4, "ids": [1, 2], "note": "costs 5"}
REF_TOOLS = [{"type": "function", "function": {"name": "refs", "parameters": REF_PARAMETERS}}]


@pytest.mark.parametrize("schema,kinds", [
    ({"$ref": "#/$defs/Alias"}, ("string", "integer")),
    ({"$ref": "#/$defs/Loop"}, None),
    ({"$ref": "#/$defs/Missing"}, None),
    ({"$ref": "#/$defs/Flag"}, ("boolean",)),
    ({"$ref": "#/$defs/Maybe"}, ("null", "number")),
    ({"allOf": [{"type": "number"}, {"type": "int"}]}, ("integer",)),
    ({"allOf": [{"$ref": "#/$defs/Count"}, {"type": ["integer", "null"]}]}, ("integer",)),
    ({"anyOf": [{"type": "string"}, {}]}, None),  # a branch that allows anything
    ({"oneOf": [{"const": "a"}, {"const": 1.5}]}, ("string", "number")),
    ({"enum": ["x", None]}, ("string", "null")),
    ({"type": "string", "$ref": "#/$defs/Count"}, ("string",)),
])
def test_value_types_follow_refs_and_combinators(schema: Any, kinds: Any) -> None:
    from lmparse.schema import value_types

    assert value_types(schema, REF_PARAMETERS) == kinds


@pytest.mark.parametrize("raw,kinds,json_source", [
    ("-7", ("string", "integer"), "-7"),
    ("007", ("string", "integer"), '"007"'),  # not unambiguously an integer where a string may be
    ("+7", ("string", "integer"), '"+7"'),
    ("007", ("integer",), "7"),  # an integer is all it may be
    ("abc", ("string", "integer"), '"abc"'),
    ("true", ("string", "boolean"), "true"),
    ("yes", ("string", "boolean"), '"yes"'),
    ("None", ("string", "null"), "null"),
    ("nil", ("string", "null"), '"nil"'),
    ("2.5", ("null", "number"), "2.5"),
    ("None", ("integer", "null"), "null"),
    ("[1, 2]", ("string", "array"), "[1, 2]"),
    ("{'k': 1}", ("string", "object"), '{"k": 1}'),
    ("3", ("integer", "number"), "3"),
    ("x", ("integer", "boolean"), '"x"'),  # no type fits: as written
])
def test_convert_value_takes_the_one_type_the_text_is(raw: str, kinds: Any, json_source: str) -> None:
    from lmparse.schema import convert_value

    assert convert_value(raw, kinds) == json_source


def raw_call(w: Wire, name: str, params: list[tuple[str, str]]) -> str:
    """One block holding one call whose values are ``params``' text as written (no type said)."""
    if w is MINIMAX_M3:
        body = "".join(f"{MINIMAX_NS}<{k}>{v}{MINIMAX_NS}</{k}>" for k, v in params)
        return f'{w.open}\n{MINIMAX_NS}<invoke name="{name}">{body}{MINIMAX_NS}</invoke>\n{w.close}'
    return one_call(w, name, params)


@pytest.mark.parametrize("w", TYPED_WIRES, ids=lambda w: w.id)
def test_values_are_typed_through_refs_all_of_any_of_and_const(w: Wire) -> None:
    text = w.plain + raw_call(w, "refs", REF_WRITTEN)
    w.check(text, Expected(None, None, [("refs", json.dumps(REF_TYPED, ensure_ascii=False))]), w.request(tools=REF_TOOLS))


# ---- special tokens decoded with spaces between them (issue 23, rule 5) -------------------------
# vLLM's slow-tokenizer detokenizer and Hugging Face's ``decode`` with
# ``spaces_between_special_tokens`` join the text between added tokens and the tokens with one
# space.  Every family whose tool markers are single added tokens lists them
# (``ToolParser.spaced_tokens``) and parses that spelling; which tokens a family lists is
# checked against its vocabulary where the test data has one (the ratchet below), else taken
# from PROTOCOLS.md (Kimi-K2's documented ids; K2 Horizon's, InternLM's and IQuest's measured
# pieces; dots' bellwether pieces).  Kimi-K3 has its own handling (test_kimi_k3.py).  gpt-oss
# (Harmony, no wire here) does not parse a spaced decoding yet: its header reads no layout spaces.

# The families left out, and why: nobody has shown their markers to be single tokens here, or
# their blocks are not read by the shared mechanism.  A family added later must land in one list.
SPACED_NOT_APPLICABLE: dict[str, str] = {
    "pythonic": "<|python_start|> / <|python_end|> are Llama 4 tokens; no Llama 4 vocabulary here "
                "(in llama-3.2's they are plain text)",
    "seed-oss": "no Seed-OSS vocabulary; only its template's special-token list hints the tags are tokens",
    "mistral": "[TOOL_CALLS] / [ARGS] / [CALL_ID] are control tokens of sentencepiece / tekken vocabularies, "
               "decoded by mistral-common; the dialect has its own rule for whitespace after the marker (not decided)",
    "mistral-v13": "as mistral",
    "minimax-m3": "its namespace and tags are plain text in the only MiniMax vocabulary here (M2's); "
                  "the single-token claim for M3 is unverified",
    "hunyuan": "no Hunyuan vocabulary; the suffixed tags are single entries per vLLM / SGLang only (unverified)",
    "hy-v4": "as hunyuan",
    "inkling": "its block end and kind markers are read by the dialect and the router's framing, "
               "not by the shared block driver (not done)",
    "minicpm5": "no open tag (calls start bare) and the tags' single-token claim is unverified",
    "cohere-command": "no Command vocabulary; the <|...|> markers are special per vLLM only (unverified)",
    "apertus": "no Apertus vocabulary; the markers are special per vLLM only (unverified)",
    "lfm2": "no LFM2 vocabulary; the markers are special per vLLM only (unverified)",
    "gigachat3": "no GigaChat vocabulary; the markers are special per vLLM only (unverified)",
    "gigachat35": "no GigaChat 3.5 vocabulary; vLLM's test vocabulary (whole tags as tokens) is the only source",
    "zaya": "no ZAYA1 vocabulary; the wrapper tags are single tokens per third-party notes only",
    "iquest-coder-v2": "no IQuest-Coder V2 vocabulary (IQuest-Q1's measured ids do not cover its block tags)",
    "sarashina": "no Sarashina vocabulary; <|tool_calls|> is special per vLLM only (unverified)",
    "muse": "its block opens at the plain-text recipient ` to=`; the <|start|> / <|message|> framing around it "
            "is the reasoning parser's, which reads no spaced spelling (not done)",
}
OWN_SPACING = {"kimi-k3": "the dialect and its reasoning parser read spaced markers themselves (test_kimi_k3.py)"}
SPACED_WIRES = tuple(w for w in ALL_WIRES if ToolParserManager.get(w.tool_parser).spaced_tokens)
TWO_CALLS = [("f", '{"a": "x  y", "b": [1, 2]}'), ("g", "{}")]


def spaced_decoding(text: str, tokens: tuple[str, ...]) -> str:
    """``text`` as a detokenizer joining special tokens with spaces writes it."""
    pattern = "(" + "|".join(map(re.escape, sorted(tokens, key=len, reverse=True))) + ")"
    return " ".join(part for part in re.split(pattern, text) if part)


def spaced_tokens(w: Wire) -> tuple[str, ...]:
    return ToolParserManager.get(w.tool_parser).spaced_tokens


def test_every_family_is_spaced_tested_or_not_applicable_with_a_reason() -> None:
    tested = {w.id for w in SPACED_WIRES}
    for listed in (SPACED_NOT_APPLICABLE, OWN_SPACING):
        assert not tested & set(listed), "a family that lists its spaced tokens is tested"
        assert all(reason.strip() for reason in listed.values())
    assert tested | set(SPACED_NOT_APPLICABLE) | set(OWN_SPACING) == {w.id for w in ALL_WIRES}


def plain_calls(w: Wire, reply: str) -> list[tuple[str, str]]:
    """The calls of ``reply`` decoded without spaces (as the family converts them)."""
    calls = w.check(w.plain + reply, None)[2]
    assert len(calls) == 2
    return calls


@pytest.mark.parametrize("w", SPACED_WIRES, ids=lambda w: w.id)
def test_a_spaced_decoding_of_special_tokens_parses_as_the_plain_one(w: Wire) -> None:
    tokens = spaced_tokens(w)
    block = w.calls(*TWO_CALLS)
    text = w.plain + spaced_decoding("Sure." + block + "\nDone.", tokens)
    assert spaced_decoding(block, tokens) in text and spaced_decoding(block, tokens) != block
    # The space joined before a block's open token stays text (it cannot be told from the
    # text's own), and so does the template's separator before it (blocks back to back share
    # one joined space, the close token's layout); the space after a close token is layout.
    # DSML's tags start and end with plain ``<`` / ``>``: nothing is joined there.
    at_token = block.startswith(tokens)
    second = block != w.block(*TWO_CALLS) and w.template_layout and at_token and w.block_sep
    content = "Sure." + " " * at_token + (w.block_sep + " " if second else "") + "\nDone."
    w.check(text, Expected(content, None, plain_calls(w, "Sure." + block + "\nDone.")))


@pytest.mark.parametrize("w", SPACED_WIRES, ids=lambda w: w.id)
def test_a_spaced_decoding_of_two_blocks_and_a_text_space(w: Wire) -> None:
    tokens = spaced_tokens(w)
    reply = "Sure " + w.call("f", '{"a": 1}') + " " + w.call("g", "{}") + " Done."
    # Each of the text's own spaces stays, and a space joined before a block's open token; a
    # family with no template to read (``template_layout``) takes all whitespace between blocks.
    joins = 2 if w.call("g").startswith(tokens) else 0
    content = "Sure" + " " * (3 + joins - (2 if not w.template_layout else 0)) + "Done."
    w.check(w.plain + spaced_decoding(reply, tokens), Expected(content, None, plain_calls(w, reply)))


HF_WIRES = tuple((w, name) for w in ALL_WIRES for name in w.tokenizers[:1] if name in HF_TOKENIZERS)


@pytest.mark.parametrize(("w", "name"), HF_WIRES, ids=lambda v: getattr(v, "id", v))
def test_every_added_token_of_a_block_is_a_spaced_token(w: Wire, name: str) -> None:
    """The ratchet: a family whose block holds added tokens lists them, or says why not."""
    tok = load_hf_tokenizer(name)
    found = set(added_tokens_in(tok, w.calls(*TWO_CALLS)))
    if w.id in SPACED_NOT_APPLICABLE:
        return
    missing = found - set(spaced_tokens(w))
    assert not missing, f"{w.id}: added tokens of {name} not in spaced_tokens: {sorted(missing)}"


@pytest.mark.parametrize(("w", "name"), [(w, n) for w, n in HF_WIRES if w in SPACED_WIRES],
                         ids=lambda v: getattr(v, "id", v))
def test_a_real_spaced_decoding_gives_the_calls_of_the_plain_one(w: Wire, name: str) -> None:
    tok = load_hf_tokenizer(name)
    reply = "Sure." + w.calls(*TWO_CALLS) + "\nDone."
    spaced = decode_with_spaces(tok, reply)
    if spaced == reply:
        pytest.skip(f"{name} (a stand-in vocabulary) has no added token in {w.id}'s block")
    plain = w.check(w.plain + reply, None)
    assert len(plain[2]) == 2
    content, reasoning, calls = w.check(w.plain + spaced, None)
    assert (calls, reasoning) == (plain[2], plain[1])
    assert (content or "").split() == (plain[0] or "").split()  # only layout spaces differ


# ---- whitespace around and between calls --------------------------------------------------------
# Each wire says what its family's template writes before a block after text (``lead``) and
# between blocks (``block_sep``); the rest is the model's own text.


@pytest.mark.parametrize("w", ALL_WIRES, ids=lambda w: w.id)
def test_whitespace_before_a_block_is_text_but_the_templates_lead(w: Wire) -> None:
    before = "Let me check. \n\n\n"
    w.check(w.plain + before + w.call("g", "{}"), Expected(w.before_block(before), None, [("g", "{}")]))


@pytest.mark.parametrize("whitespace", ["\n", "\n\n", " \n", "\n\n\n"], ids=repr)
@pytest.mark.parametrize("w", ALL_WIRES, ids=lambda w: w.id)
def test_whitespace_between_blocks_is_text_but_the_templates_separator(w: Wire, whitespace: str) -> None:
    text = w.plain + w.call("f", "{}") + whitespace + w.call("g", "{}")
    w.check(text, Expected(w.between_blocks(whitespace), None, [("f", "{}"), ("g", "{}")]))


@pytest.mark.parametrize("w", ALL_WIRES, ids=lambda w: w.id)
def test_the_templates_own_layout_is_all_syntax(w: Wire) -> None:
    text = w.plain + "Let me check." + w.lead + w.call("f", "{}") + w.block_sep + w.call("g", "{}")
    w.check(text, Expected("Let me check.", None, [("f", "{}"), ("g", "{}")]))


@pytest.mark.parametrize("after", ["\n", "\n\nDone.\n", " Done."], ids=repr)
@pytest.mark.parametrize("w", ALL_WIRES, ids=lambda w: w.id)
def test_whitespace_after_the_last_block_is_text(w: Wire, after: str) -> None:
    w.check(w.plain + w.call("g", "{}") + after, Expected(after, None, [("g", "{}")]))


@pytest.mark.parametrize("between", [";", " ; ", ";\n ", "\n;"], ids=repr)
@pytest.mark.parametrize("after", ["", "\n", " \n\nDone."], ids=repr)
def test_whitespace_after_a_separated_call_is_syntax_only_before_its_separator(between: str, after: str) -> None:
    """Llama 3's calls follow one another after ``;`` in one block with no close tag: the
    whitespace around a ``;`` is the block's, that after the last call is text."""
    text = "<|python_tag|>" + LLAMA3.inner("f", "{}") + between + LLAMA3.inner("g", "{}") + after
    LLAMA3.check(text, Expected(after or None, None, [("f", "{}"), ("g", "{}")]))


# The official templates themselves: a turn of text and two calls, rendered, parses back to
# exactly the text (no layout left at its end).  Nemotron 3 is left out: it writes a newline
# after every block, which stays text (it parses as the Qwen3-Coder dialect, whose template does not).
TEMPLATE_TURNS = [
    ("templates/Qwen-Qwen2.5-7B-Instruct.jinja", "qwen", None, "<|im_end|>"),
    ("templates/Qwen-Qwen3-0.6B.jinja", "qwen", "qwen3", "<|im_end|>"),
    ("templates/ibm-granite-granite-4.0.jinja", "granite4", None, "<|end_of_text|>"),
    ("templates/Qwen3-Coder.jinja", "qwen3coder", None, "<|im_end|>"),
    ("templates/Qwen3.5-4B.jinja", "qwen3.5", "qwen3.5", "<|im_end|>"),
    ("templates/StepFun3.5-Flash.jinja", "step3p5", "step3p5", "<|im_end|>"),
    ("templates/GLM-4.6.jinja", "glm45", "glm45", None),
    ("templates/GLM-4.7-Flash.jinja", "glm47", "glm45", None),
    ("templates/inclusionai-ling-3.0-flash.jinja", "ling3", "ling3", "<|role_end|>"),
    ("templates/MiniMax-M2.jinja", "minimax-m2", "minimax-m2", "[e~["),
]


@pytest.mark.parametrize("path,tool_parser,reasoning_parser,end", TEMPLATE_TURNS, ids=[t[0][10:-6] for t in TEMPLATE_TURNS])
def test_a_templates_turn_of_text_and_calls_parses_to_exactly_the_text(path, tool_parser, reasoning_parser, end):
    from .test_xml_templates import load_template, reply_of

    calls = [("get_weather", {"city": "Oslo", "days": 1}), ("now", {})]
    assistant = {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]}
    if reasoning_parser is not None:
        assistant["reasoning_content"] = "Plan."
    messages = [{"role": "user", "content": "Weather in Oslo?"}, assistant]
    reply = reply_of(load_template(path), messages, end)

    def make():
        return create_parser(tool_parser=tool_parser, reasoning_parser=reasoning_parser, request={"tools": TYPED_TOOLS})

    content, _, got = check_parse(make, reply, None)
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert (content or "").lstrip() == "Let me check."  # (what precedes it is the reasoning's layout)


# ---- a partial open marker at the end of the reply is text ---------------------------------------
# (issue 23 rule 3) A reply that ends with part of an open marker -- ``\n\n<｜DSML｜tool_`` --
# ended in text that was held only because a marker could have begun there: ``final``
# releases it to its channel, the template's lead with it.  No block opened, so nothing is
# ``dropped``.  (A block whose open marker was complete is a call cut off: test_truncated.py.)


def partial_ends(tag: str) -> list[int]:
    """Where to cut ``tag``: its first character, a few lengths between, all but its last."""
    return sorted({1, *range(2, len(tag) - 1, max(1, len(tag) // 5)), len(tag) - 1} - {0})


@pytest.mark.parametrize("w", ALL_WIRES, ids=lambda w: w.id)
def test_a_partial_open_marker_at_the_end_is_released_as_content(w: Wire) -> None:
    tag = (w.open or w.head).rstrip()
    for end in partial_ends(tag):
        text = "Let me check." + w.lead + tag[:end]
        w.check(w.plain + text, Expected(text, None, []))


@pytest.mark.parametrize("w", [w for w in ALL_WIRES if w.reasoning_parser], ids=lambda w: w.id)
def test_a_partial_open_marker_at_the_end_is_released_as_reasoning(w: Wire) -> None:
    tag = (w.open or w.head).rstrip()
    for end in partial_ends(tag):
        text = "Let me think." + w.lead + tag[:end]
        w.check(w.think_open + text, Expected(None, text, []))


# ---- Hunyuan's plain tags -------------------------------------------------------------------------
# (issue 23 rule 1) Hy3-preview writes the tags with no suffix (``<tool_calls>``,
# ``<tool_call>NAME<tool_sep>``, ``<arg_key>`` / ``<arg_value>``): vLLM's ``hy_v3`` without a
# ``token_suffix``.  They keep the whole contract as the suffixed form does: with no tokenizer
# (the default parser reads both forms), and with a plain vocabulary (Hy3-preview's; HY-V4's
# without ``<tool_sep>``), where the reasoning tags are plain too.


def contract_cases(wires: tuple[Wire, ...]) -> list[Any]:
    from .test_contract import CASES, applies

    return [pytest.param(w, case, id=f"{w.id}-{case.__name__}") for w in wires for case in CASES if applies(case, w)]


@pytest.mark.parametrize("w,case", contract_cases(HUNYUAN_PLAIN_WIRES))
def test_hunyuans_plain_tags_keep_the_contract(w: Wire, case: Any) -> None:
    text, expected, request = case(w)
    w.check(text, expected, request=request)


@pytest.mark.parametrize("w", HUNYUAN_PLAIN_WIRES, ids=lambda w: w.id)
def test_hunyuans_plain_tags_keep_the_layout_rules(w: Wire) -> None:
    test_the_templates_own_layout_is_all_syntax(w)
    test_whitespace_before_a_block_is_text_but_the_templates_lead(w)
    test_whitespace_after_the_last_block_is_text(w, "\n\nDone.\n")
    test_a_partial_open_marker_at_the_end_is_released_as_content(w)


def test_one_hunyuan_reply_may_mix_the_suffixed_and_the_plain_tags() -> None:
    """Without a tokenizer nothing says which form the checkpoint writes: each block is read
    with the tags its open tag carries."""
    w = HUNYUAN_PLAIN
    text = (w.plain + "a" + HUNYUAN.call("get_weather", WEATHER) + "b" + w.call("f", [("x", "1")]) + "c"
            + HUNYUAN.call("g", ()))
    w.check(text, Expected("abc", None, [("get_weather", WEATHER_ARGS), ("f", '{"x": "1"}'), ("g", "{}")]))


# ---- block-level recovery: one malformed call does not take its block with it -------------------
# (issue 23 rule 2) Inside a block whose calls are delimited -- each closes with a tag of its
# own, or is one element of a list -- a malformed call (an empty name, a stray body) is skipped
# to its delimiter and recorded in ``dropped`` with its markup; the calls around it still
# parse.  A block that holds no good call stays text, as prose that mentions a tag does.
# The families whose calls are delimited so, and the delimiter a stray body is written before:
CALL_CLOSE = {"qwen3coder": "</function>", "seed-oss": "</function>", "step3p5": "</function>", "step5": "</function>",
              "zaya": "</function>", "minimax-m2": "</invoke>", "dots": "</invoke>", "muse": "</atem:invoke>",
              "deepseek-v32": f"</{DSML}invoke>", "deepseek-v4": f"</{DSML}invoke>", "deepseek-v41": f"</{DSML} invoke>",
              "gigachat35": f"</{GCML}invoke>", "hunyuan": "</tool_call:opensource>", "hy-v4": "</tool_call:opensource>",
              "kimi-k3": "<|close|>call<|sep|>", "k2-horizon": "</ifm|tool_call>", "hunyuan-plain": "</tool_call>",
              "hunyuan-plain-vocabulary": "</tool_call>", "hy-v4-plain-vocabulary": "</tool_call>",
              "minimax-m3": f"{MINIMAX_NS}</invoke>", "pythonic": ")", "lfm2": ")"}
# Families that read a call whole at its delimiter (a Python call at its ``)``): a stray body makes
# the whole call invalid, so it is dropped with its source and the reason it is no call.
WHOLE_CALLS = {"pythonic": "not Python call syntax", "lfm2": "not Python call syntax"}
# Where a call with an empty name is well-formed syntax (JSON): it is a call to a name no tool
# has, dropped by the emitter like an unknown name (no markup to skip), and its neighbours parse.
# Llama 3's calls follow one another after ``;`` in one block.
NAMED_BY_JSON = {"qwen", "internlm", "ripple", "gigachat3", "inkling", "llama3", "kimi-k2", "deepseek-v3",
                 "deepseek-v31", "cohere-command", "apertus"}
# One call per block (the template writes a block, or a marker, per call): the calls around a
# malformed one are in blocks of their own and parse; its block holds no good call and stays text.
ONE_CALL_PER_BLOCK = {"glm45", "glm47", "ling3", "iquest", "iquest-coder-v2", "mistral", "mistral-v13", "gemma4",
                      "minicpm5"}
NOT_RECOVERING = {
    **{i: "one call per block: nothing around a malformed call to recover (ONE_CALL_PER_BLOCK)" for i in ONE_CALL_PER_BLOCK},
    **{i: "an empty name is well-formed JSON, dropped by name (NAMED_BY_JSON); a JSON stray body is rule 6's"
       for i in NAMED_BY_JSON},
    "sarashina": "a block proves itself by its first element (test_sarashina); a later malformed element is dropped",
}
RECOVERING = [w for w in (*ALL_WIRES, *HUNYUAN_PLAIN_WIRES) if w.id in CALL_CLOSE]
A1, A2 = '{"a": "1"}', '{"a": "2"}'


def test_every_wire_is_tested_for_recovery_or_says_why_not() -> None:
    ids = {w.id for w in ALL_WIRES}
    assert ids <= set(CALL_CLOSE) | set(NOT_RECOVERING), sorted(ids - set(CALL_CLOSE) - set(NOT_RECOVERING))
    assert not set(CALL_CLOSE) & set(NOT_RECOVERING)
    assert set(NOT_RECOVERING) <= ids and set(WHOLE_CALLS) <= set(CALL_CLOSE)


def check_recovered(w: Wire, text: str, calls: list[tuple[str, str]], skipped: list[str],
                    reason: str = MALFORMED_CALL) -> None:
    """``text`` parses to ``calls`` with no text, and ``dropped`` holds the ``skipped`` markup."""
    w.check(text, Expected(None, None, calls))
    parser = w.parser(w.request())
    parser.parse_complete(text)
    assert [(d.reason, (d.text or "").strip()) for d in parser.dropped] == [(reason, m.strip()) for m in skipped]


@pytest.mark.parametrize("w", RECOVERING, ids=lambda w: w.id)
def test_a_call_with_an_empty_name_is_dropped_between_good_ones(w: Wire) -> None:
    text = w.plain + w.block(("f", A1), ("", A2), ("g", "{}"))
    second = w.inner("", A2, 2) if isinstance(w, XtmlWire) else w.inner("", A2)  # (Kimi-K3 numbers its calls)
    check_recovered(w, text, [("f", w.arguments(A1)), ("g", "{}")], [second])


@pytest.mark.parametrize("w", RECOVERING, ids=lambda w: w.id)
def test_a_malformed_first_call_does_not_turn_the_block_into_text(w: Wire) -> None:
    text = w.plain + w.block(("", A2), ("g", A1))
    check_recovered(w, text, [("g", w.arguments(A1))], [w.inner("", A2)])


@pytest.mark.parametrize("w", RECOVERING, ids=lambda w: w.id)
def test_a_stray_body_in_a_call_is_dropped_and_the_next_call_parses(w: Wire) -> None:
    close = CALL_CLOSE[w.id]
    stray = "\nnot a parameter " + close
    text = w.plain + w.block(("f", A1), ("g", "{}")).replace(close, stray, 1)
    if w.id in WHOLE_CALLS:
        check_recovered(w, text, [("g", "{}")], [w.inner("f", A1).replace(close, stray, 1)], WHOLE_CALLS[w.id])
    else:
        check_recovered(w, text, [("f", w.arguments(A1)), ("g", "{}")], [stray])


@pytest.mark.parametrize("w", RECOVERING, ids=lambda w: w.id)
def test_a_block_of_malformed_calls_only_is_text(w: Wire) -> None:
    block = w.block(("", A2))
    w.check(w.plain + "ok " + block, Expected("ok " + block, None, []))


def json_block(w: Wire, *calls: tuple[str, str]) -> str:
    """One block of several calls: Llama 3's ``;``-separated envelopes after ``<|python_tag|>``."""
    if w is LLAMA3:
        return w.open + "; ".join(w.inner(n, a) for n, a in calls)
    return w.block(*calls)


@pytest.mark.parametrize("w", [w for w in ALL_WIRES if w.id in NAMED_BY_JSON], ids=lambda w: w.id)
def test_a_json_call_with_an_empty_name_is_dropped_by_name_and_its_neighbours_parse(w: Wire) -> None:
    for calls, good in [([("f", A1), ("", A2), ("g", "{}")], [("f", A1), ("g", "{}")]), ([("", A2), ("g", A1)], [("g", A1)])]:
        text = w.plain + json_block(w, *calls)
        w.check(text, Expected(None, None, good))
        parser = w.parser(w.request())
        parser.parse_complete(text)
        assert [d.name for d in parser.dropped] == [None]


@pytest.mark.parametrize("w", [w for w in ALL_WIRES if w.id in ONE_CALL_PER_BLOCK], ids=lambda w: w.id)
def test_a_malformed_call_in_a_block_of_its_own_is_text_and_its_neighbours_parse(w: Wire) -> None:
    text = w.plain + w.calls(("f", A1), ("", A2), ("g", "{}"))
    w.check(text, None)
    parser = w.parser(w.request())
    message = parser.parse_complete(text)
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [("f", w.arguments(A1)), ("g", "{}")]
    assert w.inner("", A2).strip() in (message.content or "") and not parser.dropped


# DeepSeek-V4 / V4.1 DSML: an invoke whose ``tool_calls`` wrapper is missing (an orphan) or
# misspelled, as vLLM's tests/parser/engine/test_deepseek_v4_malformed_recovery.py has them.
ORPHAN_WIRES = (V4, V41)


def weather_invoke(w: DsmlWire, name: str = "get_weather") -> str:
    return w.invoke(name, f'<{w.prefix}parameter name="city" string="true">Seoul</{w.prefix}parameter>\n').rstrip("\n")


@pytest.mark.parametrize("w", ORPHAN_WIRES, ids=lambda w: w.id)
def test_an_orphan_invoke_of_an_offered_tool_is_a_call(w: DsmlWire) -> None:
    calls = [("get_weather", '{"city": "Seoul"}')]
    w.check(w.plain + weather_invoke(w) + w.close, Expected(None, None, calls))  # the stray close is its syntax
    w.check(w.plain + "Checking.\n" + weather_invoke(w) + "\n" + w.close, Expected("Checking.\n", None, calls))


@pytest.mark.parametrize("misspelled", [f"<{DSML}toolcalls>", f"<{DSML}tool>"])
def test_a_misspelled_v4_wrapper_still_opens_the_block(misspelled: str) -> None:
    text = V4.plain + misspelled + "\n" + weather_invoke(V4) + "\n" + V4.close
    V4.check(text, Expected(None, None, [("get_weather", '{"city": "Seoul"}')]))


def test_v41_reads_the_older_block_name() -> None:
    text = V41.plain + f"<{DSML} tool_calls>\n" + weather_invoke(V41) + "\n" + V41.close
    V41.check(text, Expected(None, None, [("get_weather", '{"city": "Seoul"}')]))


@pytest.mark.parametrize("w", ORPHAN_WIRES, ids=lambda w: w.id)
def test_an_orphan_invoke_that_is_not_a_sure_call_stays_text(w: DsmlWire) -> None:
    orphan = weather_invoke(w) + w.close
    cases = [
        (weather_invoke(w, "not_declared") + w.close, w.request()),  # a tool not offered
        (orphan, w.request(tools=None)),  # no tools
        (orphan, w.request(tool_choice="none")),
        ("Docs quote " + weather_invoke(w)[:len(f'<{w.prefix}invoke name="get_wea')], w.request()),  # cut in its name
        (weather_invoke(w).removesuffix(f"</{w.prefix}invoke>"), w.request()),  # no </invoke>
    ]
    for text, request in cases:
        w.check(w.plain + text, Expected(text, None, []), request)


# ---- a malformed call never yields arguments that are not JSON (issue 23, rule 6) ------------------

def test_a_literal_call_broken_after_its_opener_keeps_json_arguments_and_drops_its_markup() -> None:
    """Gemma 4 (fuzz seed 72158): ``call:f(`` then ``{``: the arguments were ``{`` and the
    ``{`` came out in the content too."""
    from .support.wires import GEMMA4

    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": ["number", "null"]}}}}} for n in ("f", "g")]
    text = ('<think>plan</think>Sure.\n<|tool_call>call:f({c:null,a:<|"|></think><"q"><|"|>}<tool_call|>'
            '<|tool_call>call:g{}<tool_call|>\nDone.')
    make = lambda: create_parser(tool_parser="gemma4", reasoning_parser="default", request={"tools": tools})  # noqa: E731
    check_parse(make, text, Expected("Sure.\n\nDone.", "plan", [("f", "{}"), ("g", "{}")]), GEMMA4.chunkings(text))
    parser = make()
    parser.parse_complete(text)
    assert [(d.reason.split(":")[0], d.text) for d in parser.dropped] == [("malformed", '{c:null,a:<|"|></think><"q"><|"|>}')]
