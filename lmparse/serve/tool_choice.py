"""Enforced tool_choice in the serving path: the constraint an engine gets, and the verdict after.

``constrain(request, binding)`` runs before a generation starts: ``parallel_tool_calls:
false`` makes the parser keep only the first call (later ones go to ``dropped``, on every
engine), and ``tool_choice: "required"`` or a named tool puts the family's constraint on
the request (``GenerationRequest.constraint``, from ``lmparse.constrain.constraint_for``):
an XGrammar structural tag for vLLM and SGLang, a GBNF grammar for llama.cpp.  The
simulated engine obeys tool_choice by construction and needs none; an engine or family
with no way to constrain (LMDeploy; a family without a tool dialect) is a 400 saying so,
never an unenforced generation.

``CallCheck`` runs after: a reply to such a request without a call, or with a call whose
arguments break the tool's schema, is ``ToolChoiceUnmet`` (HTTP 502 ``server_error``,
code ``tool_choice_unmet``, the reason shown to the client; in a stream, the API's error
event instead of the finish).
"""

from __future__ import annotations

from typing import Any

from ..constrain import Unconstrainable, check_calls, chosen_functions, constraint_for
from ..registry import ReasoningParserManager, ResponseParserManager
from ..request import ParserRequest
from .engines.base import GenerationRequest
from .errors import RequestError

__all__ = ["constrain", "CallCheck", "ToolChoiceUnmet", "UPSTREAM_ENGINES"]

UPSTREAM_ENGINES = ("vllm", "sglang", "lmdeploy", "llamacpp")


class ToolChoiceUnmet(RequestError):
    """The model's reply does not satisfy a tool_choice that required a call."""

    public_message = True  # the client is told why (``errors.public``)

    def __init__(self, reason: str) -> None:
        super().__init__(reason, None, status=502, kind="server_error", code="tool_choice_unmet")


def _choice(pr: ParserRequest) -> Any:
    """The request's tool_choice in OpenAI's shape, as ``lmparse.constrain`` reads it."""
    if pr.forced_name:
        return {"type": "function", "function": {"name": pr.forced_name}}
    return pr.tool_choice


def _tools(pr: ParserRequest) -> list[dict]:
    """The tools a call may name (``allowed_tools`` narrows them)."""
    return [fn for name, fn in pr.tools.items() if pr.allowed_names is None or name in pr.allowed_names]


def _dialect(family: Any) -> str | None:
    """What describes the family's calls: its tool parser, else its response parser (Harmony)."""
    return family.tool_parser or (family.response_parser if family.response_parser != "default" else None)


def _reasoning(family: Any, pr: ParserRequest) -> tuple[str | None, str, bool] | None:
    """The reasoning block a constrained reply may start with (None: thinking is off, or none)."""
    if pr.thinking is False:
        return None
    if family.reasoning_parser in ReasoningParserManager:
        parser = ReasoningParserManager.get(family.reasoning_parser)(pr)
        return parser.start_tag, parser.end_tag, parser.starts_in_reasoning()
    block = getattr(ResponseParserManager.get(family.response_parser), "reasoning_block", None)
    return block() if block is not None else None


def constrain(request: GenerationRequest, family: Any, engine: str) -> CallCheck | None:
    """Put the constraint on ``request`` for ``family`` served by ``engine`` (a 400 when it
    cannot be enforced); the check its reply must pass, if any."""
    pr = request.parser_request
    if not request.parallel_tool_calls:
        pr.max_calls = 1
    if not pr.tools_enabled:
        return None
    functions = chosen_functions(_tools(pr), _choice(pr))
    if functions is None:
        return None
    # In-process engines (the simulated model) call what tool_choice asks for; the check
    # below still judges their replies.
    if engine in UPSTREAM_ENGINES:
        try:
            request.constraint = constraint_for(_dialect(family), engine, functions, _choice(pr),
                                                request.parallel_tool_calls, _reasoning(family, pr))
        except Unconstrainable as exc:
            raise RequestError(f"tool_choice cannot be enforced for {family.name} on {engine}: {exc}; "
                               "use tool_choice auto", "tool_choice") from None
    return CallCheck(functions)


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
