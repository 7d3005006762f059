"""Reconstruction check run once before every timed configuration.

The fold is written here, independently of lmparse's own ``fold_deltas``, and
reads only the OpenAI delta attributes (``content``, ``reasoning_content``,
``tool_calls[].index/.function.name/.function.arguments``), so the same check
applies to peer implementations' delta objects.  Standard library only.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Iterable

from .fixtures import CallReply, Reply

__all__ = ["ReconstructionError", "Folded", "fold", "check_reconstruction", "check_call"]


class ReconstructionError(AssertionError):
    """The parser under test produced output that differs from the fixture's truth."""


class Folded:
    __slots__ = ("content", "reasoning", "names", "arguments")

    def __init__(self) -> None:
        self.content = ""
        self.reasoning = ""
        self.names: dict[int, list[str]] = {}  # tool index -> every name fragment seen
        self.arguments: dict[int, str] = {}  # tool index -> concatenated arguments


def fold(deltas: Iterable[tuple[Any, bool]]) -> Folded:
    content: list[str] = []
    reasoning: list[str] = []
    args: dict[int, list[str]] = {}
    out = Folded()
    for delta, _has_tools in deltas:
        if delta.content:
            content.append(delta.content)
        if delta.reasoning_content:
            reasoning.append(delta.reasoning_content)
        for call in delta.tool_calls or ():
            index = call.index
            args.setdefault(index, [])
            names = out.names.setdefault(index, [])
            fn = call.function
            if fn is None:
                continue
            if fn.name:
                names.append(fn.name)
            if fn.arguments:
                args[index].append(fn.arguments)
    out.content = "".join(content)
    out.reasoning = "".join(reasoning)
    out.arguments = {index: "".join(parts) for index, parts in args.items()}
    return out


def _first_difference(got: str, want: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    return (
        f"lengths got={len(got)} want={len(want)}, first difference at {at}: "
        f"got {got[max(0, at - 20):at + 20]!r} want {want[max(0, at - 20):at + 20]!r}"
    )


def check_reconstruction(deltas: Iterable[tuple[Any, bool]], reply: Reply, where: str) -> None:
    """Raise ``ReconstructionError`` unless the deltas rebuild exactly one correct call.  Whitespace
    ending the content is not compared: the template's layout before ``<tool_call>`` is the
    block's (``block_lead``), and parsers differ on how much of it they keep."""
    got = fold(deltas)
    problems: list[str] = []
    if sorted(got.arguments) != [0]:
        problems.append(f"tool call indices {sorted(got.arguments)}, want [0]")
    else:
        if got.names[0] != [reply.name]:
            problems.append(f"tool name fragments {got.names[0]!r}, want [{reply.name!r}]")
        if got.arguments[0] != reply.arguments:
            problems.append("arguments differ: " + _first_difference(got.arguments[0], reply.arguments))
    if got.reasoning != reply.reasoning:
        problems.append("reasoning differs: " + _first_difference(got.reasoning, reply.reasoning))
    if got.content.rstrip() != reply.content.rstrip():
        problems.append(f"content {got.content[:80]!r}, want {reply.content!r}")
    if problems:
        raise ReconstructionError(f"{where}: wrong output: " + "; ".join(problems))


def check_call(deltas: Iterable[tuple[Any, bool]], reply: CallReply, where: str) -> None:
    """Raise ``ReconstructionError`` unless the deltas rebuild the reply's one call: its name,
    arguments equal as JSON (character for character when ``reply.exact``), no reasoning,
    and its content.  Whitespace ending the content is not compared: it sits right before
    the tool block, where some parsers count it as the block's opening."""
    got = fold(deltas)
    problems: list[str] = []
    if sorted(got.arguments) != [0]:
        problems.append(f"tool call indices {sorted(got.arguments)}, want [0]")
    else:
        if got.names[0] != [reply.name]:
            problems.append(f"tool name fragments {got.names[0]!r}, want [{reply.name!r}]")
        arguments = got.arguments[0]
        if reply.exact:
            if arguments != reply.arguments:
                problems.append("arguments differ: " + _first_difference(arguments, reply.arguments))
        else:
            try:
                value = json.loads(arguments)
            except ValueError as exc:
                problems.append(f"arguments are not JSON ({exc}): {arguments[:80]!r}")
            else:
                want = json.loads(reply.arguments)
                if value != want:
                    problems.append("arguments differ as JSON: " + _first_json_difference(value, want))
    if got.reasoning:
        problems.append(f"reasoning {got.reasoning[:80]!r}, want none")
    if got.content.rstrip() != reply.content.rstrip():
        problems.append(f"content {got.content[:80]!r}, want {reply.content!r}")
    if problems:
        raise ReconstructionError(f"{where}: wrong output: " + "; ".join(problems))


def _first_json_difference(got: Any, want: Any) -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in want:
            if key not in got:
                return f"{key!r} missing"
            if got[key] != want[key]:
                return f"{key!r}: got {got[key]!r} want {want[key]!r}"
        extra = [key for key in got if key not in want]
        return f"unexpected keys {extra[:5]!r}"
    return f"got {str(got)[:80]!r} want {str(want)[:80]!r}"
