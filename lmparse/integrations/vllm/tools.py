"""``lmparse-<name>`` as a vLLM ``ToolParser``: one lmparse session per request, fed only deltas."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from lmparse.constrain import Unconstrainable, dialect_syntax, structural_tag_for

from ._compat import (ExtractedToolCallInformation, FunctionCall, StructuredOutputsParams, ToolCall, ToolParser,
                      VllmParser)
from .session import Link, Session, class_suffix, log, reads_ids, tool_dicts

__all__ = ["LmparseToolParser", "tool_parser_class", "owner_parser", "watch_requests"]


def owner_parser(built: type, depth: int = 8) -> Any:
    """The vLLM ``Parser`` whose ``__init__`` is building a ``built`` tool parser (None outside one).

    vLLM 0.33 gives neither parser of a composed ``Parser`` a reference to the other or to the
    ``Parser``: the reasoning parser gets ``(tokenizer, model_config=, chat_template_kwargs=)``,
    a legacy tool parser ``(tokenizer, tools)`` (``Parser.__init__``), and ``adjust_request``
    runs on another ``Parser`` instance (the renderer's).  The frame that is building this tool
    parser is the one place the two meet: it is accepted only when it is a vLLM ``Parser``
    whose class names this tool parser class and whose tool slot is still empty."""
    frame: Any = sys._getframe(1)
    for _ in range(depth):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        wanted = getattr(type(owner), "tool_parser_cls", None)
        if (VllmParser is not None and isinstance(owner, VllmParser) and isinstance(wanted, type)
                and issubclass(built, wanted) and getattr(owner, "_tool_parser", None) is None):
            return owner
        frame = frame.f_back
    return None


def watch_requests(owner: Any, link: Link) -> None:
    """Hand ``link`` the request of every ``parse`` / ``parse_delta`` of ``owner`` first.

    They are the members vLLM's serving layer calls on its per-request ``Parser`` and the first
    to carry the request; the reasoning parser's own calls never do.  So the shared session is
    made with the request's tools, ``tool_choice`` and ``parallel_tool_calls``."""
    for name, at in (("parse", 1), ("parse_delta", 2)):
        method = getattr(owner, name, None)
        if method is None:
            continue

        def seen(*args: Any, _method: Any = method, _at: int = at, **kwargs: Any) -> Any:
            request = kwargs.get("request", args[_at] if len(args) > _at else None)
            if request is not None and link.request is None:
                link.request = request
            return _method(*args, **kwargs)

        setattr(owner, name, seen)


def _forced(request: Any) -> bool:
    choice = getattr(request, "tool_choice", None)
    return choice == "required" or (choice is not None and not isinstance(choice, str))


class LmparseToolParser(ToolParser):  # type: ignore[misc]
    """The adapter; ``tool_parser_class`` makes one subclass per lmparse tool parser name."""

    lmparse_name: str = ""
    lmparse_response = "default"  # "gpt-oss": the response parser is the whole grammar (no tool parser name)
    engine_based_streaming = True  # vLLM hands bare deltas and calls finish_streaming() at the end

    def __init__(self, tokenizer: Any, tools: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)
        from .reasoning import LmparseReasoningParser

        owner = owner_parser(type(self))
        partner = getattr(owner, "_reasoning_parser", None)
        tool = self.lmparse_name if self.lmparse_response == "default" else None
        if isinstance(partner, LmparseReasoningParser) and partner.link is None:
            response = self.lmparse_response if tool is None else partner.lmparse_response
            reasoning = partner.lmparse_name if partner.lmparse_response == "default" else None
            self.link = Link(tool, reasoning, tools, partner.chat_template_kwargs, response,
                             reads_ids(response, tokenizer))
            self.link.shared = True
            partner.link = self.link  # one lmparse parser per request for both
            watch_requests(owner, self.link)
        else:
            response = self.lmparse_response
            self.link = Link(tool, None, tools, None, response, reads_ids(response, tokenizer))

    @property
    def shared(self) -> bool:
        return self.link.shared

    # ---- requests ---------------------------------------------------------------------

    def adjust_request(self, request: Any) -> Any:
        """Keep special tokens (tool markers often are) and, for ``required`` or a named tool,
        constrain generation with the structural tag built from the dialect's own call syntax."""
        if getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            if hasattr(request, "skip_special_tokens"):
                request.skip_special_tokens = False
        tag = self.structural_tag(request)
        if tag is not None:
            request.structured_outputs = StructuredOutputsParams(structural_tag=json.dumps(tag, ensure_ascii=False))
            if hasattr(request, "response_format"):
                request.response_format = None
        return super().adjust_request(request)  # vLLM's JSON route for dialects without a call syntax

    def structural_tag(self, request: Any) -> dict[str, Any] | None:
        """lmparse's XGrammar structural tag for a forced call, as JSON-able data (None: not needed)."""
        if not getattr(request, "tools", None) or not _forced(request):
            return None
        choice = request.tool_choice
        choice = choice.model_dump(exclude_none=True) if hasattr(choice, "model_dump") else choice
        try:
            return structural_tag_for(self.lmparse_name, tool_dicts(request.tools), choice,
                                      getattr(request, "parallel_tool_calls", None) is not False)
        except (Unconstrainable, ValueError) as exc:
            log.warning("lmparse-%s: tool_choice not enforced: %s", self.lmparse_name, exc)
            return None

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, strict_level: Any = None) -> Any:
        """The same tag as xgrammar's ``StructuralTag`` (None when vLLM's xgrammar cannot read it)."""
        tag = self.structural_tag(request)
        if tag is None:
            return None
        try:
            from xgrammar import StructuralTag

            return StructuralTag.model_validate(tag)
        except Exception as exc:
            log.warning("lmparse-%s: structural tag not accepted by this xgrammar: %s", self.lmparse_name, exc)
            return None

    # ---- non-stream -------------------------------------------------------------------

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        current = self.link.current
        if self.shared and current is not None and current.complete is not None:
            msg = current.complete[1]  # the reasoning side parsed the whole reply a moment ago
        else:
            msg = self.link.fresh(request).parse(model_output)
        calls = [ToolCall(id=tc.id, type="function", function=FunctionCall(name=tc.function.name,
                                                                          arguments=tc.function.arguments))
                 for tc in msg.tool_calls]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=msg.content)

    # ---- stream -----------------------------------------------------------------------

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Any:
        """Only ``delta_text`` / ``delta_token_ids`` reach lmparse: ``current_text`` is not read."""
        session = self.link.session(request)
        session.outbox.add(session.feed(delta_text, delta_token_ids))
        return self._emit(session)

    def finish_streaming(self) -> Any:
        """End of the stream (vLLM calls it on engine-based parsers): what lmparse held back."""
        session = self.link.session()
        session.outbox.add(session.feed("", None, final=True))
        return self._emit(session)

    def _emit(self, session: Session) -> Any:
        out = session.outbox.take()
        if out is not None:
            self._track(out.tool_calls)
        return out

    def _track(self, calls: Sequence[Any]) -> None:
        """Keep the state vLLM reads at the end of a stream equal to what was streamed."""
        for tc in calls:
            while len(self.prev_tool_call_arr) <= tc.index:
                self.prev_tool_call_arr.append({"name": None, "arguments": ""})
                self.streamed_args_for_tool.append("")
            fn = tc.function
            if fn is not None and fn.name:
                self.prev_tool_call_arr[tc.index]["name"] = fn.name
                self.current_tool_name_sent = True
            if fn is not None and fn.arguments:
                self.streamed_args_for_tool[tc.index] += fn.arguments
                self.prev_tool_call_arr[tc.index]["arguments"] = self.streamed_args_for_tool[tc.index]
            self.current_tool_id = tc.index


def tool_parser_class(name: str, response: str = "default") -> type[LmparseToolParser]:
    """The ``lmparse-<name>`` class (``response``: a response parser name such as gpt-oss, whose
    grammar is the whole reply): required and named tool choices go through lmparse's own
    structural tag where the dialect has a call syntax, else through vLLM's JSON route."""
    try:
        dialect_syntax(name)
        constrainable = True
    except (Unconstrainable, ValueError):
        constrainable = False
    return type(f"LmparseToolParser_{class_suffix(name)}", (LmparseToolParser,),
                {"lmparse_name": name, "lmparse_response": response, "supports_required_and_named": not constrainable,
                 "__module__": __name__, "__doc__": f"lmparse's {name!r} tool parser inside vLLM."})
