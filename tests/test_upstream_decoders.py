"""Each upstream engine's decoder on recorded event lines, without a server.

The recordings (tests/support/upstream.py) are the byte strings each engine sends (ECOSYSTEM.md §3.6) for a canned
Qwen3 reply (reasoning, then a tool call) cut at the real tokenizer's token boundaries
with the real token ids.  They are fed through ``SSELineDecoder`` one byte at a time, in
seeded random pieces and with CRLF line ends, then to the engine's decoder: the text it
forwards is the reply, the ids are the engine's, the finish reason and the engine's own
prompt count come through, and what each engine keeps (SGLang's stop string and EOS) is
trimmed.  ``test_serve_upstream`` serves the same recordings to the whole server.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("orjson")

from lmparse.serve.engines.decoders import UpstreamError, UpstreamRefusal, refusal  # noqa: E402
from lmparse.families import get_family as family_named  # noqa: E402
from lmparse.serve.engines.sse import SSELineDecoder  # noqa: E402

from .support.upstream import (CACHED, CUTS, DECODERS, ENGINE_OF, ENGINES, EOS_ID, EOS_IN_IDS, EOS_TEXT,  # noqa: E402
                               OVERFLOW_REASON, PROMPT_IDS, REFUSALS, REPLY, TOKENIZER, decoded, events_of,
                               recorded, request, steps)


@pytest.mark.parametrize("how", CUTS)
@pytest.mark.parametrize("kind", ENGINES)
def test_recorded_stream_decodes_to_the_reply(kind: str, how: str) -> None:
    pieces = steps()
    chunks, decoder = decoded(ENGINE_OF.get(kind, kind), events_of(recorded(kind, pieces), how))
    assert "".join(c.text for c in chunks) == REPLY  # EOS text trimmed where the engine keeps it
    ids = [tid for c in chunks for tid in c.token_ids]
    assert ids == [tid for _, tid in pieces] + ([EOS_ID] if kind in EOS_IN_IDS else [])
    assert [c.finish_reason for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    assert chunks[-1].stop_sequence is None
    assert decoder.prompt_tokens == len(PROMPT_IDS)
    assert all(c.text or c.token_ids for c in chunks[:-1])  # nothing empty is forwarded


@pytest.mark.parametrize("how", CUTS)
def test_multibyte_text_survives_any_cut(how: str) -> None:
    pieces = [("Grüße ", 1), ("aus ", 2), ("東京", 3), (" 😀", 4), ("\u2028é", 5)]  # U+2028 is not a line end
    chunks, _ = decoded("llamacpp", events_of(recorded("llamacpp", pieces), how))
    assert "".join(c.text for c in chunks) == "Grüße aus 東京 😀\u2028é"


def test_sglang_held_stop_prefix_is_trimmed_with_the_stop_string() -> None:
    chunks, _ = decoded("sglang", events_of(recorded("sglang-stop"), "seed-1"), request(stop=["STOP"]))
    assert [c.text for c in chunks] == ["Hello", " there", ",", " friend", ".", "", ""]
    assert chunks[-1].finish_reason == "stop" and chunks[-1].stop_sequence == "STOP"
    assert "".join(c.text for c in chunks) == "Hello there, friend."


def test_sglang_held_prefix_that_is_no_stop_string_is_sent_on() -> None:
    events = [{"text": "aS", "output_ids": [1]}, {"text": "aSb", "output_ids": [1, 2]},
              {"text": "aSb.", "output_ids": [1, 2, 3], "meta_info": {"finish_reason": {"type": "length"}}}]
    chunks, _ = decoded("sglang", events, request(stop=["STOP"]))
    assert [c.text for c in chunks] == ["a", "Sb", "."]
    assert chunks[-1].finish_reason == "length" and chunks[-1].stop_sequence is None


def test_sglang_eos_without_a_tokenizer_is_cut_as_a_special_token() -> None:
    events = [{"text": "hi", "output_ids": [7]}, {"text": "hi<|im_end|>", "output_ids": [7, EOS_ID],
                                                  "meta_info": {"finish_reason": {"type": "stop", "matched": EOS_ID}}}]
    chunks, _ = decoded("sglang", events, token_text=lambda token_id: None)
    assert "".join(c.text for c in chunks) == "hi"


def test_midstream_error_event_ends_the_lines() -> None:
    lines = SSELineDecoder()
    events = lines.decode(recorded("midfail"))
    assert len(events) == 5 and lines.done and lines.error == "error: engine crashed"


@pytest.mark.parametrize("engine, event", [
    ("vllm", {"choices": [{"text": "", "token_ids": [], "finish_reason": "abort"}]}),
    ("sglang", {"text": "", "output_ids": [], "meta_info": {"finish_reason": {"type": "abort", "message": "oom"}}}),
    ("lmdeploy", {"text": "", "output_ids": [], "meta_info": {"finish_reason": "abort"}}),
])
def test_an_abort_is_an_upstream_error(engine: str, event: dict) -> None:
    decoder = DECODERS[engine](request(), TOKENIZER.decode_one)
    with pytest.raises(UpstreamError, match="aborted the request"):
        decoder.decode(event)


@pytest.mark.parametrize("engine", DECODERS)
def test_a_stream_without_a_finish_is_an_upstream_error(engine: str) -> None:
    decoder = DECODERS[engine](request(), TOKENIZER.decode_one)
    with pytest.raises(UpstreamError, match=f"upstream {engine} ended the stream without a finish reason"):
        decoder.finish()


@pytest.mark.parametrize("engine, last", [
    ("vllm", {"choices": [{"text": "!", "token_ids": [9], "finish_reason": "stop", "stop_reason": "END"}]}),
    ("llamacpp", {"content": "!", "tokens": [9], "stop": True, "stop_type": "word", "stopping_word": "END"}),
    ("vllm", {"choices": [{"text": "!", "token_ids": [9], "finish_reason": "length"}]}),
    ("sglang", {"text": "!", "output_ids": [9], "meta_info": {"finish_reason": {"type": "length"}}}),
    ("lmdeploy", {"text": "!", "output_ids": [9], "meta_info": {"finish_reason": {"type": "length"}}}),
    ("llamacpp", {"content": "!", "tokens": [9], "stop": True, "stop_type": "limit"}),
])
def test_finish_reason_and_stop_sequence(engine: str, last: dict) -> None:
    chunks, _ = decoded(engine, [last], request(stop=["END"]))
    [final] = chunks
    expected = ("stop", "END") if "END" in json.dumps(last) else ("length", None)
    assert (final.text, final.token_ids, final.finish_reason, final.stop_sequence) == ("!", [9], *expected)


# ---- logprobs, in each engine's shape ----------------------------------------------------------


def entry(token: str, logprob: float, top: list[tuple[str, float]]) -> dict:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]}


LOGPROB_EVENTS = {
    "vllm": [{"choices": [{"text": "Hé", "token_ids": [1], "finish_reason": "stop", "logprobs": {
        "tokens": ["Hé"], "token_logprobs": [-0.5], "top_logprobs": [{"x": -2.0, "Hé": -0.5, "y": -3.0}]}}]}],
    "sglang": [{"text": "Hé", "output_ids": [1], "meta_info": {
        "finish_reason": {"type": "length"}, "output_token_logprobs": [[-0.5, 1, "Hé"]],
        "output_top_logprobs": [[[-0.5, 1, "Hé"], [-2.0, 2, "x"], [-3.0, 3, "y"]]]}}],
    "llamacpp": [{"content": "Hé", "tokens": [1], "stop": True, "stop_type": "limit", "completion_probabilities": [
        {"token": "Hé", "logprob": -0.5, "top_logprobs": [{"token": "Hé", "logprob": -0.5},
                                                         {"token": "x", "logprob": -2.0},
                                                         {"token": "y", "logprob": -3.0}]}]}],
}


@pytest.mark.parametrize("engine", LOGPROB_EVENTS)
def test_logprobs_become_openai_entries_cut_to_top_logprobs(engine: str) -> None:
    chunks, _ = decoded(engine, LOGPROB_EVENTS[engine], request(logprobs=True, top_logprobs=2))
    assert chunks[-1].logprobs == [entry("Hé", -0.5, [("Hé", -0.5), ("x", -2.0)])]
    chunks, _ = decoded(engine, LOGPROB_EVENTS[engine], request())
    assert chunks[-1].logprobs is None  # not asked for


def test_sglang_cumulative_logprobs_are_sent_once() -> None:
    events = [{"text": "a", "output_ids": [1], "meta_info": {"output_token_logprobs": [[-1.0, 1, "a"]]}},
              {"text": "ab", "output_ids": [1, 2], "meta_info": {
                  "completion_tokens": 2, "output_token_logprobs": [[-1.0, 1, "a"], [-2.0, 2, "b"]],
                  "finish_reason": {"type": "stop"}}}]
    chunks, _ = decoded("sglang", events, request(logprobs=True, top_logprobs=0))
    assert [c.logprobs for c in chunks] == [[entry("a", -1.0, [])], [entry("b", -2.0, [])]]


def test_lmdeploy_logprobs_take_the_event_text_or_each_tokens_own() -> None:
    one = {"text": "Hé", "output_ids": [1], "meta_info": {"output_token_logprobs": [[-0.5, 1]]}}
    two = {"text": "ab", "output_ids": [2, 3], "meta_info": {"output_token_logprobs": [[-1.0, 2], [-2.0, 3]],
                                                              "finish_reason": "stop"}}
    chunks, _ = decoded("lmdeploy", [one, two], request(logprobs=True, top_logprobs=1),
                        token_text={2: "a", 3: "b"}.get)
    assert [c.logprobs for c in chunks] == [[entry("Hé", -0.5, [])], [entry("a", -1.0, []), entry("b", -2.0, [])]]


# ---- end-of-turn text, cached tokens, refusals ---------------------------------------------------


def test_end_of_turn_text_mid_stream_goes_on_in_front_of_the_next_piece() -> None:
    events = [{"content": "a", "tokens": [1]}, {"content": EOS_TEXT, "tokens": [EOS_ID]},
              {"content": "b", "tokens": [2]}, {"content": EOS_TEXT, "tokens": [EOS_ID]},
              {"content": "", "tokens": [], "stop": True, "stop_type": "eos"}]
    chunks, _ = decoded("llamacpp", events)
    assert [(c.text, c.token_ids) for c in chunks] == [("a", [1]), (EOS_TEXT + "b", [EOS_ID, 2]), ("", [EOS_ID])]
    assert chunks[-1].finish_reason == "stop"


def test_sglang_eos_of_unknown_text_is_cut_by_the_familys_declared_end() -> None:
    """MiniMax-M2 ends its turn with ``[e~[``, which looks like no special token."""
    events = [{"text": "hi", "output_ids": [7]}, {"text": "hi[e~[", "output_ids": [7, 200020],
                                                  "meta_info": {"finish_reason": {"type": "stop", "matched": 200020}}}]
    chunks, _ = decoded("sglang", events, token_text=lambda token_id: None, end_texts=family_named("minimax-m2").end_of_turn)
    assert "".join(c.text for c in chunks) == "hi"


def test_without_end_texts_nothing_is_held_or_cut() -> None:
    events = [{"content": EOS_TEXT, "tokens": [EOS_ID]}, {"content": "", "stop": True, "stop_type": "eos"}]
    chunks, _ = decoded("llamacpp", events, end_texts=())
    assert [c.text for c in chunks] == [EOS_TEXT, ""]


@pytest.mark.parametrize("kind", ["vllm-cached", "sglang", "sglang-incremental", "llamacpp", "lmdeploy"])
def test_cached_prompt_tokens_from_each_engines_report(kind: str) -> None:
    if kind == "vllm-cached":  # vLLM reports them with --enable-prompt-tokens-details
        data = recorded("vllm").replace(b'"total_tokens"', b'"prompt_tokens_details": {"cached_tokens": 24}, '
                                                           b'"total_tokens"')
        kind, expected = "vllm", 24
    else:
        data, expected = recorded(kind), CACHED.get(kind)
    _, decoder = decoded(ENGINE_OF.get(kind, kind), events_of(data, "seed-1"))
    assert decoder.cached_tokens == expected and decoder.prompt_tokens == len(PROMPT_IDS)


def test_llamacpp_prompt_count_without_tokens_evaluated_adds_the_cached_part() -> None:
    _, decoder = decoded("llamacpp", [{"content": "", "stop": True, "stop_type": "eos",
                                       "timings": {"prompt_n": 12, "cache_n": 30}}])
    assert (decoder.prompt_tokens, decoder.cached_tokens) == (42, 30)


def test_llamacpp_stop_word_that_is_a_stop_tokens_text_is_no_stop_sequence() -> None:
    last = {"content": "", "tokens": [], "stop": True, "stop_type": "word", "stopping_word": "<|endoftext|>"}
    [final], _ = decoded("llamacpp", [last], request(stop=["END"]))
    assert (final.finish_reason, final.stop_sequence) == ("stop", None)


@pytest.mark.parametrize("engine", REFUSALS)
def test_each_engines_context_overflow_is_a_refusal_in_its_own_words(engine: str) -> None:
    error = refusal(REFUSALS[engine][1], "")
    assert isinstance(error, UpstreamRefusal) and error.status == 400 and error.kind == "invalid_request_error"
    assert error.message == OVERFLOW_REASON[engine] and error.code == "context_length_exceeded"


def test_a_refusal_names_no_url_and_is_cut_to_500_characters() -> None:
    error = refusal({"error": {"message": "top_p must be in (0, 1], see https://docs.example/x?a=1 or\n"
                                          "http://10.0.0.7:8000/v1 " + "x" * 900}}, "")
    assert "http" not in error.message and "10.0.0.7" not in error.message and len(error.message) <= 500
    assert error.message.startswith("top_p must be in (0, 1], see <url> or <url> x") and error.code is None
    assert refusal(None, "  plain text\n").message == "plain text"
