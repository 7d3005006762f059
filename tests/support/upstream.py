"""Recorded upstream event streams (ECOSYSTEM.md §3.6) and the helpers that feed them.

The recordings are the byte strings each engine sends for a canned Qwen3 reply
(reasoning, then a tool call) cut at the real tokenizer's token boundaries with the real
token ids; ``reads`` cuts them the ways a network does.  The decoder tests, the stream
shell's tests and ``test_serve_upstream`` (the whole server) share them.  ``REFUSALS``
are the error answers each engine gives a prompt longer than its context.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator

from lmparse.request import ParserRequest
from lmparse.serve.engines.base import EngineChunk, GenerationRequest
from lmparse.serve.engines.decoders import (EventDecoder, LlamaCppDecoder, LMDeployDecoder,
                                            SGLangDecoder, TokenText, VLLMDecoder)
from lmparse.families import get_family as family_named
from lmparse.serve.engines.sse import SSELineDecoder
from lmparse.serve.tokenizer import load_tokenizer

REASONING = "The user wants the weather in Paris, so I call get_weather."
REPLY = ("<think>\n" + REASONING + "\n</think>\n\n<tool_call>\n"
         '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')
EOS_TEXT, EOS_ID = "<|im_end|>", 151645
PROMPT_IDS = list(range(1000, 1042))  # what the fake says the prompt was: 42 tokens
CACHED = {"sglang": 16, "sglang-incremental": 16, "llamacpp": 30, "llamacpp-special": 30}  # of those, cached
ENGINES = ["vllm", "sglang", "sglang-incremental", "lmdeploy", "llamacpp", "llamacpp-special"]
EOS_IN_IDS = {"vllm", "sglang", "sglang-incremental", "llamacpp-special"}  # the recordings that return EOS's id
ENGINE_OF = {"sglang-incremental": "sglang", "sglang-stop": "sglang", "slow": "vllm", "midfail": "lmdeploy",
             "broken": "vllm", "unreachable": "vllm", "llamacpp-special": "llamacpp"}
DECODERS: dict[str, type[EventDecoder]] = {"vllm": VLLMDecoder, "sglang": SGLangDecoder, "lmdeploy": LMDeployDecoder, "llamacpp": LlamaCppDecoder}

TOKENIZER = load_tokenizer("qwen3", "qwen3")


def steps() -> list[tuple[str, int]]:
    return [(piece, token_id) for piece, token_id, _ in TOKENIZER.steps(REPLY)]


# ---- the recordings ----------------------------------------------------------------------------


def sse(event: object) -> bytes:
    """One ``data:`` event as engines write it: raw UTF-8, not ASCII escapes."""
    data = event if isinstance(event, bytes) else json.dumps(event, ensure_ascii=False).encode()
    return b"data: " + data + b"\n\n"


def vllm_events(pieces: list[tuple[str, int]]) -> Iterator[bytes]:
    for i, (text, tid) in enumerate(pieces):
        choice = {"index": 0, "text": text, "token_ids": [tid], "logprobs": None, "finish_reason": None,
                  "stop_reason": None}
        if i == 0:
            choice["prompt_token_ids"] = PROMPT_IDS
        yield sse({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "qwen", "choices": [choice],
                   "usage": None})
    # EOS ends generation: its id is returned, its text is not.
    yield sse({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "qwen", "choices": [
        {"index": 0, "text": "", "token_ids": [EOS_ID], "logprobs": None, "finish_reason": "stop",
         "stop_reason": None}], "usage": None})
    yield sse({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "qwen", "choices": [],
               "usage": {"prompt_tokens": len(PROMPT_IDS), "completion_tokens": len(pieces) + 1,
                         "total_tokens": len(PROMPT_IDS) + len(pieces) + 1}})
    yield sse(b"[DONE]")


def sglang_events(pieces: list[tuple[str, int]], incremental: bool) -> Iterator[bytes]:
    # no_stop_trim + skip_special_tokens false: the EOS token and its text stay in the output.
    pieces = pieces + [(EOS_TEXT, EOS_ID)]
    text, ids = "", []
    for i, (piece, tid) in enumerate(pieces):
        text += piece
        ids.append(tid)
        last = i == len(pieces) - 1
        meta = {"id": "r1", "prompt_tokens": len(PROMPT_IDS), "completion_tokens": len(ids),
                "cached_tokens": CACHED["sglang"],
                "finish_reason": {"type": "stop", "matched": EOS_ID} if last else None}
        if incremental:
            yield sse({"text": piece, "output_ids": [tid], "meta_info": meta})
        else:
            yield sse({"text": text, "output_ids": list(ids), "meta_info": meta})
    yield sse(b"[DONE]")


def sglang_stop_events() -> Iterator[bytes]:
    # A stop string is kept with no_stop_trim; its first half streams before the match is known.
    pieces = ["Hello", " there", ",", " friend", ".", "ST", "OP"]
    text = ""
    for i, piece in enumerate(pieces):
        text += piece
        last = i == len(pieces) - 1
        yield sse({"text": text, "output_ids": list(range(10, 11 + i)), "meta_info": {
            "prompt_tokens": len(PROMPT_IDS), "completion_tokens": i + 1,
            "finish_reason": {"type": "stop", "matched": "STOP"} if last else None}})
    yield sse(b"[DONE]")


def lmdeploy_events(pieces: list[tuple[str, int]], fail_after: int | None = None) -> Iterator[bytes]:
    for i, (piece, tid) in enumerate(pieces):
        if fail_after is not None and i == fail_after:
            yield sse({"error": "engine crashed"})
            return
        last = i == len(pieces) - 1
        yield sse({"text": piece, "output_ids": [tid], "meta_info": {
            "finish_reason": {"type": "stop"} if last else None, "prompt_tokens": len(PROMPT_IDS),
            "completion_tokens": i + 1}})
    yield sse(b"[DONE]")


def llamacpp_events(pieces: list[tuple[str, int]], special: bool = False) -> Iterator[bytes]:
    # With --special the EOS token's text is rendered: it comes as an ordinary event, then the stop.
    if special:
        pieces = pieces + [(EOS_TEXT, EOS_ID)]
    for piece, tid in pieces:
        yield sse({"content": piece, "tokens": [tid], "stop": False, "id_slot": 0, "index": 0})
    cached = CACHED["llamacpp"]
    yield sse({"content": "", "tokens": [], "stop": True, "stop_type": "eos", "stopping_word": "", "id_slot": 0,
               "index": 0, "tokens_predicted": len(pieces) + 1, "tokens_evaluated": len(PROMPT_IDS),
               "tokens_cached": len(PROMPT_IDS) + len(pieces),
               "timings": {"cache_n": cached, "prompt_n": len(PROMPT_IDS) - cached, "predicted_n": len(pieces) + 1}})


RECORDINGS: dict[str, Callable[[list[tuple[str, int]]], Iterable[bytes]]] = {
    "vllm": vllm_events,
    "sglang": lambda pieces: sglang_events(pieces, incremental=False),
    "sglang-incremental": lambda pieces: sglang_events(pieces, incremental=True),
    "sglang-stop": lambda pieces: sglang_stop_events(),
    "lmdeploy": lmdeploy_events,
    "midfail": lambda pieces: lmdeploy_events(pieces, fail_after=5),
    "llamacpp": llamacpp_events,
    "llamacpp-special": lambda pieces: llamacpp_events(pieces, special=True),
}

# What each engine answers a prompt longer than its context: HTTP status and body.  vLLM
# 0.33 and llama.cpp answer before the stream; SGLang 0.5.23's /generate streams the
# ValueError as its first event (HTTP 200); LMDeploy's errors.create_error_response
# shape (its message here stands for the engine's own).
REFUSALS: dict[str, tuple[int, dict]] = {
    "vllm": (400, {"error": {
        "message": "This model's maximum context length is 4096 tokens. However, your request has 5120 input "
                   "tokens. Please reduce the length of the input messages.",
        "type": "BadRequestError", "param": None, "code": 400}}),
    "llamacpp": (400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                 "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5120,
                                 "n_ctx": 4096}}),
    "sglang": (200, {"error": {"message": "The input (5120 tokens) is longer than the model's context length "
                                          "(4096 tokens)."}}),
    "lmdeploy": (400, {"message": "The input token length 5120 exceeds the session_len 4096 of the model.",
                       "type": "invalid_request_error", "code": 400, "param": None, "object": "error"}),
}
OVERFLOW_REASON = {
    "vllm": REFUSALS["vllm"][1]["error"]["message"],
    "llamacpp": "the request exceeds the available context size, try increasing it",
    "sglang": "The input (5120 tokens) is longer than the model's context length (4096 tokens).",
    "lmdeploy": "The input token length 5120 exceeds the session_len 4096 of the model.",
}


ENGINE_OF.update({f"overflow-{engine}": engine for engine in REFUSALS})  # the fakes that answer with a refusal


def refused(kind: str) -> tuple[int, bytes]:
    """The status and body an engine answers an overlong prompt with."""
    status, answer = REFUSALS[kind]
    return status, sse(answer) + sse(b"[DONE]") if status == 200 else json.dumps(answer).encode()


def recorded(kind: str, pieces: list[tuple[str, int]] | None = None) -> bytes:
    return b"".join(RECORDINGS[kind](steps() if pieces is None else pieces))


# ---- feeding them ------------------------------------------------------------------------------


def reads(data: bytes, how: str) -> list[bytes]:
    """``data`` as the network might deliver it: one byte per read, or seeded random pieces."""
    if how == "bytewise":
        return [data[i:i + 1] for i in range(len(data))]
    rng = random.Random(how)
    out, pos = [], 0
    while pos < len(data):
        size = rng.randint(1, 64)
        out.append(data[pos:pos + size])
        pos += size
    return out


CUTS = ["bytewise", "seed-1", "seed-2", "crlf"]


def events_of(data: bytes, how: str) -> list[dict]:
    if how == "crlf":
        data, how = data.replace(b"\n", b"\r\n"), "bytewise"  # CR and LF always in separate reads
    lines = SSELineDecoder()
    events = [event for piece in reads(data, how) for event in lines.decode(piece)]
    return events + lines.flush()


def request(**kw: object) -> GenerationRequest:
    return GenerationRequest([{"role": "user", "content": "hi"}], [], ParserRequest.accept_all(), **kw)


def decoded(engine: str, events: list[dict], req: GenerationRequest | None = None,
            token_text: TokenText = TOKENIZER.decode_one,
            end_texts: tuple[str, ...] = family_named("qwen3").end_of_turn) -> tuple[list[EngineChunk], EventDecoder]:
    """The chunks the decoder forwards, its last chunk appended, and the decoder (which
    cuts Qwen3's end-of-turn texts unless told others)."""
    decoder = DECODERS[engine](req or request(), token_text, end_texts)
    chunks = [chunk for chunk in map(decoder.decode, events) if chunk is not None]
    return chunks + [decoder.finish()], decoder


# ---- every engine: the reply, its ids, the finish and the engine's own prompt count ------------
