"""What the simulated model says: a deterministic decision from the conversation.

The rules (documented for users of ``lmparse serve``):

* ``tool_choice`` names a tool -> call it; ``required`` -> call the tools the last user
  message names, or the first tool when it names none.
* After tool results (the conversation ends with tool messages) -> a text answer that
  quotes them.
* ``auto`` -> call every offered tool whose name appears in the last user message, in
  the order they appear (two names, two calls); otherwise answer with text.
* Arguments come from the tool's JSON schema: ``key=value`` pairs in the user's message
  (``city=Paris``, ``days=3``, ``note="two words"``) fill properties of that name,
  converted to the declared type; required properties left over get an example value.
* With thinking on, the reply reasons first.  "while thinking" in the user's message
  puts the calls inside the reasoning (reasoning, calls, more reasoning).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...tools.xml import schema_type
from .base import GenerationRequest

__all__ = ["Reply", "decide", "build_arguments", "user_pairs"]

_PAIR = re.compile(r"""([A-Za-z_][\w.-]*)=("([^"]*)"|'([^']*)'|[^\s,;]+)""")
_NESTED_HINT = re.compile(r"while thinking|inside (?:your |the )?reasoning", re.I)
_EXAMPLE_STRINGS = {"city": "Paris", "location": "Paris", "country": "France", "unit": "celsius",
                    "query": "lmparse", "timezone": "Europe/Paris", "language": "en"}


class Reply:
    """The model's answer before rendering: channels in the order they are written."""

    __slots__ = ("reasoning", "content", "calls", "calls_in_reasoning", "reasoning_after")

    def __init__(self, reasoning: str | None = None, content: str | None = None,
                 calls: list[tuple[str, str]] | None = None, calls_in_reasoning: bool = False,
                 reasoning_after: str = "") -> None:
        self.reasoning = reasoning
        self.content = content
        self.calls = calls or []
        self.calls_in_reasoning = calls_in_reasoning
        self.reasoning_after = reasoning_after

    def __repr__(self) -> str:
        return (f"Reply(reasoning={self.reasoning!r}, content={self.content!r}, calls={self.calls!r}, "
                f"in_reasoning={self.calls_in_reasoning})")


def user_pairs(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(3) if m.group(3) is not None else m.group(4) if m.group(4) is not None
             else m.group(2)) for m in _PAIR.finditer(text)]


def _coerce(raw: str, schema: Any) -> Any:
    kind = schema_type(schema)
    text = raw.strip()
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "boolean" and text.lower() in ("true", "false", "yes", "no", "1", "0"):
            return text.lower() in ("true", "yes", "1")
        if kind == "array":
            items = schema.get("items") if isinstance(schema, dict) else None
            return [_coerce(part, items) for part in text.split(",") if part.strip()]
        if kind == "object":
            value = json.loads(text)
            if isinstance(value, dict):
                return value
        if kind == "null" and text.lower() in ("null", "none"):
            return None
    except (ValueError, TypeError):
        pass
    return raw


def _example(schema: Any, key: str) -> Any:
    if isinstance(schema, dict):
        for field in ("const", "default"):
            if field in schema:
                return schema[field]
        if schema.get("enum"):
            return schema["enum"][0]
    kind = schema_type(schema)
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return build_arguments(schema, [])
    if kind == "null":
        return None
    return _EXAMPLE_STRINGS.get(key, f"example {key}")


def build_arguments(schema: Any, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Arguments for a call: the user's pairs that the schema declares (all of them when it
    has no ``properties`` at all), then an example for each required property still missing."""
    schema = schema if isinstance(schema, dict) else {}
    declared = isinstance(schema.get("properties"), dict)
    props = schema["properties"] if declared else {}
    args: dict[str, Any] = {}
    for key, raw in pairs:
        if key in props or not declared:
            args[key] = _coerce(raw, props.get(key))
    for key in schema.get("required") or ():
        if isinstance(key, str) and key not in args:
            args[key] = _example(props.get(key), key)
    return args


def _text_of(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _named_tools(text: str, names: list[str]) -> list[str]:
    found = []
    for name in names:
        m = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text)
        if m:
            found.append((m.start(), name))
    return [name for _, name in sorted(found)]


def _tool_results(messages: list[dict]) -> list[tuple[str, str]]:
    """``(tool name, content)`` of the tool messages that end the conversation."""
    names = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            names[call.get("id")] = call["function"]["name"]
    results = []
    for m in reversed(messages):
        if m["role"] != "tool":
            break
        results.append((names.get(m.get("tool_call_id"), "the tool"), _text_of(m)))
    return results[::-1]


def decide(request: GenerationRequest, thinking: bool, model: str) -> Reply:
    pr = request.parser_request
    messages = request.messages
    user_text = next((_text_of(m) for m in reversed(messages) if m["role"] == "user"), "")
    results = _tool_results(messages)
    callable_names = [n for n in pr.tools if pr.allowed_names is None or n in pr.allowed_names] \
        if pr.tools_enabled else []
    named = _named_tools(user_text, callable_names)
    if pr.forced_name:
        names = [pr.forced_name]
    elif pr.tool_choice == "required" and callable_names:
        names = named or callable_names[:1]
    elif results or pr.tool_choice != "auto":
        names = []
    else:
        names = named
    if not request.parallel_tool_calls:
        names = names[:1]

    if names:
        pairs = user_pairs(user_text)
        calls = [(n, json.dumps(build_arguments(pr.schema_for(n), pairs), ensure_ascii=False)) for n in names]
        listed = " and ".join(names)
        if thinking and _NESTED_HINT.search(user_text):
            return Reply(f"Let me call {listed} while I think.\n", calls=calls, calls_in_reasoning=True,
                         reasoning_after="\nThe call is on its way; that settles it.")
        it = "them" if len(names) > 1 else "it"
        reasoning = f"The user wants {listed}; I will call {it} with the arguments they gave." if thinking else None
        return Reply(reasoning, calls=calls)

    if results:
        quoted = "; ".join(f"{name} returned {content!r}" for name, content in results)
        content = f"Here is what I found: {quoted}."
        reasoning = "The tool results are in; I will report them." if thinking else None
    else:
        said = " ".join(user_text.split())
        content = (f'You said: "{said}". I am lmparse\'s simulated {model} model: name one of the '
                   "offered tools in your message and I will call it.") if said else \
            f"Hello! I am lmparse's simulated {model} model."
        reasoning = "No tool is needed here; I will answer directly." if thinking else None
    return Reply(reasoning, content=content)
