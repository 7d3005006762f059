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

The shared machinery (``UpstreamStream``) sends the request and reads the first event
before the response to the client starts (``open``), so an unreachable or failing
upstream is an HTTP 502 in the API's error shape; a failure later is raised from the
chunk iterator (the adapters turn it into their error event).  Closing the stream
closes the upstream HTTP response, which cancels generation upstream.  Each engine is a
small ``_Protocol``: the request body and how one event becomes a chunk.
"""

from __future__ import annotations

import logging
import re
from typing import Any, AsyncIterator

import orjson

from ..errors import RequestError
from ..families import Family
from ..templates import ChatTemplate, render_chatml
from ..tokenizer import Tokenizer
from .base import Engine, EngineChunk, EngineStream, GenerationRequest

__all__ = ["UpstreamEngine", "UpstreamError", "UpstreamStream", "ENGINES", "DEFAULT_MAX_TOKENS"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_MAX_TOKENS = 4096  # sent when the request names no limit (vLLM's own default is 16)
# A special-token-looking suffix: what SGLang leaves at the end with no_stop_trim when EOS matched.
_SPECIAL_SUFFIX = re.compile(r"(?:<\|[^|<>\s]{1,48}\|>|<｜[^｜<>]{1,48}｜>|</s>|<eos>|<end_of_turn>|\[/?[A-Z_]{2,20}\])$")


class UpstreamError(RequestError):
    """The upstream engine failed or is unreachable: a 502 before the response starts."""

    def __init__(self, message: str) -> None:
        super().__init__(message, param=None, status=502, kind="server_error")


def _logprob_entry(token: str, logprob: float, top: list[tuple[str, float]], k: int) -> dict:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top[:k]]}


def _json_schema(request: GenerationRequest) -> dict | None:
    """The JSON schema a reply must follow (``{}``: any JSON object), or None."""
    fmt = request.response_format
    if fmt is None:
        return None
    schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
    return schema if isinstance(schema, dict) else {}


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)


def _error_text(event: Any) -> str | None:
    """The message of an error event (``{"error": ...}`` or ``{"object": "error", ...}``)."""
    if not isinstance(event, dict):
        return None
    error = event.get("error")
    if error is None and event.get("object") == "error":
        error = event
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


class _State:
    """Per-request bookkeeping a protocol may use (SGLang's cumulative outputs)."""

    def __init__(self) -> None:
        self.text = ""
        self.ids: list[int] = []
        self.cumulative: bool | None = None
        self.logprobs_seen = 0
        self.held = ""  # text held back because it may be the start of a stop string
        self.prompt_tokens: int | None = None


# ---- the engines' protocols ------------------------------------------------------------------


class _Protocol:
    name = "?"
    path = "/"

    def body(self, engine: "UpstreamEngine", request: GenerationRequest, prompt: str) -> dict:
        raise NotImplementedError

    def chunk(self, engine: "UpstreamEngine", request: GenerationRequest, event: dict, state: _State) -> EngineChunk | None:
        """One event as a chunk (None: nothing to forward); ``finish_reason`` set on the last."""
        raise NotImplementedError

    def usage(self, event: dict, state: _State) -> None:
        """Note a prompt token count the event reports."""
        usage = event.get("usage") if isinstance(event.get("usage"), dict) else event.get("meta_info")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            state.prompt_tokens = usage["prompt_tokens"]


class _VLLM(_Protocol):
    """vLLM ``/v1/completions``: per-token deltas with ``token_ids``; a last usage chunk."""

    name, path = "vllm", "/v1/completions"

    def body(self, engine, request, prompt):
        body: dict[str, Any] = {
            "prompt": prompt, "stream": True, "return_token_ids": True, "skip_special_tokens": False,
            "spaces_between_special_tokens": False, "add_special_tokens": False,  # the template wrote BOS
            "max_tokens": request.max_tokens or engine.default_max_tokens,
            "stream_options": {"include_usage": True},
        }
        if engine.model:
            body["model"] = engine.model
        if request.stop:
            body["stop"] = request.stop
        if request.logprobs:
            body["logprobs"] = request.top_logprobs
        schema = _json_schema(request)
        if schema is not None:
            body["structured_outputs"] = {"json": schema} if schema else {"json_object": True}
        return body

    def usage(self, event, state):
        choices = event.get("choices") or [{}]
        for ids in (event.get("prompt_token_ids"), choices[0].get("prompt_token_ids")):
            if isinstance(ids, list):
                state.prompt_tokens = len(ids)
        super().usage(event, state)

    def chunk(self, engine, request, event, state):
        choices = event.get("choices") or []
        if not choices:
            return None
        choice = choices[0]
        ids = list(choice.get("token_ids") or [])
        logprobs = None
        lp = choice.get("logprobs")
        if request.logprobs and isinstance(lp, dict) and lp.get("tokens"):
            tops = lp.get("top_logprobs") or [None] * len(lp["tokens"])
            logprobs = [
                _logprob_entry(tok, value if value is not None else 0.0,
                               sorted((top or {}).items(), key=lambda kv: -kv[1]), request.top_logprobs)
                for tok, value, top in zip(lp["tokens"], lp.get("token_logprobs") or [], tops)]
        finish = choice.get("finish_reason")
        reason = stop_sequence = None
        if finish is not None:
            reason = "length" if finish == "length" else "stop"
            stop_reason = choice.get("stop_reason")
            if isinstance(stop_reason, str) and stop_reason in request.stop:
                stop_sequence = stop_reason
            if finish == "abort":
                raise UpstreamError("vLLM aborted the request")
        return EngineChunk(choice.get("text") or "", ids, logprobs, reason, stop_sequence)


class _SGLang(_Protocol):
    """SGLang ``/generate``: ``text`` / ``output_ids`` cumulative by default (incremental
    with ``--incremental-streaming-output``); the matched stop string or EOS is kept
    (``no_stop_trim``) and trimmed here, so text and ids stay aligned."""

    name, path = "sglang", "/generate"

    def body(self, engine, request, prompt):
        params: dict[str, Any] = {"max_new_tokens": request.max_tokens or engine.default_max_tokens,
                                  "skip_special_tokens": False, "spaces_between_special_tokens": False,
                                  "no_stop_trim": True}
        if request.stop:
            params["stop"] = request.stop
        body: dict[str, Any] = {"text": prompt, "sampling_params": params, "stream": True}
        if request.logprobs:
            body.update(return_logprob=True, top_logprobs_num=request.top_logprobs, return_text_in_logprobs=True)
        schema = _json_schema(request)
        if schema is not None:
            params["json_schema"] = orjson.dumps(schema or {"type": "object"}).decode()
        if engine.model:
            body["model"] = engine.model
        return body

    def chunk(self, engine, request, event, state):
        meta = event.get("meta_info") or {}
        text = event.get("text") or ""
        ids = list(event.get("output_ids") or [])
        if state.cumulative is None and state.ids:
            total = meta.get("completion_tokens")
            if isinstance(total, int) and ids:
                state.cumulative = len(ids) == total
            else:
                state.cumulative = ids[: len(state.ids)] == state.ids and text.startswith(state.text)
        if state.cumulative:
            new_ids = ids[len(state.ids):]
            if text.startswith(state.text):
                delta = text[len(state.text):]
            else:  # the detokenizer revised text already sent: forward only what is new
                common = 0
                for a, b in zip(text, state.text):
                    if a != b:
                        break
                    common += 1
                delta = text[max(common, len(state.text)):]
            state.text, state.ids = text, ids
        else:
            new_ids, delta = ids, text
            state.text += text
            state.ids += ids
        logprobs = None
        entries = meta.get("output_token_logprobs")
        if request.logprobs and isinstance(entries, list):
            tops = meta.get("output_top_logprobs") or []
            start = state.logprobs_seen if len(entries) > len(new_ids) else 0
            fresh = entries[start:]
            fresh_tops = tops[start:] if len(tops) >= len(entries) else [None] * len(fresh)
            state.logprobs_seen += len(fresh)
            logprobs = [_logprob_entry(e[2] if len(e) > 2 and e[2] is not None else "", e[0] or 0.0,
                                       [(t[2] if len(t) > 2 and t[2] is not None else "", t[0] or 0.0)
                                        for t in (top or [])], request.top_logprobs)
                        for e, top in zip(fresh, fresh_tops)]
        finish = meta.get("finish_reason")
        reason = stop_sequence = None
        if isinstance(finish, dict):
            kind, matched = finish.get("type"), finish.get("matched")
            if kind == "abort":
                raise UpstreamError(f"SGLang aborted the request: {finish.get('message') or 'no reason given'}")
            reason = "length" if kind == "length" else "stop"
            tail = state.held + delta
            if isinstance(matched, str) and matched and tail.endswith(matched):
                tail, stop_sequence = tail[: -len(matched)], matched
            elif isinstance(matched, int) and new_ids and new_ids[-1] == matched:
                eos = engine.token_text(matched)
                if eos and tail.endswith(eos):
                    tail = tail[: -len(eos)]
                else:
                    m = _SPECIAL_SUFFIX.search(tail)
                    tail = tail[: m.start()] if m else tail
            state.held = ""
            return EngineChunk(tail, new_ids, logprobs, reason, stop_sequence)
        delta = _hold_stop_prefix(state, delta, request.stop)
        return EngineChunk(delta, new_ids, logprobs)


def _hold_stop_prefix(state: _State, delta: str, stops: list[str]) -> str:
    """Keep back a tail that could begin a stop string (it is trimmed if one matches)."""
    text = state.held + delta
    state.held = ""
    if not stops or not text:
        return text
    keep = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), keep, -1):
            if text.endswith(stop[:n]):
                keep = n
                break
    if keep:
        state.held = text[-keep:]
        return text[:-keep]
    return text


class _LMDeploy(_Protocol):
    """LMDeploy ``/generate``: incremental ``text`` / ``output_ids``; errors as ``{"error": ...}``."""

    name, path = "lmdeploy", "/generate"

    def body(self, engine, request, prompt):
        body: dict[str, Any] = {"prompt": prompt, "stream": True, "skip_special_tokens": False,
                                "spaces_between_special_tokens": False,
                                "max_tokens": request.max_tokens or engine.default_max_tokens}
        if request.stop:
            body["stop"] = request.stop
        if request.logprobs:
            body["return_logprob"] = True
        if request.response_format is not None:
            _warn_once("lmdeploy's /generate takes no JSON schema: the reply format is asked for, not enforced")
        if engine.model:
            body["model"] = engine.model
        return body

    def chunk(self, engine, request, event, state):
        meta = event.get("meta_info") or {}
        text = event.get("text") or ""
        ids = list(event.get("output_ids") or [])
        logprobs = None
        entries = meta.get("output_token_logprobs")
        if request.logprobs and isinstance(entries, list):
            logprobs = [_logprob_entry(text if len(entries) == 1 else engine.token_text(e[1]) or "", e[0] or 0.0,
                                       [], request.top_logprobs) for e in entries]
        finish = meta.get("finish_reason")
        reason = None
        if isinstance(finish, (dict, str)):
            kind = finish.get("type") if isinstance(finish, dict) else finish
            if kind == "abort":
                raise UpstreamError("LMDeploy aborted the request")
            reason = "length" if kind == "length" else "stop"
        return EngineChunk(text, ids, logprobs, reason)


class _LlamaCpp(_Protocol):
    """llama.cpp ``/completion``: ``content`` / ``tokens`` per event; the last has ``stop: true``."""

    name, path = "llamacpp", "/completion"

    def body(self, engine, request, prompt):
        max_tokens = request.max_tokens or engine.default_max_tokens
        body: dict[str, Any] = {"prompt": prompt, "n_predict": max_tokens, "stream": True, "return_tokens": True,
                                "cache_prompt": True}
        if request.stop:
            body["stop"] = request.stop
        if request.logprobs:
            body["n_probs"] = max(request.top_logprobs, 1)
        schema = _json_schema(request)
        if schema is not None:
            body["json_schema"] = schema or {"type": "object"}
        if engine.model:
            body["model"] = engine.model
        return body

    def usage(self, event, state):
        timings = event.get("timings") if isinstance(event.get("timings"), dict) else {}
        for value in (event.get("tokens_evaluated"), timings.get("prompt_n")):
            if isinstance(value, int):
                state.prompt_tokens = value
                return

    def chunk(self, engine, request, event, state):
        text = event.get("content") or ""
        ids = list(event.get("tokens") or [])
        logprobs = None
        probs = event.get("completion_probabilities") or event.get("probs")
        if request.logprobs and isinstance(probs, list):
            logprobs = [_logprob_entry(p.get("token", ""), p.get("logprob", 0.0),
                                       [(t.get("token", ""), t.get("logprob", 0.0)) for t in p.get("top_logprobs") or ()],
                                       request.top_logprobs) for p in probs]
        if not event.get("stop"):
            return EngineChunk(text, ids, logprobs)
        self.usage(event, state)
        kind = event.get("stop_type")
        stop_sequence = event.get("stopping_word") or None if kind == "word" else None
        return EngineChunk(text, ids, logprobs, "length" if kind == "limit" else "stop", stop_sequence)


ENGINES: dict[str, _Protocol] = {p.name: p for p in (_VLLM(), _SGLang(), _LMDeploy(), _LlamaCpp())}


# ---- the shared machinery --------------------------------------------------------------------


class UpstreamStream(EngineStream):
    """One upstream generation.  ``open`` sends the request and reads the first event;
    the app awaits it before the response starts.  ``bind_usage`` lets the stream set
    the prompt token count the upstream reports at the end (vLLM's usage chunk)."""

    def __init__(self, engine: "UpstreamEngine", request: GenerationRequest, body: dict, prompt_tokens: int) -> None:
        super().__init__(prompt_tokens, self._run())
        self._engine = engine
        self._request = request
        self._body = body
        self._protocol = engine.protocol
        self._state = _State()
        self._response: Any = None
        self._events: AsyncIterator[Any] | None = None
        self._first: Any = None
        self._usage: Any = None
        self._finished = self._failed = False
        self._closed = False

    def bind_usage(self, usage: Any) -> None:
        self._usage = usage

    async def open(self) -> None:
        engine = self._engine
        url = engine.url + self._protocol.path
        engine.streams_started += 1
        try:
            client = engine.client()
            self._response = await client.send(client.build_request("POST", url, json=self._body), stream=True)
        except Exception as exc:
            engine.upstream_errors += 1
            raise UpstreamError(f"upstream {engine.protocol.name} at {engine.url} is unreachable: "
                                f"{type(exc).__name__}: {exc}") from None
        response = self._response
        if response.status_code >= 400:
            self._failed = True
            try:
                raw = await response.aread()
            finally:
                await self._close_response()
            engine.upstream_errors += 1
            try:
                detail = _error_text(orjson.loads(raw)) or raw.decode(errors="replace")
            except orjson.JSONDecodeError:
                detail = raw.decode(errors="replace")
            raise UpstreamError(f"upstream {engine.protocol.name} answered HTTP {response.status_code}: "
                                f"{detail.strip()[:500]}")
        self._events = self._read_events()
        try:
            self._first = await self._events.__anext__()
        except StopAsyncIteration:
            self._first = None
        except UpstreamError:
            engine.upstream_errors += 1
            self._failed = True
            await self._close_response()
            raise
        except Exception as exc:
            engine.upstream_errors += 1
            self._failed = True
            await self._close_response()
            raise UpstreamError(f"upstream {engine.protocol.name} failed: {type(exc).__name__}: {exc}") from None
        if self._first is not None:
            self._protocol.usage(self._first, self._state)
            if self._state.prompt_tokens is not None:
                self.prompt_tokens = self._state.prompt_tokens

    async def _read_events(self) -> AsyncIterator[Any]:
        """JSON events of an SSE body (``data:`` lines, llama.cpp's ``error:`` lines, bare
        JSON lines); ends at ``[DONE]``.  An error event raises ``UpstreamError``."""
        name = self._protocol.name
        async for line in self._response.aiter_lines():
            line = line.strip()
            if not line or line.startswith((":", "event:", "id:", "retry:")):
                continue
            is_error = line.startswith("error:")
            if line.startswith("data:") or is_error:
                line = line.split(":", 1)[1].strip()
            if line == "[DONE]":
                return
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise UpstreamError(f"upstream {name} sent a line that is not JSON: {line[:200]!r}") from None
            message = _error_text(event) if (is_error or isinstance(event, dict)) else None
            if is_error and message is None:
                message = str(event)
            if message is not None:
                raise UpstreamError(f"upstream {name} error: {message}")
            if isinstance(event, dict):
                yield event

    async def _run(self) -> AsyncIterator[EngineChunk]:
        if self._events is None:
            await self.open()
        engine, protocol, state, request = self._engine, self._protocol, self._state, self._request
        try:
            first, self._first = self._first, None
            pending = [first] if first is not None else []
            final: EngineChunk | None = None
            events = self._events
            while True:
                if pending:
                    event = pending.pop()
                else:
                    try:
                        event = await events.__anext__()
                    except StopAsyncIteration:
                        break
                if final is not None:  # after the finish: only usage
                    protocol.usage(event, state)
                    continue
                protocol.usage(event, state)
                chunk = protocol.chunk(engine, request, event, state)
                if chunk is None:
                    continue
                engine.tokens_generated += len(chunk.token_ids or ())
                if chunk.finish_reason is not None:
                    final = chunk  # read on to the end for the usage the upstream reports
                    continue
                if chunk.text or chunk.token_ids or chunk.logprobs:
                    yield chunk
            if final is None:
                raise UpstreamError(f"upstream {protocol.name} ended the stream without a finish reason")
            if state.prompt_tokens is not None and self._usage is not None:
                self._usage.prompt_tokens = state.prompt_tokens
            self._finished = True
            yield final
        except UpstreamError:
            self._failed = True
            engine.upstream_errors += 1
            raise
        except Exception as exc:  # a connection that broke mid-stream
            if isinstance(exc, GeneratorExit):
                raise
            self._failed = True
            engine.upstream_errors += 1
            raise UpstreamError(f"upstream {protocol.name} failed mid-stream: {type(exc).__name__}: {exc}") from exc
        finally:
            await self._close_response()

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

    def token_text(self, token_id: int) -> str | None:
        decode = getattr(self.tokenizer, "_decode", None) if self.tokenizer.real else None
        try:
            return decode([token_id]) if decode is not None else None
        except Exception:
            return None

    def prompt(self, request: GenerationRequest) -> str:
        if self.template is None:
            return render_chatml(request.messages, request.tools)
        try:
            prompt = self.template.render(request.messages, request.tools, request.thinking,
                                          request.reasoning_effort)
        except Exception as exc:  # the model's template rejects this conversation
            raise RequestError(f"messages is rejected by the {self.family.name} chat template: {exc}",
                               "messages") from None
        bos = getattr(self.template, "_bos", "")
        if bos and self.protocol.name != "vllm" and prompt.startswith(bos):
            prompt = prompt[len(bos):]  # these engines add BOS themselves when tokenizing text
        return prompt

    def count_prompt(self, request: GenerationRequest) -> int:
        """Counted with lmparse's copy of the tokenizer (the engine's own count comes with a reply)."""
        return self.tokenizer.count(self.prompt(request))

    def start(self, request: GenerationRequest) -> EngineStream:
        prompt = self.prompt(request)
        body = self.protocol.body(self, request, prompt)
        return UpstreamStream(self, request, body, self.tokenizer.count(prompt))

    def stats(self) -> dict[str, int]:
        return {"streams_started": self.streams_started, "streams_cancelled": self.streams_cancelled,
                "tokens_generated": self.tokens_generated, "upstream_errors": self.upstream_errors}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
