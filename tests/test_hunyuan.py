"""Tencent Hunyuan Hy3 / HY-V4 (``hunyuan``, ``hy-v3``, ``hy-v4`` tool parser; ``hunyuan`` / ``hy-v4``
reasoning parsers).

The DESIGN §7 case table runs through tests/test_contract.py (``HUNYUAN`` in ALL_WIRES; no
Hunyuan tokenizer exists here, so chunkings are arbitrary and every token claim is
unverified); here: both wire layouts (Hy3's, from its template, and HY-V4's, from PROTOCOLS.md
alone), how values stream, malformed output, the ``reasoning_effort`` switch and the prompt's
tail, round trips through the official Hy3 template and hypothesis round trips.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import (Expected, arguments_after, check_chunkings, check_parse, decoded, random_chunks,
                             result_of)
from .support.turns import tool_call_conversation
from .support.wires import HUNYUAN, HY

SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "ratio": {"type": "number"}, "live": {"type": "boolean"},
    "opts": {"type": "object"}, "tags": {"type": "array"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
         *({"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
           for n in ("f", "g"))]


def parser(request=None, reasoning="hunyuan", prompt=None):
    return create_parser(tool_parser="hunyuan", reasoning_parser=reasoning,
                         request={"tools": TOOLS} if request is None else request, prompt=prompt)


def tag(name: str, closing: bool = False) -> str:
    return f"<{'/' if closing else ''}{name}{HY}>"


def v4_call(name: str, pairs: dict[str, str]) -> str:
    """HY-V4's layout (vLLM's structural tag): no separator, no newlines."""
    body = "".join(f"{tag('arg_key')}{k}{tag('arg_key', True)}{tag('arg_value')}{v}{tag('arg_value', True)}"
                   for k, v in pairs.items())
    return f"{tag('tool_call')}{name}{body}{tag('tool_call', True)}"


def v4_block(*calls: str) -> str:
    return tag("tool_calls") + "".join(calls) + tag("tool_calls", True)


WEATHER = ("get_weather", '{"city": "Rome", "days": 2}')
VARIANTS = [
    ("hy_v4_layout", v4_block(v4_call("get_weather", {"city": "Rome", "days": "2"}), v4_call("f", {})),
     Expected(None, None, [WEATHER, ("f", "{}")])),
    ("hy_v4_name_is_trimmed", v4_block(v4_call(" get_weather\n", {"city": "Rome", "days": "2"})),
     Expected(None, None, [WEATHER])),
    ("json_values_by_schema", HUNYUAN.call("get_weather", '{"opts": {"unit": "c"}, "tags": ["a"], "ratio": 2.5, '
                                                          '"live": true}'),
     Expected(None, None, [("get_weather", '{"opts": {"unit": "c"}, "tags": ["a"], "ratio": 2.5, "live": true}')])),
    pytest.param("value_closer_missing_ends_at_call", tag("tool_calls") + "\n" + tag("tool_call") + "f"
                 + tag("tool_sep") + "\n" + tag("arg_key") + "a" + tag("arg_key", True) + "\n" + tag("arg_value") + "x"
                 + tag("tool_call", True) + tag("tool_calls", True), Expected(None, None, [("f", '{"a": "x"}')]),
                 marks=pytest.mark.skip(reason="issue 13 item 5 rule 2 (an XML value ends at the enclosing close) "
                                               "is built into XmlToolParser on the i13-robust branch")),
    ("call_closer_missing_ends_at_block", tag("tool_calls") + tag("tool_call") + "f" + tag("tool_sep")
     + tag("tool_calls", True) + "ok", Expected("ok", None, [("f", "{}")])),
    ("prose_after_the_open_tag_is_text", tag("tool_calls") + "no calls here" + tag("tool_calls", True),
     Expected(tag("tool_calls") + "no calls here" + tag("tool_calls", True))),
    ("content_then_reasoning_then_call", "<think:opensource>hm</think:opensource>Sure." + HUNYUAN.call("f"),
     Expected("Sure.", "hm", [("f", "{}")])),
    ("unknown_name_dropped", HUNYUAN.calls(("zzz", "{}"), ("g", "{}")), Expected(None, None, [("g", "{}")])),
]


def _case(v):
    if hasattr(v, "marks"):  # a pytest.param (itself a tuple)
        return pytest.param(*v.values[1:], id=v.values[0], marks=v.marks)
    return pytest.param(*v[1:], id=v[0])


@pytest.mark.parametrize("text,expected", [_case(v) for v in VARIANTS])
def test_wire_variants(text, expected):
    check_parse(parser, text, expected)


@pytest.mark.parametrize("alias", ["hy-v3", "hy-v4"])
def test_aliases_are_the_same_dialect(alias):
    assert ToolParserManager.get(alias) is ToolParserManager.get("hunyuan")


def test_string_value_streams_as_it_grows():
    head = tag("tool_calls") + "\n" + tag("tool_call") + "get_weather" + tag("tool_sep") + "\n" + tag("arg_key") \
        + "city" + tag("arg_key", True) + "\n" + tag("arg_value")
    steps = arguments_after(parser(), [head, "Par", "is <b", "> <", "</arg_value" + HY[:3]])
    assert steps[1:4] == ['{"city": "Par', '{"city": "Paris <b', '{"city": "Paris <b> ']  # "<" may open the closer
    assert steps[4] == '{"city": "Paris <b> <'  # that "<" was text; the split closer after it is held


# ---- the reasoning switch ---------------------------------------------------------------------

@pytest.mark.parametrize("reasoning,kwargs,starts", [
    ("hunyuan", {}, False), ("hunyuan", {"reasoning_effort": "no_think"}, False),
    ("hunyuan", {"reasoning_effort": "low"}, True), ("hunyuan", {"reasoning_effort": "high"}, True),
    ("hunyuan", {"enable_thinking": True}, True), ("hy-v4", {}, True), ("hy-v4", {"reasoning_effort": "none"}, False),
])
def test_reasoning_effort_decides_the_start_without_a_prompt(reasoning, kwargs, starts):
    m = parser({"tools": TOOLS, "chat_template_kwargs": kwargs}, reasoning).parse_complete("a</think:opensource>b")
    assert (m.content, m.reasoning_content) == (("b", "a") if starts else ("a</think:opensource>b", None))


jinja2 = pytest.importorskip("jinja2")


def template():
    from .test_xml_templates import load_template

    return load_template("templates/tencent-Hy3.jinja")


@pytest.mark.parametrize("effort,starts", [(None, False), ("no_think", False), ("low", True), ("high", True)])
def test_the_generation_prompt_tail_decides_the_start(effort, starts):
    kwargs = {} if effort is None else {"reasoning_effort": effort}
    prompt = template().render(messages=[{"role": "user", "content": "Hi"}], tools=TOOLS, add_generation_prompt=True,
                               **kwargs)
    # hy-v4's own default (high) is overruled by what the prompt prefilled.
    m = parser({"tools": TOOLS}, "hy-v4", prompt=prompt).parse_complete("a</think:opensource>b")
    assert (m.content, m.reasoning_content) == (("b", "a") if starts else ("a</think:opensource>b", None))


# ---- round trips through the official template ----------------------------------------------

def reply_of(messages) -> str:
    """The assistant turn as the template writes it (after ``<｜hy_Assistant:opensource｜>``,
    up to ``<｜hy_eos:opensource｜>``)."""
    full = template().render(messages=messages, tools=TOOLS, add_generation_prompt=False)
    start = full.rindex("<｜hy_Assistant:opensource｜>") + len("<｜hy_Assistant:opensource｜>")
    return full[start:].split("<｜hy_eos:opensource｜>")[0]


SCENARIOS = {
    "typed_values": [("get_weather", {"city": 'Paris "FR" & <x>', "days": 3, "ratio": 2.5, "live": False,
                                      "opts": {"unit": "c", "deep": [1, {}]}, "tags": ["a", "b"]})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Rome"}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("get_weather", {"city": "a <b>\n</arg_key> <tool_call> {\"x\": 1} </think>"})],
}


@pytest.mark.parametrize("with_reasoning", [True, False])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario, with_reasoning):
    calls = SCENARIOS[scenario]
    reply = reply_of(tool_call_conversation(calls, with_reasoning))
    content, reasoning, got = check_parse(parser, reply, None)
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    # The template always writes a (maybe empty) think block before the content.
    assert (content, reasoning) == ("Let me check.", "The user wants weather." if with_reasoning else None)
    wire = ToolParserManager.get("hunyuan").render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert wire in reply  # render() writes what the template writes


# ---- hypothesis: adversarial strings round trip ---------------------------------------------

keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
HAZARDS = ["<", ">", "</", "\n", " ", '"', "{", "}", "\\", ":opensource>", "<arg_key>", "</arg_value>",
           "<tool_call>", "</think:opensource>", "<tool_sep" + HY]
def _json_string(text: str) -> bool:
    """``"x"`` written raw for an untyped parameter reads back as the JSON string ``x``, as in
    vLLM (untyped values try JSON first): the known ambiguity, not a round trip to test."""
    try:
        return isinstance(json.loads(text), str)
    except ValueError:
        return False


strings = st.lists(st.sampled_from(HAZARDS) | st.text(max_size=3), max_size=8).map("".join).filter(
    lambda s: "</arg_value" + HY not in s and not _json_string(s))
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"),
                max_size=20).map(
    lambda s: "«" + s if s else s)  # a lead no marker holds: the conservation check's matching cannot take
# a one-letter text from inside a tag name ("e" of "opensource") and report the tag's rest as lost


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["f", "g"]), st.dictionaries(keys, strings, max_size=4)), max_size=3),
       prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    pairs = [(n, json.dumps(a)) for n, a in calls]
    wire_text = HUNYUAN.calls(*pairs) if calls else ""
    assert wire_text == ToolParserManager.get("hunyuan").render(pairs)
    text = f"<think{HY}>{reasoning}</think{HY}>" + content + wire_text
    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    assert decoded(result_of(parser().parse_complete(text))) == want
    check_chunkings(parser, text, want, (list(text), random_chunks(text, random.Random(seed), 9)), decoded)


def test_required_tool_choice_is_refused_not_mis_constrained():
    """No call syntax (XGrammar has no suffixed style): constraints refuse with Unconstrainable (a clear 400 when serving)."""
    from lmparse.constrain import Unconstrainable, gbnf_for

    with pytest.raises(Unconstrainable):
        gbnf_for("hunyuan", TOOLS, "required")


# ---- issue 13: the checkpoint's suffix from its vocabulary ----------------------------------------

class FakeTokenizer:
    """A vocabulary only (no Hunyuan tokenizer file exists here): what ``get_vocab`` returns."""

    def __init__(self, suffix: str, tool_sep: bool = True) -> None:
        names = ["think", "tool_calls", "tool_call", "arg_key", "arg_value", *(["tool_sep"] if tool_sep else [])]
        tags = [f"<{n}{suffix}>" for n in names] + [f"</{n}{suffix}>" for n in names if n != "tool_sep"]
        words = ["hello", "<", ">", "<tool_call>", "<think>x", "<|im_end|>", "city", f"<｜hy_eos{suffix}｜>"]
        self.vocab = {t: i for i, t in enumerate([*words, *tags])}

    def get_vocab(self) -> dict[str, int]:
        return self.vocab


def suffixed(text: str, suffix: str) -> str:
    return text.replace(HY, suffix)


@pytest.mark.parametrize("suffix", [":6124c78e", ""], ids=["checkpoint_suffix", "preview_no_suffix"])
@pytest.mark.parametrize("tool_sep", [True, False], ids=["hy_v3", "hy_v4"])
def test_the_suffix_comes_from_the_vocabulary(suffix, tool_sep):
    tok = FakeTokenizer(suffix, tool_sep)
    make = lambda: create_parser(tool_parser="hunyuan", reasoning_parser="hunyuan", tokenizer=tok,  # noqa: E731
                                 request={"tools": TOOLS, "chat_template_kwargs": {"reasoning_effort": "high"}})
    layout = HUNYUAN.block(WEATHER) if tool_sep else v4_block(v4_call("get_weather", {"city": "Rome", "days": "2"}))
    text = suffixed(f"plan</think{HY}>Sure." + layout, suffix)
    check_parse(make, text, Expected("Sure.", "plan", [WEATHER]))


def test_the_default_suffix_stays_text_under_another_vocabulary():
    tok = FakeTokenizer(":6124c78e")
    p = create_parser(tool_parser="hunyuan", tokenizer=tok, request={"tools": TOOLS})
    text = HUNYUAN.block(WEATHER)
    assert (p.parse_complete(text).content, p.parse_complete(text).tool_calls) == (text, [])


@pytest.mark.parametrize("tool_sep,v4", [(True, False), (False, True)])
def test_the_layout_is_hy_v3_iff_the_vocabulary_has_tool_sep(tool_sep, v4):
    from lmparse.tools.dialects.hunyuan import HunyuanToolParser, detect_vocab

    found = detect_vocab(FakeTokenizer(":abc", tool_sep).get_vocab())
    assert found is not None and (found.suffix, found.v4) == (":abc", v4)
    cls = HunyuanToolParser.for_tokenizer(FakeTokenizer(":abc", tool_sep))
    rendered = cls.render([("f", '{"a": 1}')])
    assert ("<tool_sep:abc>" in rendered, "\n" in rendered) == (not v4, not v4)
    assert cls.tool_open_tags == ("<tool_calls:abc>", "<tool_calls>")  # the plain form is read too


def test_hy_v4_vocabulary_defaults_to_high_effort():
    """vLLM's ``hy_v4`` assumes ``high`` when the request names no effort; Hy3's template ``no_think``."""
    for tool_sep, reasoning in ((True, None), (False, "plan")):
        p = create_parser(tool_parser="hunyuan", reasoning_parser="hunyuan", tokenizer=FakeTokenizer(":s", tool_sep),
                          request={"tools": TOOLS})
        assert p.parse_complete("plan</think:s>ok").reasoning_content == reasoning


def test_a_vocabulary_without_hunyuan_tags_keeps_the_default():
    class Other:
        def get_vocab(self):
            return {"<think>": 1, "</think>": 2, "hello": 3}

    p = create_parser(tool_parser="hunyuan", tokenizer=Other(), request={"tools": TOOLS})
    assert p.parse_complete(HUNYUAN.block(WEATHER)).tool_calls[0].function.name == "get_weather"


def test_the_vocabulary_is_scanned_once_per_tokenizer():
    tok = FakeTokenizer(":x")
    calls = []
    real = tok.get_vocab
    tok.get_vocab = lambda: calls.append(1) or real()
    for _ in range(3):
        create_parser(tool_parser="hunyuan", reasoning_parser="hunyuan", tokenizer=tok, request={"tools": TOOLS})
    assert len(calls) == 1


def test_serve_model_dir_reads_the_suffix_from_tokenizer_config(tmp_path):
    """``lmparse serve --model DIR``: the added tokens of the directory's tokenizer_config.json
    reach the parsers (a Qwen3 tokenizer.json stands in: none exists for Hunyuan)."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("httpx")
    pytest.importorskip("jinja2")
    from lmparse.request import normalize_request
    from lmparse.serve.app import upstream_binding
    from lmparse.serve.families import get_family

    from .support.model_dir import qwen3_model_dir

    model = qwen3_model_dir(tmp_path, chat_template="{{ messages[0].content }}")
    path = model / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    added = {str(200000 + i): {"content": t, "special": True} for i, t in enumerate(FakeTokenizer(":6124c78e").vocab)}
    path.write_text(json.dumps({**config, "added_tokens_decoder": added}), encoding="utf-8")
    binding = upstream_binding(get_family("hunyuan"), "vllm", "http://unused", model_dir=model)
    p = binding.new_parser(normalize_request({"tools": TOOLS}))
    m = p.parse_complete(suffixed(HUNYUAN.block(WEATHER), ":6124c78e"))
    assert [(c.function.name, c.function.arguments) for c in m.tool_calls] == [WEATHER]
