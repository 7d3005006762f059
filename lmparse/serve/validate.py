"""Request checks shared by the APIs: each failure is a RequestError naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeVar

from ..request import ParserRequest, normalize_request
from .errors import RequestError

__all__ = ["require", "checked", "format_type", "optional_int", "optional_number", "check_sampling", "OPENAI_SAMPLING",
           "ANTHROPIC_SAMPLING", "optional_bool", "optional_str", "stop_list", "check_tool_schemas",
           "check_schema", "arguments_json", "parser_request", "joined_text"]


def require(condition: object, message: str, param: str | None) -> None:
    """Raise RequestError unless ``condition`` is truthy; ``param`` None: named from the message."""
    if not condition:
        raise RequestError(message, param)


T = TypeVar("T")


def checked(value: object, kind: type[T], message: str, param: str | None) -> T:
    """``value`` if it is a ``kind``, else the RequestError: ``require`` that also narrows the type."""
    if not isinstance(value, kind):
        raise RequestError(message, param)
    return value


def joined_text(content: Any, path: str, noun: str) -> str:
    """Text given as a string, or as a list of ``{"type": "text", "text": ...}`` items joined."""
    if isinstance(content, str):
        return content
    require(isinstance(content, list), f"{path} must be a string or a list of {noun}s", path)
    texts = []
    for j, item in enumerate(content):
        kind = item.get("type") if isinstance(item, dict) else None
        require(kind == "text" and isinstance(item.get("text"), str),
                f"{path}[{j}] must be a text {noun} (type 'text'); got {kind!r}", f"{path}[{j}]")
        texts.append(item["text"])
    return "".join(texts)


def optional_int(body: dict, field: str, minimum: int = 1, maximum: int | None = None,
                 path: str | None = None) -> int | None:
    """``body[field]`` checked; ``path`` names it in errors when ``body`` is a nested object."""
    value = body.get(field)
    if value is None:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    ok = ok and (maximum is None or value <= maximum)
    bounds = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
    path = path or field
    require(ok, f"{path} must be an integer {bounds}, got {value!r}", path)
    return value


def optional_number(body: dict, field: str, minimum: float, maximum: float) -> float | None:
    """``body[field]``: a number between ``minimum`` and ``maximum`` (a bool is no number)."""
    value = body.get(field)
    if value is None:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and minimum <= value <= maximum
    require(ok, f"{field} must be a number between {minimum:g} and {maximum:g}, got {value!r}", field)
    return value


# The sampling fields each API defines, with the ranges its reference accepts.
OPENAI_SAMPLING = (("temperature", 0, 2), ("top_p", 0, 1), ("presence_penalty", -2, 2), ("frequency_penalty", -2, 2))
ANTHROPIC_SAMPLING = (("temperature", 0, 1), ("top_p", 0, 1))


def check_sampling(body: dict, ranges: tuple[tuple[str, float, float], ...]) -> None:
    """Type and range checks of the sampling fields (a 400 naming the field)."""
    for field, low, high in ranges:
        optional_number(body, field, low, high)


def format_type(raw: Any, path: str) -> str:
    """The ``type`` of a structured-output format object (both OpenAI APIs): text,
    json_object or json_schema; anything else is a 400 naming ``path``."""
    require(isinstance(raw, dict), f"{path} must be an object", path)
    kind = raw.get("type")
    require(kind in ("text", "json_object", "json_schema"),
            f"{path}.type must be text, json_object or json_schema; got {kind!r}", f"{path}.type")
    return kind


def optional_str(body: dict, field: str, choices: tuple[str, ...] | None = None, path: str | None = None,
                 examples: tuple[str, ...] = ()) -> str | None:
    """``body[field]``: a string (one of ``choices`` if given; ``examples`` only name some in errors)."""
    value = body.get(field)
    if value is None:
        return None
    ok = isinstance(value, str) and (choices is None or value in choices)
    expected = f"one of {', '.join(choices)}" if choices else \
        f"a string such as {', '.join(examples)}" if examples else "a string"
    path = path or field
    require(ok, f"{path} must be {expected}, got {value!r}", path)
    return value


def optional_bool(body: dict, field: str, default: bool = False, path: str | None = None) -> bool:
    value = body.get(field, default)
    if value is None:
        return default
    path = path or field
    require(isinstance(value, bool), f"{path} must be a boolean, got {value!r}", path)
    return value


def stop_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    ok = isinstance(value, list) and all(isinstance(s, str) for s in value)
    require(ok, f"{field} must be a string or a list of strings", field)
    return value


def check_tool_schemas(tools: Iterable[object], field: str, schema_key: str = "parameters") -> None:
    """The parts of each tool's JSON schema the parsers rely on (type object, properties map)."""
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue  # normalize_request reports the shape
        fn = tool.get("function", tool)
        schema = fn.get(schema_key) if isinstance(fn, dict) else None
        path = f"{field}[{i}].function.{schema_key}" if "function" in tool else f"{field}[{i}].{schema_key}"
        if schema is not None:
            check_schema(schema, path)


def check_schema(schema: Any, path: str) -> None:
    require(isinstance(schema, dict), f"{path} must be a JSON schema object", path)
    kind = schema.get("type", "object")
    require(kind == "object", f"{path}.type must be 'object', got {kind!r}", f"{path}.type")
    props = schema.get("properties")
    require(props is None or isinstance(props, dict), f"{path}.properties must be an object", f"{path}.properties")
    required = schema.get("required")
    require(required is None or (isinstance(required, list) and all(isinstance(r, str) for r in required)),
            f"{path}.required must be a list of property names", f"{path}.required")


def arguments_json(value: Any, path: str) -> str:
    """A history call's arguments as a JSON object string (the SDKs send strings)."""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    require(isinstance(value, str), f"{path} must be a JSON string", path)
    try:
        parsed = json.loads(value) if value.strip() else {}
    except ValueError as exc:
        raise RequestError(f"{path} is not valid JSON ({exc})", path) from None
    require(isinstance(parsed, dict), f"{path} must encode a JSON object", path)
    return value


def parser_request(request: dict) -> ParserRequest:
    """An OpenAI Chat request as the request value (``lmparse.request.normalize_request``), a
    mistake as a 400 naming the field.  The Responses and Anthropic adapters build theirs
    from their own fields."""
    try:
        return normalize_request(request)
    except ValueError as exc:
        raise RequestError(str(exc)) from None
