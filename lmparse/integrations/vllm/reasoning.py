"""``lmparse-<name>`` as a vLLM ``ReasoningParser``.

Alone it runs its own lmparse parser (reasoning only); beside an ``lmparse-*`` tool parser of
the same vLLM ``Parser`` the two share one (``Link``): this side then hands vLLM the reasoning and
keeps the rest (content, calls, even calls nested inside reasoning) for the tool side, which
vLLM calls from the delta that ends reasoning on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from lmparse.registry import ReasoningParserManager as LmReasoning
from lmparse.registry import ResponseParserManager as LmResponse
from lmparse.reasoning import ReasoningParser as LmReasoningParser
from lmparse.request import normalize_request

from ._compat import ReasoningParser, delta_message
from .session import Link, class_suffix, log, reads_ids

__all__ = ["LmparseReasoningParser", "reasoning_parser_class", "find_last", "ReasoningBlock"]


def find_last(ids: Sequence[int], seq: Sequence[int], start: int = 0) -> int:
    """The index of the last occurrence of ``seq`` in ``ids[start:]``, or -1."""
    n = len(seq)
    if not n:
        return -1
    for i in range(len(ids) - n, start - 1, -1):
        if ids[i] == seq[0] and list(ids[i:i + n]) == list(seq):
            return i
    return -1


class LmparseReasoningParser(ReasoningParser):  # type: ignore[misc]
    """The adapter; ``reasoning_parser_class`` makes one subclass per lmparse reasoning name."""

    lmparse_name: str = ""
    lmparse_response = "default"  # "gpt-oss": the reasoning block is the response parser's own
    engine_based_streaming = True  # bare deltas; has_engine_confirmed_reasoning_end() decides the hand-off

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.chat_template_kwargs = dict(kwargs.get("chat_template_kwargs") or {})
        self.link: Link | None = None  # set by an lmparse tool adapter of the same vLLM Parser
        self._own: Link | None = None
        try:
            request = normalize_request({"chat_template_kwargs": self.chat_template_kwargs})
        except ValueError:
            request = normalize_request(None)
        self.descriptor: LmReasoningParser | ReasoningBlock
        if self.lmparse_response == "default":
            self.descriptor = LmReasoning.get(self.lmparse_name)(request)
        else:
            self.descriptor = ReasoningBlock(*cast(Any, LmResponse.get(self.lmparse_response)).reasoning_block())
        self.start_ids = self._encode(self.descriptor.start_tag)
        self.end_ids = self._encode(self.descriptor.end_tag)

    def _encode(self, tag: str | None) -> list[int]:
        if not tag or self.model_tokenizer is None:
            return []
        try:
            return list(self.model_tokenizer.encode(tag, add_special_tokens=False))
        except Exception:  # a tokenizer without this signature: token checks off, text parsing unaffected
            return []

    def _link(self) -> Link:
        if self.link is not None:
            return self.link
        if self._own is None:
            default = self.lmparse_response == "default"
            self._own = Link(None, self.lmparse_name if default else None, None, self.chat_template_kwargs,
                             self.lmparse_response, reads_ids(self.lmparse_response, self.model_tokenizer))
        return self._own

    @property
    def reasoning_start_str(self) -> str | None:
        return self.descriptor.start_tag

    @property
    def reasoning_end_str(self) -> str | None:
        return self.descriptor.end_tag

    # ---- token-level checks (also the engine core's grammar gate) ----------------------

    def _prompt_tail(self, ids: Sequence[int]) -> str | None:
        """"open" when the prompt ends inside reasoning, "closed" right after it, else None."""
        end = len(ids)
        for _ in range(4):
            for state, seq in (("open", self.start_ids), ("closed", self.end_ids)):
                if seq and end >= len(seq) and list(ids[end - len(seq):end]) == seq:
                    return state
            if not end or self._decoded(ids[end - 1]).strip():
                return None
            end -= 1  # a whitespace token after the tag (Qwen3's "</think>\n\n")
        return None

    def _decoded(self, token: int) -> str:
        try:
            return str(self.model_tokenizer.decode([token]))
        except Exception:
            return "x"

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """For the rendered prompt: does generation start after reasoning?"""
        tail = self._prompt_tail(input_ids)
        if tail is not None:
            return tail == "closed"
        return not self.descriptor.starts_in_reasoning()

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Sequence[int]) -> bool:
        """Did this step's tokens close reasoning?  Looks at the delta only (linear)."""
        window = len(delta_ids) + max(len(self.end_ids) - 1, 0)
        return find_last(input_ids, self.end_ids, max(len(input_ids) - window, 0)) >= 0

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        at = find_last(input_ids, self.end_ids)
        if at >= 0:
            return list(input_ids[at + len(self.end_ids):])
        return [] if self.descriptor.starts_in_reasoning() else list(input_ids)

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        """Tokens between the tags (the tags not counted), from the reply's initial mode."""
        inside, count, i, ids = self.descriptor.starts_in_reasoning(), 0, 0, list(token_ids)
        start, end = self.start_ids, self.end_ids
        while i < len(ids):
            if start and ids[i:i + len(start)] == start:
                inside, i = True, i + len(start)
            elif end and ids[i:i + len(end)] == end:
                inside, i = False, i + len(end)
            else:
                count += inside
                i += 1
        return count

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """A prompt that ends inside (or right after) reasoning fixes how the reply starts."""
        tail = self._prompt_tail(prompt_token_ids)
        if tail is not None:
            self._link().thinking = tail == "open"

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self.set_prompt_token_ids(prompt_token_ids)

    def adjust_request(self, request: Any) -> Any:
        special = set(getattr(self.model_tokenizer, "all_special_tokens", None) or ())
        if {self.descriptor.start_tag, self.descriptor.end_tag} & special and hasattr(request, "skip_special_tokens"):
            request.skip_special_tokens = False  # the tags must reach the parser
        return request

    # ---- parsing ----------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        msg = self._link().fresh(request).parse(model_output)
        return msg.reasoning_content, msg.content

    def extract_reasoning_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                    previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                    delta_token_ids: Sequence[int]) -> Any:
        session = self._link().session()
        deltas = session.feed(delta_text, delta_token_ids)
        if self.link is None:  # alone: vLLM takes the content from here on the hand-off delta
            session.outbox.add(deltas)
        else:  # shared: the rest waits for the tool side, which vLLM calls next
            session.outbox.add(deltas, reasoning=False)
            return _reasoning_only(deltas)
        return session.outbox.take()

    def has_engine_confirmed_reasoning_end(self) -> bool:
        session = self._link().current
        return session is not None and session.left_reasoning

    def finish_streaming(self) -> Any:
        """The hand-off or the end of the stream: alone, lmparse's held-back text; shared, nothing
        (the tool side flushes the shared parser)."""
        if self.link is not None:
            return None
        session = self._link().session()
        session.outbox.add(session.feed("", None, final=True))
        return session.outbox.take()


def _reasoning_only(deltas: Sequence[Any]) -> Any:
    text = "".join(d.reasoning_content for d in deltas if d.reasoning_content)
    return delta_message(reasoning=text) if text else None


class ReasoningBlock:
    """A response parser's reasoning block (``reasoning_block()``) in the shape of a reasoning
    parser's tags: what the token-level checks need."""

    def __init__(self, start_tag: str, end_tag: str, opened: bool) -> None:
        self.start_tag: str | None = start_tag
        self.end_tag: str = end_tag
        self.opened = opened

    def starts_in_reasoning(self) -> bool:
        return self.opened


def reasoning_parser_class(name: str, response: str = "default") -> type[LmparseReasoningParser]:
    log.debug("lmparse: reasoning parser lmparse-%s", name)
    return type(f"LmparseReasoningParser_{class_suffix(name)}", (LmparseReasoningParser,),
                {"lmparse_name": name, "lmparse_response": response, "__module__": __name__,
                 "__doc__": f"lmparse's {name!r} reasoning parser inside vLLM."})
