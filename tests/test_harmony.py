"""The gpt-oss (Harmony) response parser.

Every case runs on both input paths and they must agree: real o200k_harmony token ids
(one token per chunk, 3 and 7 per chunk, the whole reply at once) through
openai-harmony's StreamableParser, and the text with literal markers through the shared
stream validator (whole, per character, seeded random chunkings, real token boundaries).
Streamed and complete parses are equal everywhere, and every stream passes the invariants.
"""

from __future__ import annotations

import functools
import io
import json
import os
import sys
from contextlib import redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("openai_harmony", reason="openai-harmony is not installed (pip install -e '.[dev]')")

from lmparse import create_parser  # noqa: E402
from lmparse.cli import main as cli_main  # noqa: E402
from lmparse.response import harmony  # noqa: E402
from lmparse.response.harmony import HarmonyResponseParser, parse_header, render_reply  # noqa: E402

from .support.harmony import feed_tokens, harmony_vocab_dir, token_stream  # noqa: E402
from .support.stream import Expected, check_invariants, check_parse, feed, folded  # noqa: E402
from .support import tokenizers as tokenizer_data  # noqa: E402


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


REQUEST = {"tools": [tool("get_weather"), tool("bash"), tool("f")]}
WEATHER = '{"city": "Paris"}'
LS = '{"command": "ls -la"}'


@pytest.fixture(scope="module")
def encoding():
    directory = harmony_vocab_dir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_ENCODINGS_BASE", str(directory))
        yield harmony.load_encoding()


def make(request=REQUEST):
    return lambda: create_parser(response_parser="gpt-oss", request=request)


def check_tokens(make_parser, encoding, text: str, expected: Expected | None) -> tuple:
    """The token path, every chunk size; returns the folded result (equal for all)."""
    ids, texts = token_stream(encoding, text)
    complete = make_parser().parse_complete(text, ids)
    reference = (
        complete.content,
        complete.reasoning_content,
        [(tc.function.name, tc.function.arguments) for tc in complete.tool_calls],
    )
    if expected is not None:
        assert reference == expected.as_tuple(), f"token parse of {text!r}"
    for size in (1, 3, 7, len(ids) or 1):
        deltas = feed_tokens(make_parser(), ids, texts, size)
        check_invariants(deltas)
        assert folded(deltas) == reference, f"{size} tokens per chunk of {text!r}"
    return reference


def check_both(text: str, expected: Expected, encoding, request=REQUEST) -> None:
    """Text path (the shared validator, real token boundaries too) and token path agree."""
    ids, texts = token_stream(encoding, text)
    assert check_parse(make(request), text, expected, {"tokens:o200k_harmony": texts}) == expected.as_tuple()
    check_tokens(make(request), encoding, text, expected)


def analysis(text: str) -> tuple[str, str]:
    return ("analysis", text)


def call(name: str, args: str) -> tuple[str, str, str]:
    return ("call", name, args)


def final(text: str) -> tuple[str, str]:
    return ("final", text)


# ---- the scenarios, on rendered replies (template and model header styles) -----------

RENDERED = [
    ("reasoning_only", [analysis("The user says hi. Be polite.")], Expected(None, "The user says hi. Be polite.")),
    (
        "reasoning_then_final",
        [analysis("Simple greeting."), final("Hello! How can I help you today?")],
        Expected("Hello! How can I help you today?", "Simple greeting."),
    ),
    (
        "reasoning_call_reasoning_call",
        [analysis("Need the weather."), call("get_weather", WEATHER), analysis("Now list files."), call("bash", LS)],
        Expected(None, "Need the weather.Now list files.", [("get_weather", WEATHER), ("bash", LS)]),
    ),
    ("call_first_recipient_before_channel", [call("bash", LS)], Expected(None, None, [("bash", LS)])),
    (
        "commentary_preamble_is_content",
        [analysis("Plan."), ("commentary", "Let me check the weather."), call("get_weather", WEATHER)],
        Expected("Let me check the weather.", "Plan.", [("get_weather", WEATHER)]),
    ),
    ("empty_arguments", [call("f", "{}")], Expected(None, None, [("f", "{}")])),
    (
        "multi_token_characters",
        [analysis("用户问天气 🌦️, naïve café"), final("巴黎今天晴 ☀️ — 22 °C")],
        Expected("巴黎今天晴 ☀️ — 22 °C", "用户问天气 🌦️, naïve café"),
    ),
    (
        "pretty_printed_arguments",
        [call("get_weather", '{\n  "city": "Paris",\n  "days": [1, 2]\n}'), final("Done.")],
        Expected("Done.", None, [("get_weather", '{\n  "city": "Paris",\n  "days": [1, 2]\n}')]),
    ),
]


@pytest.mark.parametrize("header", ["template", "model"])
@pytest.mark.parametrize("parts,expected", [c[1:] for c in RENDERED], ids=[c[0] for c in RENDERED])
def test_rendered_reply_parses_back(parts, expected, header, encoding):
    check_both(render_reply(parts, header), expected, encoding)


# ---- replies written by hand: dirty, filtered, truncated, malformed ----------------------------

RAW = [
    (
        "dirty_recipient_second_channel",
        '<|channel|>analysis<|message|>Need ls.<|end|><|start|>assistant<|channel|>commentary to=functions.bash'
        '<|channel|>commentary<|message|>{"command":"ls"}<|call|>',
        Expected(None, "Need ls.", [("bash", '{"command":"ls"}')]),
    ),
    (
        "dirty_recipient_with_constrain",
        "<|channel|>commentary to=functions.bash<|channel|>commentary <|constrain|>json<|message|>"
        '{"command":"ls"}<|call|>',
        Expected(None, None, [("bash", '{"command":"ls"}')]),
    ),
    (
        "constrain_without_space",
        '<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>' + WEATHER + "<|call|>",
        Expected(None, None, [("get_weather", WEATHER)]),
    ),
    (
        "call_on_the_analysis_channel",
        "<|channel|>analysis to=functions.bash<|constrain|>json<|message|>" + LS + "<|call|>",
        Expected(None, None, [("bash", LS)]),
    ),
    (
        "call_without_channel",
        "<|channel|>analysis<|message|>r<|end|><|start|>assistant to=functions.f<|message|>{}<|call|>",
        Expected(None, "r", [("f", "{}")]),
    ),
    (
        "empty_body_call_gets_empty_object",
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|><|call|>",
        Expected(None, None, [("f", "{}")]),
    ),
    (
        "builtin_tool_recipient_is_dropped",  # issue 13 item 5: not reasoning; recorded in ``dropped``
        "<|channel|>analysis to=python<|message|>print(2 + 2)<|call|>"
        "<|start|>assistant<|channel|>final<|message|>4<|return|>",
        Expected("4", None),
    ),
    (
        "final_with_a_recipient_is_content",
        "<|channel|>final to=functions.f<|message|>Hi.<|return|>",
        Expected("Hi.", None),
    ),
    (
        "unknown_tool_dropped_dense_index",
        '<|channel|>commentary to=functions.delete_everything <|constrain|>json<|message|>{"really": true}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        + WEATHER
        + "<|call|>",
        Expected(None, None, [("get_weather", WEATHER)]),
    ),
    (
        "truncated_mid_arguments",
        "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather"
        ' <|constrain|>json<|message|>{"city": "Pa',
        # closed as a JSON object by ``"}`` (issue 23 rule 6; was kept unclosed)
        Expected(None, "Weather.", [("get_weather", '{"city": "Pa"}')]),
    ),
    (
        "truncated_after_call_header",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        Expected(None, None, [("get_weather", "{}")]),
    ),
    (
        "truncated_mid_final",
        "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>Hel",
        Expected("Hel", "a"),
    ),
    (
        "truncated_mid_header_is_dropped",  # issue 10 item 8: a cut header is syntax, never content
        "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>commentary to=functions.get_wea",
        Expected(None, "r"),
    ),
    ("final_ended_by_end", "<|channel|>final<|message|>Bye.<|end|>", Expected("Bye.", None)),
    ("echoed_start_assistant", "<|start|>assistant<|channel|>final<|message|>Hi<|return|>", Expected("Hi", None)),
    ("plain_text_without_markers", "Just plain text, no Harmony.", Expected("Just plain text, no Harmony.", None)),
    ("empty_header", "<|message|>hi<|end|>", Expected("hi", None)),
    ("text_after_return_is_content", "<|channel|>final<|message|>A<|return|>B", Expected("AB", None)),
    (
        "start_inside_a_body_ends_it",
        "<|channel|>analysis<|message|>think<|start|>assistant<|channel|>final<|message|>ans<|return|>",
        Expected("ans", "think"),
    ),
    (
        "channel_inside_a_body_starts_a_message",
        "<|channel|>analysis<|message|>think<|channel|>final<|message|>ans",
        Expected("ans", "think"),
    ),
    (
        "missing_start_between_messages",
        "<|channel|>analysis<|message|>think<|end|><|channel|>final<|message|>ans<|return|>",
        Expected("ans", "think"),
    ),
    (
        "unknown_role_header_is_content",
        "<|channel|>analysis<|message|>r<|end|><|start|>assistantto=functions.bash<|channel|>commentary<|message|>"
        '{"command":"ls"}<|call|>',
        Expected('assistantto=functions.bash<|channel|>commentary{"command":"ls"}', "r"),
    ),
    (
        "leftover_header_words_are_content",
        "<|start|>assistant<|channel|>commentary to=functions.f json extra<|message|>body<|end|>",
        Expected("assistant<|channel|>commentary to=functions.f json extrabody", None),
    ),
    ("stop_inside_a_header", "<|channel|>final<|end|>Hi", Expected("<|channel|>finalHi", None)),
    (
        "message_and_constrain_in_a_body_are_text",
        "<|channel|>final<|message|>a<|message|>b<|constrain|>c<|return|>",
        Expected("a<|message|>b<|constrain|>c", None),
    ),
    ("space_before_first_header", " <|channel|>final<|message|>x<|return|>", Expected(" x", None)),
    ("to_prefix_that_is_prose", " tomorrow<|channel|>final<|message|>x<|return|>", Expected(" tomorrowx", None)),
    ("stray_stops_are_syntax", "<|end|><|call|><|channel|>final<|message|>x<|return|><|end|>", Expected("x", None)),
]


@pytest.mark.parametrize("text,expected", [c[1:] for c in RAW], ids=[c[0] for c in RAW])
def test_raw_reply(text, expected, encoding):
    check_both(text, expected, encoding)


def test_unknown_tool_is_recorded_as_dropped(encoding):
    text = dict((c[0], c[1]) for c in RAW)["unknown_tool_dropped_dense_index"]
    for parser, ids in ((make()(), None), (make()(), token_stream(encoding, text)[0])):
        parser.parse_complete(text, ids)
        assert [(d.name, d.reason) for d in parser.dropped] == [("delete_everything", "not among the request's tools")]


def test_named_tool_choice_filters_other_calls(encoding):
    text = render_reply([call("get_weather", WEATHER), call("bash", LS)])
    request = {**REQUEST, "tool_choice": {"type": "function", "function": {"name": "bash"}}}
    check_both(text, Expected(None, None, [("bash", LS)]), encoding, request)


@pytest.mark.parametrize(
    "request_",
    [{"tools": [tool("get_weather")], "tool_choice": "none"}, {}],
    ids=["tool_choice_none", "no_tools"],
)
def test_disabled_tools_keep_the_arguments_as_text(request_, encoding):
    """With tool_choice none (or no tools) nothing becomes a call; the body stays visible as
    text of its channel and the suppressed call is recorded."""
    text = render_reply([analysis("Hmm."), call("get_weather", WEATHER), final("It is sunny.")])
    check_both(text, Expected(WEATHER + "It is sunny.", "Hmm."), encoding, request_)
    parser = make(request_)()
    parser.parse_complete(text)
    assert [d.name for d in parser.dropped] == ["get_weather"]


def test_no_request_accepts_every_name(encoding):
    text = render_reply([call("anything_at_all", "{}")])
    check_both(text, Expected(None, None, [("anything_at_all", "{}")]), encoding, None)


# ---- deltas: identity first, one delta per channel run within a chunk ------------------------


def test_one_chunk_gives_one_delta_per_channel_run(encoding):
    text = render_reply([analysis("a"), call("get_weather", WEATHER), analysis("b"), call("bash", LS), final("c")])
    for ids in (None, token_stream(encoding, text)[0]):
        deltas = make()().stream_chunk(text, ids, final=True)
        shape = [next(k for k, v in d.to_dict().items()) for d, _ in deltas]
        assert shape == ["reasoning_content", "tool_calls", "reasoning_content", "tool_calls", "content"]
        first = deltas[1][0].tool_calls[0]
        identity = (first.index, first.type, first.function.name, first.function.arguments)
        assert identity == (0, "function", "get_weather", WEATHER)
        assert first.id.startswith("call_")


def test_identity_is_sent_when_the_header_completes(encoding):
    text = render_reply([call("get_weather", WEATHER)], "model")
    ids, texts = token_stream(encoding, text)
    parser = make()()
    message_at = ids.index(harmony.MARKER_IDS["<|message|>"])
    streamed = [parser.stream_chunk(texts[i], [ids[i]]) for i in range(message_at + 1)]
    assert all(not d for d in streamed[:-1])
    (delta, has_tools), = streamed[-1]
    function = delta.tool_calls[0].function
    assert has_tools and function.name == "get_weather" and function.arguments is None


# ---- what the parser exposes while it streams: state, held characters ------------------------

CALL_PREFIX = "<|channel|>analysis<|message|>Go.<|end|><|start|>assistant<|channel|>commentary to=functions.bash"


def stream_prefix(parser, encoding, text: str, by_tokens: bool) -> None:
    if by_tokens:
        ids, texts = token_stream(encoding, text)
        for token, token_text in zip(ids, texts, strict=True):
            parser.stream_chunk(token_text, [token])
    else:
        parser.stream_chunk(text)


@pytest.mark.parametrize("by_tokens", [False, True], ids=["text", "tokens"])
def test_state_follows_the_framing(encoding, by_tokens):
    source = "tokens" if by_tokens else "text"
    parser = make()()
    assert parser.state == (None, harmony.Framing.OPENING, None, None)
    stream_prefix(parser, encoding, "<|channel|>analysis<|message|>Th", by_tokens)
    assert parser.state == (source, harmony.Framing.BODY, "analysis", None)
    parser = make()()
    stream_prefix(parser, encoding, CALL_PREFIX, by_tokens)
    assert parser.state == (source, harmony.Framing.HEADER, None, None)
    stream_prefix(parser, encoding, " <|constrain|>json<|message|>{", by_tokens)
    assert parser.state == (source, harmony.Framing.BODY, "commentary", "functions.bash")
    stream_prefix(parser, encoding, "}<|call|>", by_tokens)
    assert parser.state == (source, harmony.Framing.BETWEEN, None, None)


@pytest.mark.parametrize("by_tokens", [False, True], ids=["text", "tokens"])
def test_held_chars_counts_an_unfinished_header(encoding, by_tokens):
    parser = make()()
    stream_prefix(parser, encoding, CALL_PREFIX, by_tokens)
    assert parser.held_chars == len("assistant<|channel|>commentary to=functions.bash")
    stream_prefix(parser, encoding, "<|message|>{}", by_tokens)
    assert parser.held_chars == 0


def test_held_chars_counts_a_partial_marker_and_a_possible_recipient(encoding):
    parser = make()()
    parser.stream_chunk("<|channel|>final<|message|>Hi <|ret")
    assert parser.held_chars == len("<|ret")
    parser = make()()
    parser.stream_chunk(" t", token_stream(encoding, " t")[0])  # may still become ` to=functions.NAME`
    assert parser.held_chars == 2
    assert parser.stream_chunk("", [], final=True)[0][0].content == " t" and parser.held_chars == 0


# ---- reasoning tokens -----------------------------------------------------------------------


def test_reasoning_tokens_count_analysis_bodies(encoding):
    r1, r2 = "Need the weather in Paris.", "Then list the files."
    text = render_reply([analysis(r1), call("get_weather", WEATHER), analysis(r2), final("Done.")])
    ids, texts = token_stream(encoding, text)
    expected = len(encoding.encode(r1)) + len(encoding.encode(r2))
    for size in (1, 3, len(ids)):
        parser = make()()
        feed_tokens(parser, ids, texts, size)
        assert parser.reasoning_tokens == expected
    assert make()().parse_complete(text, ids).reasoning_tokens == expected


def test_no_token_ids_means_no_reasoning_count():
    assert make()().parse_complete(render_reply([analysis("x")])).reasoning_tokens is None


# ---- the encoding is resolved at creation; the text path needs no vocabulary -------------------


def vocabulary_missing():
    raise RuntimeError("error downloading or loading vocab file")


def test_text_path_needs_no_encoding(monkeypatch):
    monkeypatch.setattr(harmony, "load_encoding", vocabulary_missing)
    text = render_reply([analysis("r"), call("bash", LS), final("ok")])
    check_parse(make(), text, Expected("ok", "r", [("bash", LS)]))


def test_unloadable_encoding_makes_a_text_only_parser_at_creation(monkeypatch, encoding):
    text = render_reply([analysis("r"), call("bash", LS)])
    ids = token_stream(encoding, text)[0]
    monkeypatch.setattr(harmony, "load_encoding", vocabulary_missing)
    parser = make()()
    assert parser.encoding is None  # decided here, before any token id arrives
    assert folded(parser.stream_chunk(text, ids, final=True)) == (None, "r", [("bash", LS)])
    assert parser.reasoning_tokens is None
    assert parser.state.source == "text"


def test_without_a_configured_vocabulary_the_parser_is_text_only_and_downloads_nothing(monkeypatch):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    never = functools.lru_cache(maxsize=1)(lambda: pytest.fail("tried to load, and maybe download, the vocabulary"))
    monkeypatch.setattr(harmony.tokens, "load_encoding", never)  # and nothing loaded it yet
    monkeypatch.setattr(harmony, "load_encoding", never)
    parser = make()()
    assert parser.encoding is None
    text = render_reply([final("ok")])
    assert folded(parser.stream_chunk(text, [1, 2, 3], final=True)) == ("ok", None, [])


def test_encoding_passed_as_tokenizer_is_used(monkeypatch, encoding):
    monkeypatch.setattr(harmony, "load_encoding", lambda: pytest.fail("loaded the encoding although one was given"))
    text = render_reply([analysis("r"), final("ok")])
    parser = create_parser(response_parser="gpt-oss", tokenizer=encoding)
    assert parser.encoding is encoding
    assert parser.parse_complete(text, token_stream(encoding, text)[0]).reasoning_tokens == 1


def test_reply_cut_inside_a_character_keeps_its_bytes_as_replacement(encoding):
    ids = token_stream(encoding, "<|channel|>final<|message|>ok 𝔘")[0][:-1]  # 𝔘 is three tokens
    results = set()
    for size in (1, 2, len(ids)):
        deltas = feed_tokens(make()(), ids, [""] * len(ids), size)
        check_invariants(deltas)
        content, reasoning, calls = folded(deltas)
        results.add(content)
    assert len(results) == 1
    content = results.pop()
    assert content.startswith("ok ") and content[3:] and set(content[3:]) == {"\ufffd"}


def test_token_ids_are_the_source_of_truth_once_given(encoding):
    text = render_reply([final("Hi")])
    ids = token_stream(encoding, text)[0]
    parser = make()()
    out = parser.stream_chunk(text, ids) + parser.stream_chunk("Hi", None, final=True)  # a detokenizer's late flush
    assert folded(out) == ("Hi", None, [])


@pytest.mark.pure_only("it hides openai_harmony, which a compiled module bound at import")
def test_missing_openai_harmony_names_the_package_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai_harmony", None)
    with pytest.raises(ImportError, match=r"pip install openai-harmony"):
        create_parser(response_parser="gpt-oss")


# ---- bad token sequences never raise, and both paths agree on them -----------------------------

PIECES = list(harmony.MARKER_IDS) + [
    "assistant", " to=functions.bash", " to=functions.", "to=python", "commentary", "analysis", "final", " json",
    " ", "\n", "hello", '{"a": 1}', "é", "🌦️", "user", "functions.f", "<|", "|>",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.integers(1, 5))
def test_any_marker_sequence_parses_the_same_on_both_paths(encoding, pieces, size):
    text = "".join(pieces)
    ids, texts = token_stream(encoding, text)
    parser = make(None)()
    deltas = feed_tokens(parser, ids, texts, size)
    check_invariants(deltas)
    by_tokens = folded(deltas)
    assert by_tokens == folded(make(None)().stream_chunk(text, ids, final=True))
    text_parser = make(None)()
    assert folded(feed(text_parser, texts)) == by_tokens, text
    assert [d.name for d in text_parser.dropped] == [d.name for d in parser.dropped]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 200_100), max_size=40), st.integers(1, 4))
def test_arbitrary_token_ids_never_raise(encoding, ids, size):
    # Ordinary tokens, the special range, and ids past the vocabulary.
    ids = [i if i < 200_000 else 200_000 + i % 19 if i < 200_090 else 250_000 + i for i in ids]
    parser = make(None)()
    out = []
    for i in range(0, max(len(ids), 1), size):
        out.extend(parser.stream_chunk("", ids[i : i + size], final=i + size >= len(ids)))
    check_invariants(out)


# ---- the header grammar mirrors openai-harmony's --------------------------------------------

HEADERS = [
    "", "assistant", "<|channel|>final", "assistant<|channel|>final", "user<|channel|>final", "system", "tool",
    "Assistant<|channel|>final", "bogus", "bogus<|channel|>x", "functions.bash to=assistant<|channel|>commentary",
    "assistant<|channel|>", "assistant<|channel|> final", "assistant<|channel|>final<|channel|>analysis",
    "assistant a b c", "<|channel|>commentary to=functions.x json extra", "assistant x", "assistant <|constrain|>json",
    "<|channel|>commentary to=functions.x<|constrain|>json", "to=functions.x",
    " to=functions.x<|channel|>commentary json",
    "assistant\n<|channel|>final", "assistant\u00a0x y", "<|channel|>analysis\u3000to=functions.f", "x\x1cy z",
    "<|channel|>commentary to=functions.bash<|channel|>commentary <|constrain|>json",
]
HEADER_WORDS = [
    "assistant", "user", "tool", "to=", "functions.", "f", " ", "  ", "\n", "\t", "<|channel|>", "<|constrain|>",
    "json", "commentary", "analysis", "final", "\u00a0", "\x1c", "<", "|", "=", "x",
]


def harmony_header(encoding, header: str, role_known: bool):
    import openai_harmony as h

    parser = h.StreamableParser(encoding, role=h.Role.ASSISTANT if role_known else None)
    try:
        if not role_known:
            parser.process(harmony.MARKER_IDS["<|start|>"])
        for token in encoding.encode(header, allowed_special="all"):
            parser.process(token)
        parser.process(harmony.MARKER_IDS["<|message|>"])
    except h.HarmonyError:
        return None
    return parser.current_channel, parser.current_recipient


@pytest.mark.parametrize("role_known", [True, False])
@pytest.mark.parametrize("header", HEADERS)
def test_parse_header_agrees_with_openai_harmony(encoding, header, role_known):
    assert parse_header(header, role_known) == harmony_header(encoding, header, role_known)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(HEADER_WORDS), max_size=12), st.booleans())
def test_parse_header_agrees_with_openai_harmony_on_generated_headers(encoding, words, role_known):
    header = "".join(words)
    assert parse_header(header, role_known) == harmony_header(encoding, header, role_known)


@pytest.mark.parametrize(
    "recipient,name",
    [("functions.bash", "bash"), ("functions.bash<|channel|>commentary", "bash"), ("functions.", ""),
     ("python", None), ("browser.search", None), (None, None), ("functions.ns.tool", "ns.tool")],
)
def test_function_name_sanitizes_recipients(recipient, name):
    assert harmony.function_name(recipient) == name


# ---- the renderer matches the official chat template ---------------------------------------


def template_completion(messages: list[dict]) -> str:
    """What the official gpt-oss template renders for the last (assistant) message, minus
    the generation prompt ``<|start|>assistant`` it shares with the prompt."""
    jinja2 = pytest.importorskip("jinja2")
    root = tokenizer_data.testdata_dir()
    path = root / "templates" / "openai-gpt-oss-120b.jinja" if root else None
    if path is None or not path.is_file():
        pytest.skip("gpt-oss chat template is missing from the test data")

    def raise_exception(message):
        raise jinja2.TemplateError(message)

    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    # transformers' chat-template environment: tojson without key sorting or HTML escaping.
    env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)
    env.globals.update(raise_exception=raise_exception, strftime_now=lambda fmt: "2026-01-01")
    template = env.from_string(path.read_text())
    prompt = template.render(messages=messages[:-1], add_generation_prompt=True)
    full = template.render(messages=messages, add_generation_prompt=False)
    assert full.startswith(prompt) and prompt.endswith("<|start|>assistant")
    return full[len(prompt) :]


USER = {"role": "user", "content": "Weather in Paris?"}


def test_renderer_matches_the_template_for_a_tool_call_turn(encoding):
    args = {"city": "Paris", "unit": "celsius"}
    assistant = {"role": "assistant", "thinking": "Call the weather tool.",
                 "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": args}}]}
    completion = template_completion([USER, assistant])
    args_json = json.dumps(args, ensure_ascii=False)
    assert completion == HarmonyResponseParser.render("Call the weather tool.", [("get_weather", args_json)])
    check_both(completion, Expected(None, "Call the weather tool.", [("get_weather", args_json)]), encoding)


def test_renderer_matches_the_template_for_a_final_turn(encoding):
    assistant = {"role": "assistant", "thinking": "Easy.", "content": "It is sunny in Paris."}
    completion = template_completion([USER, assistant])
    assert completion == HarmonyResponseParser.render("Easy.", content="It is sunny in Paris.")
    check_both(completion, Expected("It is sunny in Paris.", "Easy."), encoding)


def test_renderer_rejects_unknown_parts():
    with pytest.raises(ValueError, match="unknown Harmony part"):
        render_reply([("thinking", "x")])
    with pytest.raises(ValueError, match="header must be"):
        render_reply([], header="fancy")


# ---- the command line -----------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli_main(list(argv))
    return status, out.getvalue()


def test_cli_parses_a_harmony_transcript(tmp_path):
    transcript = tmp_path / "reply.txt"
    reply = render_reply([analysis("Check weather."), call("get_weather", WEATHER)], "model")
    transcript.write_text(reply, encoding="utf-8")
    status, out = run_cli("parse", "--response-parser", "gpt-oss", str(transcript))
    assert status == 0
    message = json.loads(out)
    assert message["reasoning_content"] == "Check weather."
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
    assert calls == [("get_weather", WEATHER)]


def test_cli_streams_a_harmony_transcript_and_filters_by_tools(tmp_path):
    transcript = tmp_path / "reply.txt"
    reply = render_reply([call("rm_rf", "{}"), call("get_weather", WEATHER), final("Sunny.")])
    transcript.write_text(reply, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([tool("get_weather")]))
    status, out = run_cli(
        "parse", "--response-parser", "gpt-oss", "--tools", str(tools), "--stream", "--chunk-size", "5", str(transcript)
    )
    assert status == 0
    deltas = [json.loads(line) for line in out.splitlines()]
    assert deltas[0]["tool_calls"][0]["function"]["name"] == "get_weather" and deltas[0]["tool_calls"][0]["index"] == 0
    assert "".join(d.get("content", "") for d in deltas) == "Sunny."


@pytest.mark.pure_only("it hides openai_harmony, which a compiled module bound at import")
def test_cli_reports_a_missing_openai_harmony(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "openai_harmony", None)
    transcript = tmp_path / "reply.txt"
    transcript.write_text("<|channel|>final<|message|>x<|return|>")
    assert cli_main(["parse", "--response-parser", "gpt-oss", str(transcript)]) == 2
    assert "pip install openai-harmony" in capsys.readouterr().err


def test_registered_without_importing_openai_harmony():
    import subprocess

    code = (
        "import sys; sys.modules['openai_harmony'] = None; import lmparse; "
        "print('gpt-oss' in lmparse.ResponseParserManager)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert result.stdout.strip() == "True", result.stderr


# ---- built-in tool recipients (issue 13 item 5) ------------------------------------------------

BUILTIN_MESSAGES = [
    ("python", "analysis", "print(2 + 2)"),
    ("browser.search", "analysis", '{"query": "weather Paris"}'),
    ("container.exec", "commentary", '{"cmd": ["ls"]}'),
]


@pytest.mark.parametrize("recipient,channel,body", BUILTIN_MESSAGES, ids=[m[0] for m in BUILTIN_MESSAGES])
def test_builtin_recipient_not_offered_is_dropped_with_its_text(recipient, channel, body, encoding):
    text = (f"<|channel|>analysis<|message|>Let me run it.<|end|><|start|>assistant<|channel|>{channel} "
            f"to={recipient} code<|message|>{body}<|call|><|start|>assistant<|channel|>final<|message|>4<|return|>")
    check_both(text, Expected("4", "Let me run it."), encoding)
    ids = token_stream(encoding, text)[0]
    for parser, token_ids in ((make()(), None), (make()(), ids)):
        parser.parse_complete(text, token_ids)
        assert [(d.name, d.text) for d in parser.dropped] == [(recipient, body)]


@pytest.mark.parametrize("recipient,channel,body", BUILTIN_MESSAGES, ids=[m[0] for m in BUILTIN_MESSAGES])
def test_builtin_recipient_offered_as_a_tool_stays_a_call(recipient, channel, body, encoding):
    text = f"<|channel|>{channel} to={recipient} code<|message|>{body}<|call|>"
    check_both(text, Expected(None, None, [(recipient, body)]), encoding, {"tools": [tool(recipient)]})


def test_builtin_python_body_is_code_not_json_arguments(encoding):
    """gpt-oss's ``python`` takes code: its body is the call's payload as written, outside the
    JSON guard of issue 23 rule 6 (which would make ``print(`` an empty object), cut off or not."""
    request = {"tools": [tool("python")]}
    text = "<|channel|>analysis to=python code<|message|>print(2 +"
    check_both(text, Expected(None, None, [("python", "print(2 +")]), encoding, request)
    parser = make(request)()
    parser.parse_complete(text)
    assert parser.dropped == []
