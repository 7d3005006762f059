"""The engine interface: what ChatRunner needs from anything that generates tokens.

An engine turns a ``GenerationRequest`` into an ``EngineStream``: the prompt's token
count (known before the first token, so errors surface before a response starts) and
an async iterator of ``EngineChunk`` (text delta, token ids, logprobs, finish reason).
Closing the stream early (``aclose``) must stop generation: that is how a client that
goes away cancels its request.  Upstream HTTP engines (vLLM ``/v1/completions``,
SGLang / LMDeploy ``/generate``, llama.cpp ``/completion``) fit the same shape.
"""

from __future__ import annotations

from typing import Any, Protocol
from collections.abc import AsyncIterator

from ...request import ParserRequest

__all__ = ["EngineChunk", "Sampling", "GenerationRequest", "EngineStream", "Engine", "PromptUsage",
           "assistant_message"]


class EngineChunk:
    """One step of generation.  ``logprobs`` holds OpenAI ``ChatCompletionTokenLogprob``
    dicts, one per token, when the request asked for them."""

    __slots__ = ("text", "token_ids", "logprobs", "finish_reason", "stop_sequence")

    def __init__(self, text: str = "", token_ids: list[int] | None = None, logprobs: list[dict] | None = None,
                 finish_reason: str | None = None, stop_sequence: str | None = None) -> None:
        self.text = text
        self.token_ids = token_ids
        self.logprobs = logprobs
        self.finish_reason = finish_reason  # "stop" | "length" on the last chunk
        self.stop_sequence = stop_sequence  # the stop string that ended generation, if one did

    def __repr__(self) -> str:
        return f"EngineChunk({self.text!r}, ids={self.token_ids}, finish={self.finish_reason!r})"


class Sampling:
    """How to sample, in one shape whichever API it came through; None (or empty): the
    engine's own default.  ``top_k`` 0 or -1 means no top-k cut; ``logit_bias`` maps a
    token id to a bias between -100 and 100; ``repetition_penalty`` is the multiplicative
    one (1.0: none), the two OpenAI penalties additive."""

    __slots__ = ("temperature", "top_p", "top_k", "min_p", "seed", "presence_penalty", "frequency_penalty",
                 "repetition_penalty", "logit_bias", "stop_token_ids")

    def __init__(self, temperature: float | None = None, top_p: float | None = None, top_k: int | None = None,
                 min_p: float | None = None, seed: int | None = None, presence_penalty: float | None = None,
                 frequency_penalty: float | None = None, repetition_penalty: float | None = None,
                 logit_bias: dict[int, float] | None = None, stop_token_ids: list[int] | None = None) -> None:
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.min_p = min_p
        self.seed = seed
        self.presence_penalty = presence_penalty
        self.frequency_penalty = frequency_penalty
        self.repetition_penalty = repetition_penalty
        self.logit_bias = logit_bias or {}
        self.stop_token_ids = stop_token_ids or []

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k in self.__slots__ if (v := getattr(self, k)) not in (None, {}, []))
        return f"Sampling({fields})"


class GenerationRequest:
    """A validated chat request in one shape, whichever API it came through.

    ``messages`` are OpenAI-shaped dicts (role, content as a string, tool_calls with
    string arguments, tool_call_id, reasoning_content); ``tools`` OpenAI tool dicts.
    ``response_format`` is ``{"type": "json_schema", "schema": {...}}`` or ``{"type":
    "json_object"}`` when the reply must be JSON (engines that can enforce it are told);
    ``reasoning_effort`` (``low`` / ``medium`` / ``high`` ...) reaches the chat template.
    ``sampling`` is how to sample; ``extra`` the engine-specific fields a client sent at
    the top level (``extra_body``), each engine taking only those on its allow-list
    (``bodies.EXTRA_FIELDS``).  ``constraint`` is a structured-generation constraint for
    the engine (an XGrammar structural tag, or ``{"grammar": GBNF}`` for llama.cpp) that
    the body builders put where each engine reads it (``bodies.constrain``); it is derived
    from ``parser_request`` (``tool_choice.enforce``, through ``constrained``).  Tools, tool
    choice, ``parallel_tool_calls`` and the thinking switch are ``parser_request``'s, the
    one normalized request value."""

    __slots__ = ("messages", "tools", "parser_request", "max_tokens", "stop", "logprobs", "top_logprobs",
                 "thinking", "response_format", "reasoning_effort", "sampling", "extra", "constraint")

    def __init__(self, messages: list[dict], tools: list[dict], parser_request: ParserRequest,
                 max_tokens: int | None = None, stop: list[str] | None = None, logprobs: bool = False,
                 top_logprobs: int = 0, response_format: dict | None = None,
                 reasoning_effort: str | None = None, sampling: Sampling | None = None,
                 extra: dict[str, Any] | None = None, constraint: dict[str, Any] | None = None) -> None:
        self.messages = messages
        self.tools = tools
        self.parser_request = parser_request
        self.thinking = parser_request.thinking
        self.max_tokens = max_tokens
        self.stop = stop or []
        self.logprobs = logprobs
        self.top_logprobs = top_logprobs
        self.response_format = response_format
        self.reasoning_effort = reasoning_effort
        self.sampling = sampling or Sampling()
        self.extra = extra or {}
        self.constraint = constraint

    @property
    def parallel_tool_calls(self) -> bool:
        """``parallel_tool_calls`` as the request gave it (false: at most one call)."""
        return self.parser_request.max_calls is None

    def constrained(self, constraint: dict[str, Any] | None) -> GenerationRequest:
        """This request with the engine constraint ``constraint`` (a new value: the original is kept)."""
        copy = GenerationRequest.__new__(GenerationRequest)
        for name in GenerationRequest.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.constraint = constraint
        return copy


def assistant_message(texts: list[str], reasoning: list[str], calls: list[dict]) -> dict:
    """An assistant turn in ``GenerationRequest.messages``' shape: ``content`` None when it
    wrote no text, ``reasoning_content`` and ``tool_calls`` only when present."""
    message: dict = {"role": "assistant", "content": "".join(texts) if texts else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = calls
    return message


class PromptUsage(Protocol):
    """Where a stream writes the prompt token counts the engine reports at the end: all
    of them, and those it served from its prefix cache."""

    prompt_tokens: int
    cached_tokens: int


class EngineStream:
    """The chunks of one generation.  ``parser_token_ids`` is False when the ids are
    stand-ins that only count tokens (the parser then gets text alone); ``stepped``: the
    iterator yields a list of chunks per engine step (``steps``), not one chunk at a time.  The app calls
    ``open`` before the response starts and ``bind_usage`` before iterating; both do
    nothing unless an engine needs them (an upstream engine fails there as a 502, and
    sets the prompt count its engine reports)."""

    def __init__(self, prompt_tokens: int, chunks: AsyncIterator[Any], parser_token_ids: bool = True,
                 stepped: bool = False) -> None:
        self.prompt_tokens = prompt_tokens
        self.parser_token_ids = parser_token_ids
        # An EngineChunk at a time, or (``stepped``) a list of them per engine step.
        self._chunks = chunks
        self._stepped = stepped
        self._pending: list[EngineChunk] = []  # a step's chunks not yet taken one by one, last first
        # The rendered prompt's last characters, for a reasoning parser whose initial mode is
        # ``auto`` (None: the engine did not render it).
        self.prompt_tail: str | None = None

    async def open(self) -> None:
        """Start generating; a ``RequestError`` here is an error response, not a stream."""

    def bind_usage(self, usage: PromptUsage) -> None:
        """Let the stream correct ``usage.prompt_tokens`` once the engine reports its own."""

    def __aiter__(self) -> EngineStream:
        return self

    async def __anext__(self) -> EngineChunk:
        if not self._stepped:
            return await self._chunks.__anext__()
        while not self._pending:
            self._pending = list(reversed(await self._chunks.__anext__()))
        return self._pending.pop()

    def steps(self) -> AsyncIterator[list[EngineChunk]]:
        """The chunks a step of the engine made together, a list per step: several tokens
        when the engine hands them over at once (speculative decoding and MTP, a stream
        interval, the simulated engine at full speed), else one chunk each."""
        return self._chunks if self._stepped else _OneEach(self)

    async def aclose(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            await close()


class _OneEach:
    """A stream's chunks as one-chunk steps."""

    __slots__ = ("_stream",)

    def __init__(self, stream: EngineStream) -> None:
        self._stream = stream

    def __aiter__(self) -> _OneEach:
        return self

    async def __anext__(self) -> list[EngineChunk]:
        return [await self._stream.__anext__()]


class Engine:
    """Generates replies.  ``start`` validates and prepares (raising ``RequestError``)
    before anything is sent to the client; iteration happens as the response streams."""

    name = "engine"

    def start(self, request: GenerationRequest) -> EngineStream:
        raise NotImplementedError

    def count_prompt(self, request: GenerationRequest) -> int:
        """The prompt's token count (``/v1/messages/count_tokens``)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release connections or workers at server shutdown."""
