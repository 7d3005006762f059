"""What every implementation is fed and must give back (peer side: standard library only).

A case is one reply of one format at one argument size, with the output a correct
parser reconstructs.  It travels to the workers as JSON, so it is a flat NamedTuple.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, NamedTuple
from collections.abc import Iterable

from ..fixtures import split_chunks, split_chunks_keeping
from ..verify import fold

__all__ = ["COMPLETE", "Case", "Chunking", "chunk_name", "chunks_for", "check_deltas", "complete_result"]

# The chunk key of the non-streaming parse (the whole reply handed over at once).
COMPLETE = "complete"
Chunking = int | str | None  # characters per chunk, None for the whole reply in one chunk, or COMPLETE


class Case(NamedTuple):
    format: str
    size: int  # characters of the long string (the argument, or the reasoning)
    text: str
    content: str
    reasoning: str
    calls: list  # [[name, arguments JSON], ...]
    tools: list  # the request's OpenAI tools
    markers: list  # marker strings a tokenizer sends whole (the fallback chunking keeps them whole)
    tokenizer: str  # directory of tokenizer.json.gz / tokenizer_config.json ("" when none)


def chunk_name(chunk: Chunking) -> str:
    return "whole" if chunk is None else str(chunk)


def chunks_for(case: Case, chunk: Chunking, keep_markers: bool) -> list[str]:
    """The stream's pieces: ``chunk`` characters each; with ``keep_markers`` a cut never
    falls inside a marker (it moves to the marker's end, as a tokenizer-driven stream does)."""
    size = None if chunk == COMPLETE else chunk
    assert not isinstance(size, str)
    if keep_markers:
        return split_chunks_keeping(case.text, size, tuple(case.markers))
    return split_chunks(case.text, size)


def _arguments_equal(got: str, want: str) -> bool:
    try:
        return bool(json.loads(got) == json.loads(want))
    except ValueError:
        return False


def check_deltas(deltas: Iterable[Any], case: Case) -> str | None:
    """None when the deltas rebuild the case (calls in order, names, arguments equal as JSON,
    reasoning exactly, content up to surrounding whitespace); else what differs.  A delta is
    anything with OpenAI's ``content`` / ``reasoning_content`` / ``tool_calls`` attributes."""
    got = fold((delta, False) for delta in deltas)
    problems = []
    if sorted(got.arguments) != list(range(len(case.calls))):
        problems.append(f"tool call indices {sorted(got.arguments)}, want {list(range(len(case.calls)))}")
    else:
        for index, (name, arguments) in enumerate(case.calls):
            if "".join(got.names.get(index, ())) != name:
                problems.append(f"call {index} name {got.names.get(index)!r}, want {name!r}")
            if not _arguments_equal(got.arguments[index], arguments):
                text = got.arguments[index]
                problems.append(f"call {index} arguments differ ({len(text)} chars, want {len(arguments)}): "
                                f"{text[:60]!r}...{text[-60:]!r}")
    if got.reasoning != case.reasoning:
        problems.append(f"reasoning differs ({len(got.reasoning)} chars, want {len(case.reasoning)}): "
                        f"{got.reasoning[:60]!r}...{got.reasoning[-60:]!r}")
    if got.content.strip() != case.content.strip():
        problems.append(f"content {got.content[:80]!r}, want {case.content[:80]!r}")
    return "; ".join(problems) or None


def complete_result(content: str | None, reasoning: str | None, functions: Iterable[Any]) -> list[Any]:
    """A non-streaming parse as one delta: ``functions`` have ``name`` and ``arguments``."""
    calls = [SimpleNamespace(index=i, function=function) for i, function in enumerate(functions)]
    return [SimpleNamespace(content=content, reasoning_content=reasoning, tool_calls=calls)]
