"""No super-linear work on request or model text: each reader of such text, on 1 MB of its worst input.

Each case builds the same pathological shape at 64 KB and at 1 MB and compares the CPU
time (``time.process_time``, best of a few runs, garbage collection off) per input
character: 16 times the input may cost at most ``SLACK`` times 16 the work.  Quadratic
work is 16 times over that bound; a backtracking regex far more.  No absolute time is
asserted.  The audit, and what changed:

=================================================  ==========================================  =================================
where                                              what reads client or model text             verdict
=================================================  ==========================================  =================================
engines/answer.py ``user_pairs`` (``_PAIR``)       ``name=value`` pairs in the user's words    linear since the lookbehind fix
engines/answer.py ``user_words``                   injected ``<system-reminder>`` blocks       linear: each find starts past the last
engines/answer.py ``_named_tools``                 offered tool names in the message           CHANGED: a regex search per name was
                                                                                               tools x text; now one pass over the
                                                                                               word runs with a set lookup
engines/answer.py ``decide`` echo                  the reply quotes the user's words           CHANGED: ``" ".join(text.split())``
                                                                                               built the quote whole (a list of
                                                                                               every word); now ``Squeezed`` writes
                                                                                               it a window at a time
engines/answer.py ``_REPEAT``, ``_NESTED_HINT``    instructions in the message                 linear (literal after a lookbehind)
engines/simulated.py stop sequences                ``request.stop`` in the reply               CHANGED: whole-text ``find`` became
                                                                                               ``StopScan``: a bounded held tail
tokenizer.py ``windows`` / ``stream``              the reply, tokenized as it streams          NEW: bounded windows; a text with no
                                                                                               word start is cut at ``WINDOW``
tokenizer.py ``PseudoTokenizer``                   markers and short pieces                    linear: bounded alternatives
templates.py ``render_chatml``                     messages and their calls                    CHANGED: a string grown call by call
                                                                                               is now one list joined once
templates.py ``_later_system_as_user`` & co        the conversation                            linear: runs joined once
validate.py ``joined_text``, ``stop_list`` & co    content parts, stops, arguments JSON        linear
content.py ``openai_text`` / ``anthropic_text``    parts, data URLs, nested blocks             linear (nesting bounded at 16)
responses/custom_input.py ``CustomInput``          a custom tool's streamed input              linear; the opening is re-read at most
                                                                                               until 4096 characters (bounded)
anthropic.py ``_SERVER_BLOCK`` / ``_HOSTED_TOOL``  block and tool type strings                 linear (one anchored try)
openai/anthropic/responses ``parse_request``       whole requests, 16 000 messages             linear
models.py ``ModelNames``                           the requested model name                    names over 256 characters match none
cli.py ``_run_parse``                              a transcript, whole or in chunks            linear (the parsers' own guarantee)
engines/sse.py ``SSELineDecoder``                  an upstream engine's bytes                  CHANGED: a line that never ended was
                                                                                               re-split with each read; now only new
                                                                                               text is split (and 32 Mi chars end it)
=================================================  ==========================================  =================================
"""

from __future__ import annotations

import argparse
import gc
import io
import time
from collections.abc import Callable

import pytest

pytest.importorskip("jinja2")

from lmparse.request import ParserRequest, normalize_request  # noqa: E402
from lmparse.serve import anthropic, content, openai, templates, validate  # noqa: E402
from lmparse.serve.engines import answer  # noqa: E402
from lmparse.serve.engines.base import GenerationRequest  # noqa: E402
from lmparse.serve.responses.custom_input import CustomInput  # noqa: E402
from lmparse.serve.signing import Signer  # noqa: E402
from lmparse.serve.tokenizer import PseudoTokenizer  # noqa: E402

SMALL, LARGE = 64 << 10, 1 << 20
SLACK = 4  # per-character cost may grow this much from 64 KB to 1 MB (caches, noise)

Thunk = Callable[[], object]
CASES: dict[str, Callable[[int], Thunk]] = {}


def case(build: Callable[[int], Thunk]) -> Callable[[int], Thunk]:
    CASES[build.__name__] = build
    return build


def cpu(thunk: Thunk, repeat: int, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(repeat):
            thunk()
        best = min(best, time.process_time() - started)
    return best


def request(text: str, tools: list[dict] | None = None) -> GenerationRequest:
    parsed = normalize_request({"tools": tools}) if tools else ParserRequest.accept_all()
    return GenerationRequest([{"role": "user", "content": text}], tools or [], parsed)


# ---- the simulated model ---------------------------------------------------------------


@case
def pairs_in_a_word_and_unclosed_quotes(n: int) -> Thunk:
    text = "a" * (n // 2) + ' a="' * (n // 8)
    return lambda: answer.user_pairs(text)


@case
def reminder_openers_without_closers(n: int) -> Thunk:
    text = "<system-reminder>" * (n // 34) + "<system-reminder>x</system-reminder>" * (n // 72) + "hi"
    return lambda: answer.user_words(text)


@case
def many_tools_and_a_long_message(n: int) -> Thunk:
    # Both grow with the request: one regex search per name was their product.
    names = [f"tool_{i}" for i in range(n // 512)]
    text = "a.b.c.d.e.f.g " * (n // 28) + "tool_x " * (n // 14) + names[-1]
    return lambda: answer._named_tools(text, names)


@case
def a_long_echo_repeated(n: int) -> Thunk:
    req = request(("word  \n" * (n // 14)) + "repeat=2")

    def go() -> int:
        reply = answer.decide(req, False, "m")
        return sum(map(len, reply.content_pieces()))

    return go


@case
def a_huge_argument_value(n: int) -> Thunk:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "array"}}}}}]
    req = request("get_weather city=" + "x" * (n // 2) + " days=" + "1," * (n // 4), tools)
    return lambda: answer.decide(req, True, "m")


# ---- streaming the reply -------------------------------------------------------------------


@case
def stop_sequences_that_almost_match(n: int) -> Thunk:
    from lmparse.serve.engines.simulated import StopScan

    pieces = ["a" * 4096] * (n // 4096)
    stops = ["a" * 99 + "b", "ab", "b" * 5]
    return lambda: sum(map(len, StopScan(stops).scan(pieces)))


@case
def one_word_with_no_place_to_cut(n: int) -> Thunk:
    tok = PseudoTokenizer("t", ["<tool_call>"])
    pieces = ["a" * 1000] * (n // 2000) + [" " * 1000] * (n // 2000)
    return lambda: sum(1 for _ in tok.stream(pieces))


# ---- request text: validation, content, templates -------------------------------------------------


@case
def many_text_parts(n: int) -> Thunk:
    parts = [{"type": "text", "text": "abcd"}] * (n // 16)
    return lambda: validate.joined_text(parts, "messages[0].content", "part")


@case
def content_parts_and_data_urls(n: int) -> Thunk:
    url = "data:" + ";" * (n // 4) + "image/png;base64," + "A" * (n // 4)
    parts = [{"type": "text", "text": "x" * 30}, {"type": "image_url", "image_url": {"url": "data:a,b"}}] * (n // 128)
    parts.append({"type": "image_url", "image_url": {"url": url}})
    return lambda: content.openai_text(parts, "messages[0].content")


@case
def nested_anthropic_blocks(n: int) -> Thunk:
    leaf = {"type": "search_result", "title": "t", "source": "s",
            "content": [{"type": "text", "text": "y" * 20}] * 4}
    blocks = [leaf, {"type": "text", "text": "z" * 40}] * (n // 256)
    return lambda: content.anthropic_text(blocks, "messages[0].content")


@case
def many_calls_in_one_message(n: int) -> Thunk:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
             for i in range(n // 48)]
    messages = [{"role": "user", "content": "x" * (n // 4)}, {"role": "assistant", "content": "", "tool_calls": calls}]
    return lambda: templates.render_chatml(messages, None)


@case
def system_turns_everywhere(n: int) -> Thunk:
    messages = [{"role": "system" if i % 3 else "user", "content": "abc" * 4} for i in range(n // 32)]
    return lambda: templates._template_message(templates._later_system_as_user(messages)[-1])


@case
def a_custom_input_of_escapes(n: int) -> Thunk:
    body = '{"input": "' + "\\n\\u00e9ab" * (n // 10) + '"}'
    fragments = [body[i:i + 7] for i in range(0, len(body), 7)]

    def go() -> int:
        reader = CustomInput()
        return sum(len(reader.feed(f)) for f in fragments)

    return go


@case
def a_custom_input_that_never_starts(n: int) -> Thunk:
    body = '{"' + "k" * n
    fragments = [body[i:i + 16] for i in range(0, len(body), 16)]

    def go() -> None:
        reader = CustomInput()
        for f in fragments:
            reader.feed(f)

    return go


@case
def block_and_tool_type_names(n: int) -> Thunk:
    kinds = ["a_" * (n // 4) + "tool_resul", "x" * (n // 2)]
    return lambda: [(anthropic._SERVER_BLOCK.match(k), anthropic._HOSTED_TOOL.match(k)) for k in kinds]


# ---- whole requests ------------------------------------------------------------------------------------


def conversation(n: int) -> list[dict]:
    turns = []
    for i in range(n // 64):
        turns.append({"role": "user" if i % 2 == 0 else "assistant", "content": "hello there " * 3})
    turns.append({"role": "user", "content": "and now?"})
    return turns


@case
def openai_request_of_many_messages(n: int) -> Thunk:
    body = {"model": "m", "messages": conversation(n), "stop": ["x"] * 4}
    return lambda: openai.parse_request(body, "m", "reasoning_content")


@case
def anthropic_request_of_many_messages(n: int) -> Thunk:
    body = {"model": "m", "max_tokens": 10, "messages": conversation(n)}
    signer = Signer("k")
    return lambda: anthropic.parse_request(body, "m", signer)


@case
def responses_request_of_many_items(n: int) -> Thunk:
    from lmparse.serve.responses.request import parse_request

    body = {"model": "m", "input": [{"type": "message", "role": m["role"], "content": m["content"]}
                                    for m in conversation(n)]}
    signer = Signer("k")
    return lambda: parse_request(body, "m", signer, None)


# ---- upstream engine bytes --------------------------------------------------------------------------


@case
def sse_line_that_arrives_a_few_bytes_at_a_time(n: int) -> Thunk:
    from lmparse.serve.engines.sse import SSELineDecoder

    line = b'data: {"choices": [{"text": "' + b"x" * n + b'"}]}\n\n'
    reads = [line[i:i + 64] for i in range(0, len(line), 64)]

    def go() -> None:
        decoder = SSELineDecoder()
        events = [e for read in reads for e in decoder.decode(read)]
        assert len(events) == 1

    return go


# ---- the CLI -------------------------------------------------------------------------------------------


@case
def cli_parse_of_a_hostile_transcript(n: int) -> Thunk:
    from lmparse.cli import _run_parse

    text = "<think>" + "<tool_call" * (n // 40) + "</think>" + '<tool_call>\n{"name": "f", "arguments": {"a": "' + \
        "<" * (n // 4) + '"}}\n</tool_call>' + "x" * (n // 4)
    streamed = argparse.Namespace(tool_parser="hermes", reasoning_parser="qwen3", response_parser="default",
                                  stream=True, chunk_size=64)
    whole = argparse.Namespace(**{**vars(streamed), "stream": False})

    def go() -> None:
        _run_parse(text, streamed, None, io.StringIO())
        _run_parse(text, whole, None, io.StringIO())

    return go


# ---- the check, over every case above --------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_a_megabyte_of_the_worst_input_costs_linear_work(name):
    build = CASES[name]
    small, large = build(SMALL), build(LARGE)
    gc.collect()
    gc.disable()
    try:
        small_cost = cpu(small, LARGE // SMALL)  # as many characters as one large run
        large_cost = cpu(large, 1)
    finally:
        gc.enable()
    assert large_cost <= SLACK * small_cost, (name, small_cost, large_cost)
