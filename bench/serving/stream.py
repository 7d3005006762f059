"""The one token stream every serving benchmark replays: a Qwen3 reply of reasoning, text
and a tool call, tokenized once by the real Qwen3 tokenizer (a pseudo-tokenizer without
the test data), one token per step.

``token_stream(words)`` gives the steps as ``(text, token_id)`` pairs; ``ReplayEngine``
streams them as ``EngineChunk``s built before the clock starts, so a measurement sees
ChatRunner, the parser, the adapter and the SSE encoding, and no tokenizing.  The peers'
runners get the same pairs as JSON (``peer_payload``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.serve.engines.base import Engine, EngineChunk, EngineStream, GenerationRequest
from lmparse.serve.families import get_family
from lmparse.serve.tokenizer import Tokenizer, load_tokenizer

__all__ = ["FAMILY", "TOOL", "USER", "reply_text", "token_stream", "ReplayEngine", "peer_payload",
           "chat_body", "messages_body", "responses_body"]

FAMILY = "qwen3"
TOOL = {"name": "write_note", "description": "Write a note.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
USER = "Think it over, then write a note with write_note."


def reply_text(words: int) -> str:
    """The reply in Qwen3's wire format: ``words`` words each of reasoning, of text and of
    the call's one string argument."""
    said = " ".join(f"word{i}" for i in range(words))
    reasoning = ReasoningParserManager.get(FAMILY).render(f"\nLet me think: {said}.\n")
    calls = ToolParserManager.get(FAMILY).render([("write_note", json.dumps({"text": said}))])
    return f"{reasoning}\n\nHere is my answer: {said}.\n{calls}"


def _tokenizer() -> Tokenizer:
    family = get_family(FAMILY)
    return load_tokenizer(family.tokenizer, family.name, ())


def token_stream(words: int) -> tuple[str, list[tuple[str, int]]]:
    """(tokenizer name, the reply's steps as (text the token completes, token id))."""
    tokenizer = _tokenizer()
    return tokenizer.name, [(text, token_id) for text, token_id, _ in tokenizer.steps(reply_text(words))]


class ReplayEngine(Engine):
    """An engine that streams the same prepared chunks for every request, with no sleep."""

    name = "replay"

    def __init__(self, steps: Sequence[tuple[str, int]]) -> None:
        self._chunks = [EngineChunk(text, [token_id]) for text, token_id in steps]
        last = self._chunks[-1]
        self._chunks[-1] = EngineChunk(last.text, last.token_ids, finish_reason="stop")

    def start(self, request: GenerationRequest) -> EngineStream:
        return EngineStream(12, self._replay())

    def count_prompt(self, request: GenerationRequest) -> int:
        return 12

    async def _replay(self) -> AsyncIterator[EngineChunk]:
        for chunk in self._chunks:
            # A fresh chunk: the runner writes the finish reason onto what it hands on.
            yield EngineChunk(chunk.text, chunk.token_ids, None, chunk.finish_reason)


def chat_body() -> dict:
    return {"model": FAMILY, "stream": True, "messages": [{"role": "user", "content": USER}],
            "tools": [{"type": "function", "function": TOOL}]}


def messages_body() -> dict:
    return {"model": FAMILY, "stream": True, "max_tokens": 100000, "messages": [{"role": "user", "content": USER}],
            "tools": [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}]}


def responses_body() -> dict:
    return {"model": FAMILY, "stream": True, "store": False, "input": USER,
            "tools": [{"type": "function", **TOOL}]}


def peer_payload(steps: Sequence[tuple[str, int]], repeats: int) -> str:
    """What a peer's runner reads on stdin: the request, the steps, how many runs."""
    return json.dumps({"body": chat_body(), "steps": list(steps), "repeats": repeats})
