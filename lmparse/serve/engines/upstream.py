"""Upstream engines: a real inference server's raw-completion endpoint behind lmparse.

lmparse renders the chat prompt itself (the family's chat template, with tools and the
thinking switch), asks the engine for the raw continuation with special tokens kept and
token ids returned, and streams it through the same ``EngineChunk`` shape the simulated
engine yields, so ChatRunner, the parsers and both API adapters work unchanged.

==========  =====================  ====================================================
engine      endpoint               stream shape (ECOSYSTEM.md §3.6)
==========  =====================  ====================================================
vllm        POST /v1/completions   ``choices[0].text`` / ``token_ids`` deltas, usage chunk
sglang      POST /generate         ``text`` / ``output_ids``, cumulative or incremental
lmdeploy    POST /generate         incremental ``text`` / ``output_ids``
llamacpp    POST /completion       ``content`` / ``tokens``, last event ``stop: true``
==========  =====================  ====================================================

Everything but the I/O is sans-IO and lives beside this module: the request body
(``bodies``), the SSE lines (``sse.SSELineDecoder``) and each engine's events
(``decoders``).  ``UpstreamStream`` only sends, feeds the body's bytes through the two
decoders and yields.  It reads the first event before the response to the client starts
(``open``), so an unreachable or failing upstream is an HTTP 502 in the API's error
shape; a failure later is raised from the chunk iterator (the adapters turn it into
their error event).  Either way it goes through one path, ``_fail``.  An engine that
refuses the request as the client's mistake (HTTP 400, 413 or 422, or an error event
with such a code before any token, as SGLang and LMDeploy send them) is a 400 with the
engine's reason instead (``decoders.refusal``); it is no upstream failure.  Closing the
stream closes the upstream HTTP response, which cancels generation upstream.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple
from collections.abc import AsyncIterator, Callable

import orjson

from ...factory import PROMPT_TAIL
from ..errors import RequestError
from ..families import Family
from ..templates import ChatTemplate, render_chatml
from ..tokenizer import Tokenizer
from .base import Engine, EngineChunk, EngineStream, GenerationRequest, PromptUsage
from .bodies import BodyOptions, llamacpp_body, lmdeploy_body, sglang_body, vllm_body
from .decoders import (REFUSED_STATUSES, EventDecoder, LlamaCppDecoder, LMDeployDecoder, SGLangDecoder, TokenText,
                       UpstreamError, UpstreamRefusal, VLLMDecoder, error_status, refusal)
from .special import end_of_turn, preserved_tokens
from .sse import Event, SSELineDecoder, error_text

__all__ = ["UpstreamEngine", "UpstreamError", "UpstreamStream", "EngineProtocol", "ENGINES", "DEFAULT_MAX_TOKENS"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_MAX_TOKENS = 4096  # sent when the request names no limit (vLLM's own default is 16)


class EngineProtocol(NamedTuple):
    """One engine's endpoint, request body and event decoder."""

    name: str
    path: str
    body: Callable[[GenerationRequest, str, BodyOptions], dict[str, Any]]
    decoder: Callable[[GenerationRequest, TokenText, tuple[str, ...]], EventDecoder]


ENGINES: dict[str, EngineProtocol] = {p.name: p for p in (
    EngineProtocol("vllm", "/v1/completions", vllm_body, VLLMDecoder),
    EngineProtocol("sglang", "/generate", sglang_body, SGLangDecoder),
    EngineProtocol("lmdeploy", "/generate", lmdeploy_body, LMDeployDecoder),
    EngineProtocol("llamacpp", "/completion", llamacpp_body, LlamaCppDecoder),
)}


class UpstreamStream(EngineStream):
    """One upstream generation.  ``open`` sends the request and reads the first event;
    the app awaits it before the response starts.  ``bind_usage`` lets the stream set
    the prompt token count the upstream reports at the end (vLLM's usage chunk)."""

    def __init__(self, engine: UpstreamEngine, body: dict[str, Any], decoder: EventDecoder,
                 prompt_tokens: int) -> None:
        super().__init__(prompt_tokens, self._run())
        self._engine = engine
        self._body = body
        self._decoder = decoder
        self._response: Any = None
        self._events = self._read_events()
        self._first: Event | None = None
        self._events_read = 0
        self._usage: PromptUsage | None = None
        self._opened = self._finished = self._failed = self._closed = False

    def bind_usage(self, usage: PromptUsage) -> None:
        self._usage = usage

    async def open(self) -> None:
        self._opened = True
        engine = self._engine
        engine.streams_started += 1
        try:
            self._response = await engine.send(self._body)
        except Exception as exc:
            raise await self._fail(exc, f"at {engine.url} is unreachable") from None
        try:
            if self._response.status_code >= 400:
                raise await self._http_error()
            self._first = await anext(self._events, None)
        except Exception as exc:
            raise await self._fail(exc, "failed") from None
        if self._first is not None:
            self._decoder.note_usage(self._first)
            if self._decoder.prompt_tokens is not None:
                self.prompt_tokens = self._decoder.prompt_tokens

    async def _http_error(self) -> UpstreamError:
        """The error an HTTP error status carries, in the engine's words: the client's
        (a refusal) for a status that says the request is wrong, else a 502's."""
        response = self._response
        raw = await response.aread()
        text = raw.decode(errors="replace").strip()
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError:
            answer = None
        if response.status_code in REFUSED_STATUSES:
            return self._refused(refusal(answer, text), f"HTTP {response.status_code}")
        detail = error_text(answer) or text
        return UpstreamError(f"upstream {self._engine.name} answered HTTP {response.status_code}: "
                             f"{detail.strip()[:500]}")

    def _refused(self, error: UpstreamRefusal, how: str) -> UpstreamRefusal:
        logger.info("upstream %s refused the request (%s): %s", self._engine.name, how, error.message)
        return error

    def _stream_error(self, lines: SSELineDecoder) -> UpstreamError:
        """A stream's error event: a refusal when it came first and names a client error
        (SGLang's name no code: its stream reports only the request's ValueErrors)."""
        event, engine = lines.error_event, self._engine
        status = error_status(event)
        client_error = status in REFUSED_STATUSES or (status is None and engine.protocol.name == "sglang")
        if event is not None and self._events_read == 0 and client_error:
            return self._refused(refusal(event, ""), "error event")
        return UpstreamError(f"upstream {engine.name} {lines.error}")

    async def _read_events(self) -> AsyncIterator[Event]:
        """The body's JSON events, up to ``[DONE]``; an error event raises ``UpstreamError``."""
        lines = SSELineDecoder()
        async for data in self._response.aiter_bytes():
            for event in lines.decode(data):
                self._events_read += 1
                yield event
            if lines.done:
                break
        else:
            for event in lines.flush():
                yield event
        if lines.error is not None:
            raise self._stream_error(lines)

    async def _run(self) -> AsyncIterator[EngineChunk]:
        if not self._opened:
            await self.open()
        decoder = self._decoder
        try:
            first, self._first = self._first, None
            if first is not None and (chunk := self._decode(first)) is not None:
                yield chunk
            async for event in self._events:
                if (chunk := self._decode(event)) is not None:
                    yield chunk
            final = decoder.finish()
            self._engine.tokens_generated += len(final.token_ids or ())
            if decoder.prompt_tokens is not None and self._usage is not None:
                self._usage.prompt_tokens = decoder.prompt_tokens
            if decoder.cached_tokens is not None and self._usage is not None:
                self._usage.cached_tokens = decoder.cached_tokens
            self._finished = True
            yield final
        except Exception as exc:  # an error event, or a connection that broke mid-stream
            error = await self._fail(exc, "failed mid-stream")
            if error is exc:
                raise
            raise error from exc
        finally:
            await self._close_response()

    def _decode(self, event: Event) -> EngineChunk | None:
        chunk = self._decoder.decode(event)
        if chunk is not None:
            self._engine.tokens_generated += len(chunk.token_ids or ())
        return chunk

    async def _fail(self, exc: Exception, context: str) -> UpstreamError:
        """The one failure path: counted once, the response closed (a failure, not a
        cancellation), and the error to raise (``exc`` itself if it is one already)."""
        if not self._failed:
            self._failed = True
            if not isinstance(exc, UpstreamRefusal):  # the client's mistake, not the engine's failure
                self._engine.upstream_errors += 1
        await self._close_response()
        if isinstance(exc, UpstreamError):
            return exc
        return UpstreamError(f"upstream {self._engine.name} {context}: {type(exc).__name__}: {exc}")

    async def _close_response(self) -> None:
        if self._closed or self._response is None:
            return
        self._closed = True
        if not self._finished and not self._failed:
            self._engine.streams_cancelled += 1
        await self._response.aclose()

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await self._close_response()


class UpstreamEngine(Engine):
    """A real inference server (``protocol``: vllm, sglang, lmdeploy, llamacpp) at ``url``."""

    def __init__(self, protocol: str, url: str, family: Family, tokenizer: Tokenizer,
                 template: ChatTemplate | None, model: str | None = None,
                 default_max_tokens: int = DEFAULT_MAX_TOKENS, timeout: float = 600.0, transport: Any = None) -> None:
        if protocol not in ENGINES:
            raise ValueError(f"unknown engine {protocol!r}; known: {', '.join(ENGINES)}")
        self.protocol = ENGINES[protocol]
        self.name = protocol
        self.url = url.rstrip("/")
        self.family = family
        self.tokenizer = tokenizer
        self.template = template
        self.model = model
        self.default_max_tokens = default_max_tokens
        self.preserved_tokens = preserved_tokens(family)  # llama.cpp renders these control tokens' text
        self.end_texts = end_of_turn(family, chatml=template is None)  # cut from the reply's end
        self._timeout = timeout
        self._transport = transport
        self._client: Any = None
        self.streams_started = self.streams_cancelled = self.tokens_generated = self.upstream_errors = 0
        if template is None:
            logger.warning("family %s: no chat template at hand; prompts for %s use plain ChatML", family.name, url)

    def client(self) -> Any:
        if self._client is None:
            import httpx

            timeout = httpx.Timeout(self._timeout, connect=10.0)
            self._client = httpx.AsyncClient(timeout=timeout, transport=self._transport)
        return self._client

    async def send(self, body: dict[str, Any]) -> Any:
        """POST ``body`` to the engine's endpoint; the response streams (``aiter_bytes``)."""
        client = self.client()
        return await client.send(client.build_request("POST", self.url + self.protocol.path, json=body), stream=True)

    def token_text(self, token_id: int) -> str | None:
        return self.tokenizer.decode_one(token_id)

    def prompt(self, request: GenerationRequest) -> str:
        if self.template is None:
            return render_chatml(request.messages, request.tools)
        try:
            prompt = self.template.render(request.messages, request.tools, request.thinking,
                                          request.reasoning_effort)
        except RequestError:  # a template the engine renders: its failure is the engine's (a 502)
            raise
        except Exception as exc:  # the model's template rejects this conversation
            raise RequestError(f"messages is rejected by the {self.family.name} chat template: {exc}",
                               "messages") from None
        bos = self.template.bos
        if bos and self.protocol.name != "vllm" and prompt.startswith(bos):
            prompt = prompt[len(bos):]  # these engines add BOS themselves when tokenizing text
        return prompt

    def count_prompt(self, request: GenerationRequest) -> int:
        """Counted with lmparse's copy of the tokenizer (the engine's own count comes with a reply)."""
        return self.tokenizer.count(self.prompt(request))

    def start(self, request: GenerationRequest) -> EngineStream:
        prompt = self.prompt(request)
        options = BodyOptions(self.model, self.default_max_tokens, self.preserved_tokens, self.token_text)
        body = self.protocol.body(request, prompt, options)
        decoder = self.protocol.decoder(request, self.token_text, self.end_texts)
        stream = UpstreamStream(self, body, decoder, self.tokenizer.count(prompt))
        stream.prompt_tail = prompt[-PROMPT_TAIL:]
        return stream

    def stats(self) -> dict[str, int]:
        return {"streams_started": self.streams_started, "streams_cancelled": self.streams_cancelled,
                "tokens_generated": self.tokens_generated, "upstream_errors": self.upstream_errors}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
