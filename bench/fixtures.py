"""Benchmark inputs: Qwen3-style replies carrying one large ``write_file`` call, and chunkings.

Standard library only and no lmparse import: the peer runners build the very same
fixtures inside their own virtualenvs.  Everything is deterministic (seeded), so
two processes that ask for the same fixture get identical text.
"""

from __future__ import annotations

import json
import random
from typing import NamedTuple

__all__ = [
    "FIXTURE_KINDS",
    "TOOL_NAME",
    "TOOLS",
    "REASONING",
    "CONTENT",
    "Reply",
    "argument_value",
    "build_reply",
    "QWEN_SPECIAL_TOKENS",
    "split_chunks",
    "split_chunks_keeping",
    "chunk_label",
]

FIXTURE_KINDS = ("long-string", "short-strings")
TOOL_NAME = "write_file"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Write text to a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {}},
                "required": ["path", "content"],
            },
        },
    }
]
# What the model thinks between <think> and </think>, and the content the reply
# carries between </think> and <tool_call> (Qwen3 templates put a blank line there).
REASONING = "\nThe user wants a.txt written with the given content, so I will call write_file.\n"
CONTENT = "\n\n"
# Single tokens in the Qwen3 tokenizer: a real engine never splits them across chunks.
QWEN_SPECIAL_TOKENS = ("<think>", "</think>", "<tool_call>", "</tool_call>")

_SHORT_STRINGS = ["x", '"', "\\", "{", "}", "[", "]", "plain"]
_WORDS = (
    "the of and to in is that for it with as was on be by this are from at or an which have not "
    "parser stream chunk token value string buffer delta reasoning content tool call function "
    "arguments schema request response server client model output input latency throughput "
    "linear quadratic marker escape quote newline bracket brace colon comma"
).split()


class Reply(NamedTuple):
    """One benchmark reply and what a correct parser must reconstruct from it."""

    kind: str
    text: str  # the whole model output
    argument_value: str  # ARG: the JSON source text of the "content" value
    arguments: str  # the call's arguments source text, as it must be streamed
    name: str
    reasoning: str
    content: str


def _long_string_value(size: int) -> str:
    """A JSON string literal of about ``size`` characters: prose and code-like lines
    with an escape (``\\n``, ``\\"``, sometimes ``\\\\`` or ``\\t``) every few dozen characters."""
    rng = random.Random(20240607)
    parts: list[str] = []
    encoded = 2  # the surrounding quotes
    while encoded < size:
        words = rng.choices(_WORDS, k=rng.randint(4, 12))
        shape = rng.random()
        if shape < 0.25:
            words[rng.randrange(len(words))] = f'"{words[0]}"'
        elif shape < 0.32:
            words.append(f"C:\\tmp\\{words[0]}.txt")
        elif shape < 0.38:
            words.insert(0, "\t")
        line = " ".join(words) + ("." if shape < 0.6 else ":") + "\n"
        parts.append(line)
        encoded += len(json.dumps(line)) - 2
    return json.dumps("".join(parts))


def _short_strings_value(size: int) -> str:
    """``json.dumps([...] * n)`` of the eight one-or-few character strings, about ``size`` characters."""
    one = len(json.dumps(_SHORT_STRINGS))
    per_repeat = len(json.dumps(_SHORT_STRINGS * 2)) - one
    repeats = max(1, round((size - one) / per_repeat) + 1)
    return json.dumps(_SHORT_STRINGS * repeats)


def argument_value(kind: str, size: int) -> str:
    """ARG for a fixture kind: the JSON source text of the ``content`` argument."""
    if kind == "long-string":
        return _long_string_value(size)
    if kind == "short-strings":
        return _short_strings_value(size)
    raise ValueError(f"unknown fixture kind {kind!r}; choose from {', '.join(FIXTURE_KINDS)}")


def build_reply(kind: str, size: int) -> Reply:
    """A Qwen3 reply: short reasoning, then one ``<tool_call>`` whose content argument is ARG."""
    value = argument_value(kind, size)
    arguments = '{"path": "a.txt", "content": ' + value + "}"
    envelope = '{"name": "' + TOOL_NAME + '", "arguments": ' + arguments + "}"
    text = "<think>" + REASONING + "</think>" + CONTENT + "<tool_call>\n" + envelope + "\n</tool_call>"
    return Reply(kind, text, value, arguments, TOOL_NAME, REASONING, CONTENT)


def split_chunks(text: str, size: int | None) -> list[str]:
    """Consecutive slices of ``size`` characters; ``None`` means the whole text as one chunk."""
    if size is None or size >= len(text):
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def split_chunks_keeping(text: str, size: int | None, tokens: tuple[str, ...]) -> list[str]:
    """Like ``split_chunks``, but a cut that would fall inside one of ``tokens`` moves to its end,
    as a tokenizer-driven stream would never split a special token."""
    if size is None or size >= len(text):
        return [text]
    spans = sorted(
        (start, start + len(token))
        for token in tokens
        for start in _occurrences(text, token)
    )
    chunks: list[str] = []
    pos = 0
    while pos < len(text):
        end = min(pos + size, len(text))
        for start, stop in spans:
            if start < end < stop:
                end = stop
        chunks.append(text[pos:end])
        pos = end
    return chunks


def _occurrences(text: str, token: str) -> list[int]:
    found = []
    at = text.find(token)
    while at != -1:
        found.append(at)
        at = text.find(token, at + 1)
    return found


def chunk_label(size: int | None) -> str:
    return "whole" if size is None else str(size)
