"""How each upstream engine's events become ``EngineChunk`` s: one decoder per protocol, no I/O.

A decoder is made per generation and owns that generation's state.  ``decode(event)``
notes the prompt token counts the event reports (all, and those served from the
engine's prefix cache) and returns the chunk to forward (None: nothing to forward).  The
chunk with the finish reason is kept back, because the engine may still report usage
after it; ``finish()`` returns it once the stream has ended, or raises ``UpstreamError``
if the engine never finished.  An abort the engine reports is an ``UpstreamError`` from
``decode``.  The end-of-turn text (``end_texts``: the family's ``end_of_turn``)
is cut from the end of the reply: a chunk that ends with one waits for the next event,
and goes on in front of it unless that event ends the generation.

``refusal`` reads an engine's error answer: a client's mistake (the prompt is longer
than the context, a parameter out of range) is an ``UpstreamRefusal``, a 400 carrying
the engine's own words without any URL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeGuard

from ..errors import RequestError
from .base import EngineChunk, GenerationRequest
from .special import SPECIAL_SHAPE
from .sse import Event, error_text

__all__ = ["UpstreamError", "UpstreamRefusal", "REFUSED_STATUSES", "refusal", "error_status", "EventDecoder",
           "VLLMDecoder", "SGLangDecoder", "LMDeployDecoder", "LlamaCppDecoder", "TokenText"]

TokenText = Callable[[int], "str | None"]  # a token id's own text (None: unknown)

Logprob = dict[str, Any]  # an OpenAI ``ChatCompletionTokenLogprob``

# A special-token-shaped suffix: what SGLang leaves at the end with no_stop_trim when an
# EOS matched whose text neither lmparse's tokenizer nor the family's end_of_turn knows.
_SPECIAL_SUFFIX = re.compile(f"(?:{SPECIAL_SHAPE.pattern}|</s>|<eos>)$")


class UpstreamError(RequestError):
    """The upstream engine failed or is unreachable: a 502 before the response starts."""

    def __init__(self, message: str) -> None:
        super().__init__(message, param=None, status=502, kind="server_error")


class UpstreamRefusal(UpstreamError):
    """The engine refused the request as the client's mistake: a 400 with the engine's reason
    (``code`` ``context_length_exceeded`` when the prompt does not fit, as OpenAI says it)."""

    def __init__(self, reason: str, code: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.kind, self.code = 400, "invalid_request_error", code


# HTTP statuses that mean "this request is wrong" (others, like 401, 404 or 429, are the
# gateway's setup or the engine's state: a 502).
REFUSED_STATUSES = (400, 413, 422)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+")
_CONTEXT_OVERFLOW = re.compile(r"context (?:length|size|window)|exceed_context_size|session_len", re.I)


def _error_detail(error: Any) -> dict[str, Any]:
    """The object an error answer describes itself in (``{"error": {...}}`` or the answer)."""
    detail = error.get("error") if isinstance(error, dict) else None
    return detail if isinstance(detail, dict) else error if isinstance(error, dict) else {}


def refusal(error: Any, fallback: str) -> UpstreamRefusal:
    """The client's error for an engine's error answer (``error``: its JSON, or None)."""
    reason = error_text(error) or fallback
    reason = " ".join(_URL.sub("<url>", reason).split())[:500] or "the engine refused the request"
    kind = _error_detail(error).get("type")
    overflow = _CONTEXT_OVERFLOW.search(f"{reason} {kind if isinstance(kind, str) else ''}") is not None
    return UpstreamRefusal(reason, "context_length_exceeded" if overflow else None)


def error_status(error: Any) -> int | None:
    """The HTTP status an error answer names (``code`` or ``status``), if it names one."""
    detail = _error_detail(error)
    for key in ("code", "status"):
        value = detail.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _logprob_entry(token: str, logprob: float, top: list[tuple[str, float]], k: int) -> Logprob:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top[:k]]}


def _finish_reason(kind: Any, length: str) -> str:
    return "length" if kind == length else "stop"


def _joined(first: EngineChunk, then: EngineChunk) -> EngineChunk:
    """Two chunks as one: the text, ids and logprobs of both, the finish of the second."""
    logprobs = (first.logprobs or []) + (then.logprobs or []) if first.logprobs or then.logprobs else None
    return EngineChunk(first.text + then.text, (first.token_ids or []) + (then.token_ids or []), logprobs,
                       then.finish_reason, then.stop_sequence)


class EventDecoder:
    """The shared part: usage notes, the kept-back last chunk, the end check."""

    name: ClassVar[str] = "?"

    def __init__(self, request: GenerationRequest, token_text: TokenText, end_texts: tuple[str, ...] = ()) -> None:
        self._request = request
        self._token_text = token_text
        self._end_texts = tuple(t for t in end_texts if t)
        self._final: EngineChunk | None = None
        self._held_end: EngineChunk | None = None  # a chunk ending in end-of-turn text, until the next event
        self.prompt_tokens: int | None = None  # the engine's own count, once it reports one
        self.cached_tokens: int | None = None  # of those, served from its prefix cache

    def decode(self, event: Event) -> EngineChunk | None:
        self.note_usage(event)
        if self._final is not None:  # after the finish: only usage
            return None
        chunk = self._chunk(event)
        if chunk is None:
            return None
        if self._held_end is not None:
            chunk, self._held_end = _joined(self._held_end, chunk), None
        if chunk.finish_reason is not None:
            chunk.text = self._without_end(chunk.text)
            self._final = chunk
            return None
        if self._end_texts and chunk.text.endswith(self._end_texts):
            self._held_end = chunk
            return None
        return chunk if chunk.text or chunk.token_ids or chunk.logprobs else None

    def _without_end(self, text: str) -> str:
        """``text`` without the end-of-turn texts it ends with."""
        ends = self._end_texts
        while ends and text.endswith(ends):
            text = text[: -len(next(end for end in ends if text.endswith(end)))]
        return text

    def finish(self) -> EngineChunk:
        """The last chunk (with the finish reason), once the stream has ended."""
        if self._final is None:
            raise UpstreamError(f"upstream {self.name} ended the stream without a finish reason")
        return self._final

    def note_usage(self, event: Event) -> None:
        """Note the prompt token counts the event reports (vLLM's usage with
        ``prompt_tokens_details``, SGLang's and LMDeploy's ``meta_info``)."""
        usage = event.get("usage") if isinstance(event.get("usage"), dict) else event.get("meta_info")
        if not isinstance(usage, dict):
            return
        if isinstance(usage.get("prompt_tokens"), int):
            self.prompt_tokens = usage["prompt_tokens"]
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else usage.get("cached_tokens")
        if isinstance(cached, int):
            self.cached_tokens = cached

    def _chunk(self, event: Event) -> EngineChunk | None:
        """One event as a chunk (None: nothing to forward); ``finish_reason`` set on the last."""
        raise NotImplementedError

    def _wants_logprobs(self, entries: Any) -> TypeGuard[list[Any]]:
        """Logprobs were asked for and the event carries a list of them."""
        return self._request.logprobs and isinstance(entries, list)


class VLLMDecoder(EventDecoder):
    """vLLM ``/v1/completions``: per-token deltas with ``token_ids``; a last usage chunk."""

    name = "vllm"

    def note_usage(self, event: Event) -> None:
        choices = event.get("choices") or [{}]
        for ids in (event.get("prompt_token_ids"), choices[0].get("prompt_token_ids")):
            if isinstance(ids, list):
                self.prompt_tokens = len(ids)
        super().note_usage(event)

    def _chunk(self, event: Event) -> EngineChunk | None:
        choices = event.get("choices") or []
        if not choices:
            return None
        choice = choices[0]
        ids = list(choice.get("token_ids") or [])
        logprobs = self._logprobs(choice.get("logprobs"))
        finish = choice.get("finish_reason")
        if finish is None:
            return EngineChunk(choice.get("text") or "", ids, logprobs)
        stop_reason = choice.get("stop_reason")
        stop_sequence = stop_reason if isinstance(stop_reason, str) and stop_reason in self._request.stop else None
        if finish == "abort":
            raise UpstreamError("vLLM aborted the request")
        return EngineChunk(choice.get("text") or "", ids, logprobs, _finish_reason(finish, "length"), stop_sequence)

    def _logprobs(self, lp: Any) -> list[Logprob] | None:
        if not (self._request.logprobs and isinstance(lp, dict) and lp.get("tokens")):
            return None
        tops = lp.get("top_logprobs") or [None] * len(lp["tokens"])
        return [_logprob_entry(tok, value if value is not None else 0.0,
                               sorted((top or {}).items(), key=lambda kv: -kv[1]), self._request.top_logprobs)
                for tok, value, top in zip(lp["tokens"], lp.get("token_logprobs") or [], tops, strict=False)]


def _sglang_token(entry: list[Any]) -> str:
    """The token text of an SGLang ``[logprob, id, text]`` entry."""
    return entry[2] if len(entry) > 2 and entry[2] is not None else ""


class SGLangDecoder(EventDecoder):
    """SGLang ``/generate``: ``text`` / ``output_ids`` cumulative by default (incremental
    with ``--incremental-streaming-output``); the matched stop string or EOS is kept
    (``no_stop_trim``) and trimmed here, so text and ids stay aligned."""

    name = "sglang"

    def __init__(self, request: GenerationRequest, token_text: TokenText, end_texts: tuple[str, ...] = ()) -> None:
        super().__init__(request, token_text, end_texts)
        self._text = ""  # all the text so far, as the engine sent it
        self._ids: list[int] = []
        self._cumulative: bool | None = None  # known from the second event on
        self._logprobs_seen = 0
        self._held = ""  # text held back because it may be the start of a stop string

    def _chunk(self, event: Event) -> EngineChunk | None:
        meta = event.get("meta_info") or {}
        delta, new_ids = self._new_delta(event.get("text") or "", list(event.get("output_ids") or []), meta)
        logprobs = self._logprobs(meta, new_ids)
        finish = meta.get("finish_reason")
        if not isinstance(finish, dict):
            return EngineChunk(self._hold_stop_prefix(delta), new_ids, logprobs)
        kind = finish.get("type")
        if kind == "abort":
            raise UpstreamError(f"SGLang aborted the request: {finish.get('message') or 'no reason given'}")
        tail, self._held = self._held + delta, ""
        tail, stop_sequence = self._trim_stop(tail, finish.get("matched"), new_ids)
        return EngineChunk(tail, new_ids, logprobs, _finish_reason(kind, "length"), stop_sequence)

    def _new_delta(self, text: str, ids: list[int], meta: Event) -> tuple[str, list[int]]:
        """The text and ids this event adds, whichever mode the engine streams in."""
        if self._cumulative is None and self._ids:
            total = meta.get("completion_tokens")
            if isinstance(total, int) and ids:
                self._cumulative = len(ids) == total
            else:
                self._cumulative = ids[: len(self._ids)] == self._ids and text.startswith(self._text)
        if not self._cumulative:
            self._text += text
            self._ids += ids
            return text, ids
        # Past what was sent: if the detokenizer revised sent text, the revision is not resent.
        delta, new_ids = text[len(self._text):], ids[len(self._ids):]
        self._text, self._ids = text, ids
        return delta, new_ids

    def _logprobs(self, meta: Event, new_ids: list[int]) -> list[Logprob] | None:
        entries = meta.get("output_token_logprobs")
        if not self._wants_logprobs(entries):
            return None
        tops = meta.get("output_top_logprobs") or []
        start = self._logprobs_seen if len(entries) > len(new_ids) else 0  # cumulative lists restart at 0
        fresh = entries[start:]
        fresh_tops = tops[start:] if len(tops) >= len(entries) else [None] * len(fresh)
        self._logprobs_seen += len(fresh)
        return [_logprob_entry(_sglang_token(e), e[0] or 0.0,
                               [(_sglang_token(t), t[0] or 0.0) for t in (top or [])], self._request.top_logprobs)
                for e, top in zip(fresh, fresh_tops, strict=False)]

    def _trim_stop(self, tail: str, matched: Any, new_ids: list[int]) -> tuple[str, str | None]:
        """The last text without the stop string or EOS text ``no_stop_trim`` kept, and the stop string."""
        if isinstance(matched, str) and matched and tail.endswith(matched):
            return tail[: -len(matched)], matched
        if isinstance(matched, int) and new_ids and new_ids[-1] == matched:
            eos = self._token_text(matched)
            if eos and tail.endswith(eos):
                return tail[: -len(eos)], None
            if self._end_texts and tail.endswith(self._end_texts):
                return self._without_end(tail), None
            m = _SPECIAL_SUFFIX.search(tail)
            return (tail[: m.start()] if m else tail), None
        return tail, None

    def _hold_stop_prefix(self, delta: str) -> str:
        """Keep back a tail that could begin a stop string (it is trimmed if one matches)."""
        text, self._held = self._held + delta, ""
        stops = self._request.stop
        if not stops or not text:
            return text
        keep = 0
        for stop in stops:
            for n in range(min(len(stop) - 1, len(text)), keep, -1):
                if text.endswith(stop[:n]):
                    keep = n
                    break
        if keep:
            self._held = text[-keep:]
            return text[:-keep]
        return text


class LMDeployDecoder(EventDecoder):
    """LMDeploy ``/generate``: incremental ``text`` / ``output_ids``; errors as ``{"error": ...}``."""

    name = "lmdeploy"

    def _chunk(self, event: Event) -> EngineChunk | None:
        meta = event.get("meta_info") or {}
        text = event.get("text") or ""
        ids = list(event.get("output_ids") or [])
        logprobs = None
        entries = meta.get("output_token_logprobs")
        if self._wants_logprobs(entries):
            # One entry is this event's text; for several, each id's own text.
            logprobs = [_logprob_entry(text if len(entries) == 1 else self._token_text(e[1]) or "", e[0] or 0.0,
                                       [], self._request.top_logprobs) for e in entries]
        finish = meta.get("finish_reason")
        if not isinstance(finish, (dict, str)):
            return EngineChunk(text, ids, logprobs)
        kind = finish.get("type") if isinstance(finish, dict) else finish
        if kind == "abort":
            raise UpstreamError("LMDeploy aborted the request")
        return EngineChunk(text, ids, logprobs, _finish_reason(kind, "length"))


def _llamacpp_top(prob: dict[str, Any]) -> list[tuple[str, float]]:
    """The alternatives of a llama.cpp ``completion_probabilities`` entry."""
    return [(t.get("token", ""), t.get("logprob", 0.0)) for t in prob.get("top_logprobs") or ()]


class LlamaCppDecoder(EventDecoder):
    """llama.cpp ``/completion``: ``content`` / ``tokens`` per event; the last has ``stop: true``."""

    name = "llamacpp"

    def note_usage(self, event: Event) -> None:
        """``tokens_evaluated`` is the whole prompt; ``timings.prompt_n`` only the part not
        served from the cache, ``timings.cache_n`` the cached part (``tokens_cached`` counts
        the slot's whole cache, the reply included: not a prompt count)."""
        timings = event.get("timings")
        if not isinstance(timings, dict):
            timings = {}
        cached = timings.get("cache_n")
        if isinstance(cached, int):
            self.cached_tokens = cached
        if isinstance(event.get("tokens_evaluated"), int):
            self.prompt_tokens = event["tokens_evaluated"]
        elif isinstance(timings.get("prompt_n"), int):
            self.prompt_tokens = timings["prompt_n"] + (cached if isinstance(cached, int) else 0)

    def _chunk(self, event: Event) -> EngineChunk | None:
        text = event.get("content") or ""
        ids = list(event.get("tokens") or [])
        logprobs = None
        probs = event.get("completion_probabilities") or event.get("probs")
        if self._wants_logprobs(probs):
            logprobs = [_logprob_entry(p.get("token", ""), p.get("logprob", 0.0), _llamacpp_top(p),
                                       self._request.top_logprobs) for p in probs]
        if not event.get("stop"):
            return EngineChunk(text, ids, logprobs)
        kind = event.get("stop_type")
        word = event.get("stopping_word")
        # A stop word that is no stop string of the client's is a stop token's text (bodies).
        stop_sequence = word if kind == "word" and word in self._request.stop else None
        return EngineChunk(text, ids, logprobs, _finish_reason(kind, "limit"), stop_sequence)
