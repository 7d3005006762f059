"""The embedded default engine: a deterministic stand-in model that needs no weights.

It decides a reply from the conversation (``answer.decide``), writes it in the family's
wire format with the parsers' own renderers (tool dialect ``render``, reasoning
descriptor ``render``, Harmony for gpt-oss), and streams it one token at a time with
the family's tokenizer at a configurable rate, with fake but well-formed logprobs.
The prompt is rendered with the family's chat template for the usage count.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ...registry import ReasoningParserManager, ToolParserManager
from ..families import Family
from ..templates import ChatTemplate, render_chatml
from ..tokenizer import Step, Tokenizer
from .answer import Reply, decide
from .base import Engine, EngineChunk, EngineStream, GenerationRequest

__all__ = ["SimulatedEngine", "harmony_parts"]

def harmony_parts(reply: Reply) -> list[tuple[str, ...]]:
    """The reply as gpt-oss messages, for ``lmparse.response.harmony.render_reply``."""
    parts: list[tuple[str, ...]] = []
    if reply.reasoning is not None:
        parts.append(("analysis", reply.reasoning))
    parts += [("call", name, arguments) for name, arguments in reply.calls]
    if reply.calls and reply.calls_in_reasoning and reply.reasoning_after:
        parts.append(("analysis", reply.reasoning_after))
    if reply.content is not None:
        parts.append(("final", reply.content))
    return parts


def _fake_logprobs(steps: list[Step], top: int) -> list[dict]:
    """Deterministic, well-formed ``ChatCompletionTokenLogprob`` entries."""
    out = []
    for _, token_id, token in steps:
        logprob = -(((token_id * 2654435761) >> 7) % 2000) / 1000.0
        alternatives = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
        for rank in range(1, top):
            alt = f"<alt{rank}>"
            alternatives.append({"token": alt, "logprob": round(logprob - rank, 3), "bytes": list(alt.encode())})
        out.append({"token": token, "logprob": logprob, "bytes": list(token.encode()),
                    "top_logprobs": alternatives[:top]})
    return out


class SimulatedEngine(Engine):
    name = "simulated"

    def __init__(self, family: Family, tokenizer: Tokenizer, template: ChatTemplate | None = None,
                 token_rate: float = 0.0) -> None:
        self.family = family
        self.tokenizer = tokenizer
        self.template = template
        self.token_rate = token_rate  # tokens per second; 0 streams as fast as the loop allows
        self._tool = ToolParserManager.get(family.tool_parser) if family.tool_parser else None
        self._reasoning = ReasoningParserManager.get(family.reasoning_parser) if family.reasoning_parser else None
        self._harmony = family.response_parser == "gpt-oss"
        # Counted for /metrics: a stream closed before its last token was cancelled.
        self.streams_started = self.streams_cancelled = self.tokens_generated = 0

    # ---- the reply ------------------------------------------------------------------------

    def thinking_on(self, request: GenerationRequest) -> bool:
        if self._harmony:
            return request.thinking is not False
        if self._reasoning is None:
            return False
        # The family's own initial mode decides; a model that opens reasoning itself
        # (an explicit start tag) thinks when the request asks for it.
        descriptor = self._reasoning(request.parser_request)
        return descriptor.starts_in_reasoning() or (descriptor.start_tag is not None and request.thinking is True)

    def reply_text(self, request: GenerationRequest) -> str:
        reply = decide(request, self.thinking_on(request), self.family.name)
        if self._harmony:
            from ...response.harmony import render_reply

            return render_reply(harmony_parts(reply), header="model")
        return self.render(reply)

    def render(self, reply: Reply) -> str:
        calls = self._tool.render(reply.calls) if reply.calls and self._tool is not None else ""
        parts = []
        if reply.reasoning is not None and self._reasoning is not None:
            if calls and reply.calls_in_reasoning:
                start = self._reasoning.start_tag or ""
                parts.append(f"{start}{reply.reasoning}{calls}{reply.reasoning_after}{self._reasoning.end_tag}")
                calls = ""
            else:
                parts.append(self._reasoning.render(reply.reasoning))
        if reply.content is not None:
            parts.append(reply.content)
        parts.append(calls)
        return "".join(parts)

    def prompt(self, request: GenerationRequest) -> str:
        if self.template is not None:
            try:
                return self.template.render(request.messages, request.tools, request.thinking,
                                            request.reasoning_effort)
            except Exception:  # a template that rejects this conversation: the count is approximate
                pass
        return render_chatml(request.messages, request.tools)

    def count_prompt(self, request: GenerationRequest) -> int:
        return self.tokenizer.count(self.prompt(request))

    # ---- streaming --------------------------------------------------------------------------

    def start(self, request: GenerationRequest) -> EngineStream:
        prompt_tokens = self.count_prompt(request)
        text = self.reply_text(request)
        stop_sequence = None
        if request.stop:
            hits = [(text.find(s), s) for s in request.stop if s and s in text]
            if hits:
                at, stop_sequence = min(hits)
                text = text[:at]
        steps = self.tokenizer.steps(text)
        finish = "stop"
        if request.max_tokens is not None and len(steps) > request.max_tokens:
            steps, finish, stop_sequence = steps[: request.max_tokens], "length", None
        logprobs = _fake_logprobs(steps, request.top_logprobs) if request.logprobs else None
        # Stand-in ids only count tokens; gpt-oss's parser reads real ids, so it gets none.
        real_ids = self.tokenizer.real
        return EngineStream(prompt_tokens, self._stream(steps, logprobs, finish, stop_sequence),
                            parser_token_ids=real_ids or not self._harmony)

    async def _stream(self, steps: list[Step], logprobs: list[dict] | None, finish: str,
                      stop_sequence: str | None) -> AsyncIterator[EngineChunk]:
        self.streams_started += 1
        loop = asyncio.get_running_loop()
        interval = 1.0 / self.token_rate if self.token_rate > 0 else 0.0
        due = loop.time()
        last = len(steps) - 1
        done = False
        try:
            if not steps:
                done = True
                yield EngineChunk("", [], [] if logprobs is not None else None, finish, stop_sequence)
                return
            for i, (piece, token_id, _) in enumerate(steps):
                if interval:
                    due += interval
                    delay = due - loop.time()
                    await asyncio.sleep(delay if delay > 0 else 0)
                else:
                    await asyncio.sleep(0)  # let the server notice a client that left
                self.tokens_generated += 1
                end = i == last
                done = end
                yield EngineChunk(piece, [token_id], [logprobs[i]] if logprobs is not None else None,
                                  finish if end else None, stop_sequence if end else None)
        finally:
            if not done:
                self.streams_cancelled += 1

    def stats(self) -> dict[str, int]:
        return {"streams_started": self.streams_started, "streams_cancelled": self.streams_cancelled,
                "tokens_generated": self.tokens_generated}
