"""Benchmark inputs: Qwen3-style replies carrying one large ``write_file`` call, the
calls every tool dialect is measured on, and chunkings.

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
    "build_reasoning_reply",
    "QWEN_SPECIAL_TOKENS",
    "split_chunks",
    "split_chunks_keeping",
    "chunk_label",
    "CALL_KINDS",
    "CALL_CONTENT",
    "Call",
    "CallReply",
    "build_call",
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


def build_reasoning_reply(size: int) -> Reply:
    """A Qwen3 reply that thinks at length: ``<think>`` + ~``size`` characters of prose, then a small call."""
    reasoning = "\n" + _prose(size)
    value = '"done"'
    arguments = '{"path": "a.txt", "content": ' + value + "}"
    envelope = '{"name": "' + TOOL_NAME + '", "arguments": ' + arguments + "}"
    text = "<think>" + reasoning + "</think>" + CONTENT + "<tool_call>\n" + envelope + "\n</tool_call>"
    return Reply("reasoning", text, value, arguments, TOOL_NAME, reasoning, CONTENT)


def split_chunks(text: str, size: int | None) -> list[str]:
    """Consecutive slices of ``size`` characters; ``None`` means the whole text as one chunk."""
    if size is None or size >= len(text):
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def split_chunks_keeping(text: str, size: int | None, tokens: tuple[str, ...]) -> list[str]:
    """Like ``split_chunks``, but a cut that would fall inside one of ``tokens`` moves to its end,
    as a tokenizer-driven stream would never split a special token.  Linear in the text and
    the number of occurrences: the cut only moves forward, and so does the span cursor."""
    if size is None or size >= len(text):
        return [text]
    spans = sorted(
        (start, start + len(token))
        for token in set(tokens)
        if token
        for start in _occurrences(text, token)
    )
    chunks: list[str] = []
    pos = first = 0
    n = len(text)
    while pos < n:
        end = min(pos + size, n)
        while first < len(spans) and spans[first][1] <= end:
            first += 1  # ends before the cut: no later cut can fall inside it either
        i = first
        while i < len(spans) and spans[i][0] < end:
            end = max(end, spans[i][1])
            i += 1
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


# ---- one call per reply, for every tool dialect (rendered on our side: see bench.dialects) ----

CALL_KINDS = ("string-arg", "typed-args")
# The short content every dialect reply starts with; the blank line is where the
# templates put one before a tool block (and DSML's open tag in LMDeploy includes it).
CALL_CONTENT = "I will do that now.\n\n"
_TYPES = ("string", "integer", "number", "boolean", "array")


class Call(NamedTuple):
    """One tool call and the request that exposes it (a schema typing every argument)."""

    kind: str
    size: int  # string-arg: characters of the value; typed-args: number of arguments
    name: str
    arguments: str  # json.dumps of the arguments object: what the renderers take
    tools: list


class CallReply(NamedTuple):
    """A reply carrying one call, rendered for one dialect, and what a parser must rebuild.
    Flat and JSON-friendly: the peer runners receive it as ``CallReply(**fields)``."""

    dialect: str
    kind: str
    size: int
    text: str
    name: str
    arguments: str
    tools: list
    content: str
    # The wire carries ``arguments`` verbatim (a JSON dialect): the folded arguments
    # must equal it character for character, not only as JSON.
    exact: bool


def _tools(name: str, properties: dict) -> list:
    return [{"type": "function", "function": {
        "name": name, "parameters": {"type": "object", "properties": properties}}}]


def _prose(size: int) -> str:
    """About ``size`` characters of text as a model writes into a file: words and code-like
    lines, double quotes, a Windows path, tabs, now and then a ``<`` or ``a <= b``
    (markup-like text a closing-tag search must pass over), a newline every few dozen characters."""
    rng = random.Random(20250101)
    lines: list[str] = []
    total = 0
    while total < size:
        words = rng.choices(_WORDS, k=rng.randint(4, 12))
        shape = rng.random()
        if shape < 0.25:
            words[rng.randrange(len(words))] = f'"{words[0]}"'
        elif shape < 0.30:
            words.append(f"C:\\tmp\\{words[0]}.txt")
        elif shape < 0.35:
            words.insert(0, "\t")
        elif shape < 0.38:
            words.insert(rng.randrange(len(words)), rng.choice(("a <= b", "<br>", "x < 0", "List<str>")))
        line = " ".join(words) + ("." if shape < 0.6 else ":") + "\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


def _typed_value(i: int, rng: random.Random) -> tuple[object, dict]:
    kind = _TYPES[i % len(_TYPES)]
    if kind == "string":
        value = " ".join(rng.choices(_WORDS, k=rng.randint(1, 4)))
        if i % 25 == 0:
            value = f'say "{value}"'
        elif i % 35 == 0:
            value = value.replace(" ", "\n", 1)
        return value, {"type": "string"}
    if kind == "integer":
        return rng.randint(-1000, 100_000), {"type": "integer"}
    if kind == "number":
        return round(rng.uniform(-1000, 1000), rng.randint(1, 3)), {"type": "number"}
    if kind == "boolean":
        return rng.random() < 0.5, {"type": "boolean"}
    if i % 2:
        return [rng.randint(0, 999) for _ in range(rng.randint(1, 4))], {"type": "array", "items": {"type": "integer"}}
    return rng.choices(_WORDS, k=rng.randint(1, 3)), {"type": "array", "items": {"type": "string"}}


def build_call(kind: str, size: int) -> Call:
    """``string-arg``: ``write_file(content=<size chars of prose>)``; ``typed-args``:
    ``configure`` with ``size`` short arguments cycling string, integer, number, boolean, array."""
    if kind == "string-arg":
        arguments = json.dumps({"content": _prose(size)}, ensure_ascii=False)
        return Call(kind, size, "write_file", arguments, _tools("write_file", {"content": {"type": "string"}}))
    if kind == "typed-args":
        rng = random.Random(20250102)
        values, properties = {}, {}
        for i in range(size):
            key = f"{_TYPES[i % len(_TYPES)][:3]}_{i}"
            values[key], properties[key] = _typed_value(i, rng)
        return Call(kind, size, "configure", json.dumps(values, ensure_ascii=False), _tools("configure", properties))
    raise ValueError(f"unknown call kind {kind!r}; choose from {', '.join(CALL_KINDS)}")
