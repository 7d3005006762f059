"""The simulated engine streams a long answer without holding it: memory is what is in flight.

The engine used to render the whole reply, tokenize it and build every step and logprob
before the first byte (+38 MB for a 512 KB answer, +375 MB for a 2.3 MB echo).  Now the
reply is written, searched for stop sequences and tokenized a bounded window at a time
(``tokenizer.windows``), and the streaming adapters keep no copy of what they sent.

What still holds an answer whole, by design: a non-streaming response (it returns it),
the Responses API (its ``response.completed`` event and the response store carry the
output), and an Anthropic thinking block (its signature covers the whole text).  The
gpt-oss parser's bound is tested apart (tests/test_harmony_memory.py).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import random
import tracemalloc

import pytest

pytest.importorskip("orjson")
pytest.importorskip("starlette")

from lmparse.serve import anthropic, openai  # noqa: E402
from lmparse.serve.app import simulated_binding  # noqa: E402
from lmparse.serve.bindings import _family_markers  # noqa: E402
from lmparse.serve.engines import simulated  # noqa: E402
from lmparse.serve.engines.base import GenerationRequest  # noqa: E402
from lmparse.serve.families import FAMILIES, needs_model_template  # noqa: E402
from lmparse.serve.runner import ChatRunner  # noqa: E402
from lmparse.serve.signing import Signer  # noqa: E402
from lmparse.serve.tokenizer import RealTokenizer, load_tokenizer  # noqa: E402
from lmparse.request import ParserRequest  # noqa: E402

from .support.server import LiveServer  # noqa: E402

WINDOW = 4096  # lmparse.serve.tokenizer.WINDOW: characters tokenized at a time
SENTENCE = "the quick brown fox jumps over the lazy dog, twice: "  # 52 characters


@functools.cache
def binding_for(name: str):
    return simulated_binding(FAMILIES[name])


def streamed_peak(binding, api: str, answer_chars: int) -> tuple[int, int]:
    """Peak traced allocation of one streamed request whose echo is about ``answer_chars``
    long (``repeat=N``), from the engine's start to the last byte; and the bytes sent."""
    body = {"messages": [{"role": "user", "content": SENTENCE + f"repeat={answer_chars // len(SENTENCE)}"}],
            "stream": True}
    if api == "anthropic":
        request, opts = anthropic.parse_request({**body, "max_tokens": 1 << 20}, binding.name, Signer("k"))
        module = anthropic
    else:
        request, opts = openai.parse_request(body, binding.name, "reasoning_content")
        module = openai

    async def go() -> int:
        runner = ChatRunner(binding.engine.start(request), binding.new_parser(request.parser_request))
        sent = 0
        async for chunk in module.stream_response(runner, opts):
            sent += len(chunk)
        return sent

    gc.collect()
    tracemalloc.start()
    try:
        sent = asyncio.run(go())
        return tracemalloc.get_traced_memory()[1], sent
    finally:
        tracemalloc.stop()


# qwen3: the real tokenizer when the test data is at hand; kimi-k2: the pseudo-tokenizer.
# Each case streams about 300 000 tokens under tracemalloc (some 25 s): two cases only.
@pytest.mark.parametrize("api, family", [("openai", "qwen3"), ("anthropic", "kimi-k2")])
def test_a_streamed_answer_eight_times_longer_needs_less_than_twice_the_memory(family, api):
    binding = binding_for(family)
    small_peak, small_sent = streamed_peak(binding, api, 128 << 10)
    large_peak, large_sent = streamed_peak(binding, api, 1 << 20)
    assert large_sent > 6 * small_sent > 6 * (128 << 10)  # the answers really are that long
    assert large_peak < 2 * small_peak, (small_peak, large_peak)


def family_tokenizers() -> list:
    seen: dict[str, object] = {}
    for name, family in FAMILIES.items():
        if needs_model_template(family):
            continue  # beam: no simulated engine (tests/test_response_template_serve.py)
        key = family.tokenizer or f"pseudo:{name}"
        seen.setdefault(key, pytest.param(name, id=key))
    return list(seen.values())


def mixed_text(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    words = ["hello", "Paris", "naïve", "日本語のテキスト", "x=1;", "don't", "it's", "  spaced", "\n\n", "\t",
             "<tool_call>", "</think>", "<|im_end|>", "<|channel|>", "12345", "café", "—", "😀", "a.b.c",
             '{"k": [1, 2]}', "\n- item", "def f(x):\n    return x\n", "'quoted'", "   ", "\r\n"]
    parts, n = [], 0
    while n < size:
        part = rng.choice(words) + rng.choice([" ", "", "\n", ", "])
        parts.append(part)
        n += len(part)
    return "".join(parts)


def pieces_of(text: str, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        size = rng.choice([1, 7, 100, 4096, 9000])
        out.append(text[at:at + size])
        at += size
    return out


@pytest.mark.parametrize("family", family_tokenizers())
def test_streamed_tokens_are_the_ones_one_whole_encoding_gives(family):
    tok = load_tokenizer(FAMILIES[family].tokenizer, family, _family_markers(FAMILIES[family]))
    text = mixed_text(12 * WINDOW)
    steps = list(tok.stream(pieces_of(text)))
    assert "".join(piece for piece, _, _ in steps) == text
    if isinstance(tok, RealTokenizer):
        assert [token_id for _, token_id, _ in steps] == tok._encode(text)
    else:
        assert [piece for piece, _, _ in steps] == tok._pieces(text)


@pytest.mark.parametrize("family", ["qwen3", "gpt-oss", "kimi-k2"])
@pytest.mark.parametrize("unit", ["a", "日本", " ", "\n", "😀"])
def test_text_without_a_word_start_streams_exactly_and_its_ids_decode_to_it(family, unit):
    tok = load_tokenizer(FAMILIES[family].tokenizer, family, _family_markers(FAMILIES[family]))
    text = "start " + unit * (3 * WINDOW) + " end"
    steps = list(tok.stream([text]))
    assert "".join(piece for piece, _, _ in steps) == text
    if isinstance(tok, RealTokenizer):
        assert tok._decode([token_id for _, token_id, _ in steps]) == text


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64])
def test_the_squeezed_echo_is_the_whitespace_join_at_any_window(size):
    from lmparse.serve.engines.answer import Squeezed

    rng = random.Random(size)
    for _ in range(200):
        text = "".join(rng.choice(["a", "bc", " ", "  ", "\n", "\t\u3000", "é"]) for _ in range(rng.randrange(30)))
        times = rng.randrange(1, 4)
        expected = " ".join([" ".join(text.split())] * times)
        assert "".join(Squeezed(text, times).pieces(size)) == expected


def whole_text_stop(text: str, stops: list[str]) -> tuple[str, str | None]:
    """What a search of the whole reply decides (the engine's former rule)."""
    hits = [(text.find(s), s) for s in stops if s and s in text]
    if not hits:
        return text, None
    at, stop = min(hits)
    return text[:at], stop


def test_stop_scan_cuts_where_a_whole_text_search_cuts(monkeypatch):
    monkeypatch.setattr(simulated, "PIECE", 5)
    rng = random.Random(11)
    for _ in range(2000):
        text = "".join(rng.choice("abc") for _ in range(rng.randrange(60)))
        stops = ["".join(rng.choice("abc") for _ in range(rng.randrange(1, 9))) for _ in range(rng.randrange(4))]
        scan = simulated.StopScan(stops + [""])
        got = "".join(scan.scan(pieces_of(text, rng.randrange(100))))
        assert (got, scan.found) == whole_text_stop(text, stops), (text, stops)


def engine_reply(binding, text: str, **limits) -> tuple[str, list[int], str, str | None]:
    request = GenerationRequest([{"role": "user", "content": text}], [], ParserRequest.accept_all(), **limits)

    async def go():
        return [chunk async for chunk in binding.engine.start(request)]

    chunks = asyncio.run(go())
    ids = [i for c in chunks for i in c.token_ids]
    return "".join(c.text for c in chunks), ids, chunks[-1].finish_reason, chunks[-1].stop_sequence


@pytest.mark.parametrize("family", ["qwen3", "kimi-k2"])
def test_stop_and_max_tokens_cut_a_long_streamed_reply_as_the_whole_reply_would(family):
    binding = binding_for(family)
    words = " ".join(f"w{i}" for i in range(20000)) + " MARK and the rest"
    whole = binding.engine.reply_text(GenerationRequest([{"role": "user", "content": words}], [],
                                                        ParserRequest.accept_all()))
    steps = binding.engine.tokenizer.steps(whole[:whole.index("MARK")])
    text, ids, finish, stop = engine_reply(binding, words, stop=["MARK", "zzz"])
    assert (text, ids, finish, stop) == ("".join(s[0] for s in steps), [s[1] for s in steps], "stop", "MARK")
    text, ids, finish, stop = engine_reply(binding, words, max_tokens=len(steps) - 3)
    assert (ids, finish, stop) == ([s[1] for s in steps[:-3]], "length", None)
    assert text == "".join(s[0] for s in steps[:-3])


# ---- through the real server: peak RSS of the process, which the tokenizers library's own
# (Rust) allocations count in; tracemalloc sees only Python's.


def _rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in kB: the resident size now, and its peak since the last reset."""
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status", encoding="ascii"))
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def echo_peak_kb(chars: int) -> tuple[int, int]:
    """A fresh ``lmparse serve --family qwen3`` answers one streamed request whose message (and so
    its echoed answer) is ``chars`` long: how far the server's peak RSS rose above its RSS
    before the request (after a small request warmed it), and the answer's streamed bytes."""
    import httpx

    server = LiveServer(["--family", "qwen3", "--token-rate", "0"])
    try:
        pid = server.proc.pid
        url = server.url + "/v1/chat/completions"

        def stream(content: str) -> int:
            body = {"model": "qwen3", "stream": True, "messages": [{"role": "user", "content": content}]}
            with httpx.stream("POST", url, json=body, timeout=120) as response:
                assert response.status_code == 200
                return sum(len(chunk) for chunk in response.iter_bytes())

        stream("hello there")
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as f:
            f.write("5")  # VmHWM := VmRSS
        before, _ = _rss_kb(pid)
        sent = stream((SENTENCE * (chars // len(SENTENCE) + 1))[:chars])
        _, peak = _rss_kb(pid)
        return peak - before, sent
    finally:
        server.stop()


def test_the_server_echoing_a_four_times_longer_answer_needs_less_than_twice_the_memory():
    """A 512 KB echo once raised the server's peak RSS by 95 MB (25 MB for 128 KB): the
    prompt's token count encoded the whole prompt at once inside the tokenizers library.  Counted
    a window at a time, what grows with the message is only its few copies (the body, the
    prompt, the echo's words)."""
    if not load_tokenizer("qwen3", "qwen3").real or not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs the qwen3 tokenizer test data and Linux's /proc/PID/clear_refs")
    small, small_sent = echo_peak_kb(128 << 10)
    large, large_sent = echo_peak_kb(512 << 10)
    assert large_sent > 3 * small_sent > 3 * (128 << 10)  # the answers really are that long
    assert large < 2 * small, (small, large)
    # Each further character of message costs a few bytes (its copies), not the ~180 one whole
    # encoding of the prompt held.
    assert large - small < 8 * (384 << 10) // 1024, (small, large)


@pytest.mark.parametrize("family", [p for p in family_tokenizers() if FAMILIES[p.values[0]].tokenizer])
def test_a_long_prompt_is_counted_as_one_whole_encoding_counts_it(family):
    """RealTokenizer.count cuts a long text into windows: the count stays the whole encoding's."""
    tok = binding_for(family).engine.tokenizer
    if not isinstance(tok, RealTokenizer):
        pytest.skip(f"{family}: pseudo-tokenizer (no test data)")
    text = "<|im_start|>user\n" + mixed_text(6 * WINDOW) + "<|im_end|>\n"
    assert tok.count(text) == len(tok._encode(text))
