"""Enforced tool_choice in the serving path: the constraint an engine gets, and the verdict after.

``enforce(request, family, engine)`` runs before a generation starts.  The request's
``ParserRequest`` already says everything (normalized once by the API's adapter:
``parallel_tool_calls: false`` is its ``max_calls`` 1, so the parser keeps only the first
call on every engine); a tool choice that must call (``required``, a named tool) gives a
new ``GenerationRequest`` carrying the family's constraint (``lmparse.constrain.constraint_for``):
an XGrammar structural tag for vLLM and SGLang, a GBNF grammar for llama.cpp.  A model
parsed by its own ``response_template`` (``response-template``, ``beam``) is constrained by
the calls that template describes (``template_constraint``; the prompt, rendered once more,
says whether the reply starts inside its reasoning region).  The simulated engine obeys
tool_choice by construction and needs none; an engine or family with no way to constrain
(LMDeploy; a family without a tool dialect; a template whose calls cannot be described) is
a 400 saying so, never an unenforced generation.

``CallCheck`` runs after: a reply to such a request without a call, or with a call whose
arguments break the tool's schema, is ``ToolChoiceUnmet`` (HTTP 502 ``server_error``,
code ``tool_choice_unmet``, the reason shown to the client; in a stream, the API's error
event instead of the finish).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..constrain import Reasoning, Unconstrainable, check_calls, constraint_for, template_constraint
from ..registry import ReasoningParserManager, ResponseParserManager
from ..request import ParserRequest
from ..response.template import ResponseTemplate
from .engines.base import GenerationRequest
from .errors import RequestError

__all__ = ["enforce", "CallCheck", "ToolChoiceUnmet", "UPSTREAM_ENGINES"]

UPSTREAM_ENGINES = ("vllm", "sglang", "lmdeploy", "llamacpp")


class ToolChoiceUnmet(RequestError):
    """The model's reply does not satisfy a tool_choice that required a call."""

    public_message = True  # the client is told why (``errors.public``)

    def __init__(self, reason: str) -> None:
        super().__init__(reason, None, status=502, kind="server_error", code="tool_choice_unmet")


def _dialect(family: Any) -> str | None:
    """What describes the family's calls: its tool parser, else its response parser (Harmony)."""
    return family.tool_parser or (family.response_parser if family.response_parser != "default" else None)


def _reasoning(family: Any, pr: ParserRequest) -> Reasoning | None:
    """The reasoning block a constrained reply may start with (None: thinking is off, or none)."""
    if pr.thinking is False:
        return None
    if family.reasoning_parser in ReasoningParserManager:
        parser = ReasoningParserManager.get(family.reasoning_parser)(pr)
        return parser.start_tag, parser.end_tag, parser.starts_in_reasoning()
    block = getattr(ResponseParserManager.get(family.response_parser), "reasoning_block", None)
    return block() if block is not None else None


def enforce(request: GenerationRequest, family: Any, engine: str, template: ResponseTemplate | None = None,
            render: Callable[[GenerationRequest], str] | None = None) -> tuple[GenerationRequest, CallCheck | None]:
    """``request`` as ``engine`` must get it for ``family`` (a new one carrying the constraint
    when the tool choice must call; a 400 when that cannot be enforced), and the check its
    reply must pass, if any.  ``template``: the model's own response_template, when it is what
    parses (``render`` gives the prompt it reads its reasoning state from)."""
    pr = request.parser_request
    functions = pr.required_functions
    if functions is None:
        return request, None
    # In-process engines (the simulated model) call what tool_choice asks for; the check
    # below still judges their replies.
    if engine in UPSTREAM_ENGINES:
        try:
            if template is not None:
                prompt = render(request) if render is not None and template.reasoning_class is not None else None
                constraint = template_constraint(template, engine, pr, prompt)
            else:
                constraint = constraint_for(_dialect(family), engine, pr, reasoning=_reasoning(family, pr))
        except Unconstrainable as exc:
            raise RequestError(f"tool_choice cannot be enforced for {family.name} on {engine}: {exc}; "
                               "use tool_choice auto", "tool_choice") from None
        request = request.constrained(constraint)
    return request, CallCheck(functions)


class CallCheck:
    """Collects a reply's calls (``name`` / ``arguments`` as they stream) and judges them at the end."""

    __slots__ = ("functions", "_names", "_arguments")

    def __init__(self, functions: list[dict]) -> None:
        self.functions = functions
        self._names: dict[int, str] = {}
        self._arguments: dict[int, list[str]] = {}

    def note(self, index: int, name: str | None, arguments: str | None) -> None:
        if name is not None:
            self._names[index] = name
        if arguments:
            self._arguments.setdefault(index, []).append(arguments)

    def verify(self) -> None:
        calls = [(name, "".join(self._arguments.get(i, ()))) for i, name in sorted(self._names.items())]
        reason = check_calls(calls, self.functions)
        if reason is not None:
            raise ToolChoiceUnmet(reason)
