"""One lmparse parser per vLLM request, fed only deltas, shared by the tool and reasoning adapters.

vLLM builds its composed parser with the reasoning parser first, then the tool parser, and nothing
links the two; a ``Link`` made when the tool adapter is built (see ``tools.py``) carries the
names, the tools, the thinking switches and, once vLLM hands the composed parser the request, the
request itself, and makes the ``Session`` on first use.  A session is
fed every delta exactly once, whichever adapter vLLM hands it to: the work stays linear although
vLLM passes ``current_text`` too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lmparse import ResponseParserManager, create_parser
from lmparse.messages import DeltaMessage as LmDelta
from lmparse.messages import ParsedMessage

from ._compat import DeltaFunctionCall, DeltaToolCall, delta_message

__all__ = ["Session", "Link", "Outbox", "request_dict", "to_vllm_delta", "tool_dicts", "reads_ids"]

log = logging.getLogger("lmparse.integrations.vllm")


def tool_dicts(tools: Any) -> list[dict[str, Any]]:
    """vLLM's tool objects (pydantic) as OpenAI tool dicts."""
    out = []
    for tool in tools or ():
        dump = getattr(tool, "model_dump", None)
        item = dump(exclude_none=True) if dump is not None else tool
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            out.append(item)
    return out


def request_dict(request: Any, tools: Any = None, chat_template_kwargs: Any = None) -> dict[str, Any]:
    """What lmparse reads from a vLLM request (or, with none yet, from the parser's construction)."""
    body: dict[str, Any] = {"tools": tool_dicts(getattr(request, "tools", None) or tools)}
    choice = getattr(request, "tool_choice", None)
    if choice is not None:
        dump = getattr(choice, "model_dump", None)
        body["tool_choice"] = dump(exclude_none=True) if dump is not None else choice
    elif body["tools"]:
        body["tool_choice"] = "auto"
    parallel = getattr(request, "parallel_tool_calls", None)
    if isinstance(parallel, bool):
        body["parallel_tool_calls"] = parallel
    kwargs = chat_template_kwargs or getattr(request, "chat_template_kwargs", None)
    if kwargs:
        body["chat_template_kwargs"] = dict(kwargs)
    return body


def reads_ids(response: str, tokenizer: Any) -> bool:
    """Whether the model's token ids mean to ``response`` what they mean to the model: the
    response parser's ``vocabulary_probe`` (a marker and its one id, e.g. o200k_harmony's
    ``<|channel|>``); a model with another vocabulary is parsed as text."""
    probe = ResponseParserManager.get(response).vocabulary_probe
    if probe is None:
        return True
    try:
        return list(tokenizer.encode(probe[0], add_special_tokens=False)) == [probe[1]]
    except Exception:
        return False


class Outbox:
    """Deltas produced but not yet handed to vLLM, merged into one vLLM ``DeltaMessage``."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[Any] = []

    def add(self, deltas: Sequence[LmDelta], reasoning: bool = True, rest: bool = True) -> None:
        for d in deltas:
            if reasoning and d.reasoning_content:
                self.reasoning.append(d.reasoning_content)
            if rest and d.content:
                self.content.append(d.content)
            if rest and d.tool_calls:
                self.calls.extend(d.tool_calls)

    def __bool__(self) -> bool:
        return bool(self.content or self.reasoning or self.calls)

    def take(self) -> Any:
        """The pending deltas as one vLLM ``DeltaMessage``, or None when nothing is pending."""
        if not self:
            return None
        out = to_vllm_delta("".join(self.content) or None, "".join(self.reasoning) or None, self.calls)
        self.content, self.reasoning, self.calls = [], [], []
        return out


def _vllm_call(tc: Any) -> Any:
    fn = tc.function
    return DeltaToolCall(index=tc.index, id=tc.id, type=tc.type,
                         function=None if fn is None else DeltaFunctionCall(name=fn.name, arguments=fn.arguments))


def to_vllm_delta(content: str | None, reasoning: str | None, calls: Sequence[Any]) -> Any:
    """A vLLM ``DeltaMessage``; consecutive argument fragments of one call are joined."""
    merged: list[Any] = []
    for tc in calls:
        last = merged[-1] if merged else None
        if (last is not None and last.index == tc.index and tc.id is None and last.function is not None
                and tc.function is not None and tc.function.name is None):
            last.function.arguments = (last.function.arguments or "") + (tc.function.arguments or "")
            continue
        merged.append(_vllm_call(tc))
    return delta_message(content, reasoning, merged)


class Session:
    """One lmparse parser for one response; ``feed`` never raises and ignores text after the end."""

    def __init__(self, tool: str | None, reasoning: str | None, body: dict[str, Any], response: str = "default",
                 use_ids: bool = True) -> None:
        try:
            self.parser = create_parser(tool, reasoning, response, request=body)
        except ValueError as exc:  # a request lmparse refuses (e.g. a tool_choice naming no tool)
            log.warning("lmparse: %s; parsing with any tool name accepted", exc)
            self.parser = create_parser(tool, reasoning, response, request=None)
        self.use_ids = use_ids  # False: the model's token ids are not the ones the parser reads
        self.outbox = Outbox()
        self.finished = False
        self.left_reasoning = False  # something other than reasoning has come out
        self.complete: tuple[str, ParsedMessage] | None = None  # the non-stream parse, by its text

    def feed(self, text: str, token_ids: Sequence[int] | None = None, final: bool = False) -> list[LmDelta]:
        if self.finished or not (text or final):
            return []
        try:
            ids = list(token_ids) if token_ids and self.use_ids else None
            deltas = [d for d, _ in self.parser.stream_chunk(text, ids, final)]
        except Exception:  # pragma: no cover - lmparse parsers do not raise on model output
            log.exception("lmparse parser failed; passing the text through as content")
            deltas = [LmDelta(content=text)] if text else []
        self.finished = final
        if not self.left_reasoning:
            self.left_reasoning = any(d.content or d.tool_calls for d in deltas) or self.parser_state() in (
                "plain", "plain_start", "after_block")
        return deltas

    def parser_state(self) -> str:
        return str(getattr(self.parser, "state", ""))

    def parse(self, text: str) -> ParsedMessage:
        """The whole reply at once (vLLM's non-stream path), remembered for the other adapter."""
        if self.complete is not None and self.complete[0] == text:
            return self.complete[1]
        try:
            msg = self.parser.parse_complete(text)
        except Exception:  # pragma: no cover
            log.exception("lmparse parser failed; the reply is content")
            msg = ParsedMessage(content=text)
        self.complete = (text, msg)
        self.finished = True
        return msg


class Link:
    """What the two adapters of one vLLM ``Parser`` share: the names and, once made, the session."""

    def __init__(self, tool: str | None, reasoning: str | None, tools: Any, chat_template_kwargs: Any,
                 response: str = "default", use_ids: bool = True) -> None:
        self.tool, self.reasoning, self.response, self.use_ids = tool, reasoning, response, use_ids
        self.shared = False  # made by the tool adapter for itself and its lmparse reasoning partner
        self.tools, self.chat_template_kwargs = tools, chat_template_kwargs
        self.thinking: bool | None = None  # set when the prompt itself opens (or closes) reasoning
        self.request: Any = None  # the request, seen by the composed vLLM parser (see tools.watch_requests)
        self._session: Session | None = None

    def session(self, request: Any = None) -> Session:
        if self._session is None:
            body = request_dict(request if request is not None else self.request, self.tools,
                                self.chat_template_kwargs)
            if self.thinking is not None:
                kwargs = {**body.get("chat_template_kwargs", {}), "enable_thinking": self.thinking}
                body["chat_template_kwargs"] = kwargs
            self._session = Session(self.tool, self.reasoning, body, self.response, self.use_ids)
        return self._session

    @property
    def current(self) -> Session | None:
        """The session, if one has been made."""
        return self._session

    def fresh(self, request: Any = None) -> Session:
        """A new session: vLLM's non-stream path parses a reply from its start."""
        self._session = None
        return self.session(request)


def class_suffix(name: str) -> str:
    """An lmparse parser name as part of a Python class name (``qwen3.5`` -> ``qwen3_5``)."""
    return "".join(ch if ch.isalnum() else "_" for ch in name)
