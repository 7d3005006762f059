"""Request normalization: tools, tool_choice, the allowed-name set and thinking switches.

Accepts the OpenAI request shape as a plain dict (or any object with the same
attributes).  Configuration errors raise ``ValueError`` naming the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ParserRequest", "normalize_request"]

_CHOICE_MODES = ("none", "auto", "required")


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


class ParserRequest:
    """What the parsers need to know about one request, normalized once."""

    __slots__ = ("tools", "tool_choice", "forced_name", "allowed_names", "thinking", "max_calls", "template_kwargs")

    def __init__(
        self,
        tools: dict[str, dict[str, Any]],
        tool_choice: str,
        forced_name: str | None,
        allowed_names: frozenset[str] | None,
        thinking: bool | None,
        max_calls: int | None = None,
        template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.tools = tools  # name -> function dict (name, description, parameters)
        self.tool_choice = tool_choice  # "none" | "auto" | "required"
        self.forced_name = forced_name  # set for a named tool_choice
        self.allowed_names = allowed_names  # names a parser may emit; None: any name
        self.thinking = thinking  # None when the request does not say
        self.max_calls = max_calls  # 1 for parallel_tool_calls false: later calls are dropped
        # ``chat_template_kwargs`` as sent: a family's own switch (MiniMax-M3's ``thinking_mode``,
        # Hunyuan's ``reasoning_effort``) is read by its reasoning parser.
        self.template_kwargs = template_kwargs or {}

    @classmethod
    def accept_all(cls) -> ParserRequest:
        """No request: nothing to filter by, every tool name is accepted."""
        return cls(tools={}, tool_choice="auto", forced_name=None, allowed_names=None, thinking=None)

    @property
    def tools_enabled(self) -> bool:
        """False when tool markup must stay content verbatim (no tools, or tool_choice none)."""
        return self.allowed_names is None or (bool(self.tools) and self.tool_choice != "none")

    def schema_for(self, name: str) -> dict[str, Any] | None:
        fn = self.tools.get(name)
        return None if fn is None else fn.get("parameters")


def _normalize_tools(raw: Any) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, (list, tuple)):
        raise ValueError("tools must be a list of tool definitions")
    tools: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(raw):
        kind = _get(tool, "type", "function")
        if kind != "function":
            raise ValueError(f"tools[{i}].type must be 'function', got {kind!r}")
        fn = _get(tool, "function")
        if fn is None and _get(tool, "name") is not None:
            fn = tool  # tolerate the flat {"name", "parameters"} shape
        if fn is None:
            raise ValueError(f"tools[{i}].function is required")
        name = _get(fn, "name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{i}].function.name must be a non-empty string")
        params = _get(fn, "parameters")
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"tools[{i}].function.parameters must be a JSON schema object")
        tools[name] = {"name": name, "description": _get(fn, "description"), "parameters": params}
    return tools


def _named(choice: Any, field: str) -> str:
    fn = _get(choice, "function")
    name = _get(fn, "name") if fn is not None else _get(choice, "name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{field}.function.name must be a non-empty string")
    return name


def _normalize_choice(
    raw: Any, tools: dict[str, dict[str, Any]]
) -> tuple[str, str | None, frozenset[str]]:
    all_names = frozenset(tools)
    if raw is None:
        return ("auto" if tools else "none"), None, all_names
    if isinstance(raw, str):
        if raw not in _CHOICE_MODES:
            raise ValueError(f"tool_choice must be one of {', '.join(_CHOICE_MODES)} or an object, got {raw!r}")
        if raw == "required" and not tools:
            raise ValueError("tool_choice 'required' needs a non-empty tools list")
        return raw, None, all_names
    kind = _get(raw, "type")
    if kind == "function":
        name = _named(raw, "tool_choice")
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise ValueError(f"tool_choice names tool {name!r}, which is not in tools ({known})")
        return "required", name, frozenset((name,))
    if kind == "allowed_tools":
        spec = _get(raw, "allowed_tools")
        if spec is None:
            raise ValueError("tool_choice.allowed_tools is required when type is 'allowed_tools'")
        mode = _get(spec, "mode", "auto")
        if mode not in ("auto", "required"):
            raise ValueError(f"tool_choice.allowed_tools.mode must be 'auto' or 'required', got {mode!r}")
        listed = _get(spec, "tools")
        if not isinstance(listed, (list, tuple)) or not listed:
            raise ValueError("tool_choice.allowed_tools.tools must be a non-empty list")
        names = [_named(t, f"tool_choice.allowed_tools.tools[{i}]") for i, t in enumerate(listed)]
        missing = sorted(set(names) - all_names)
        if missing:
            raise ValueError(f"tool_choice.allowed_tools names tools not in tools: {', '.join(missing)}")
        return mode, None, frozenset(names)
    raise ValueError(f"tool_choice.type must be 'function' or 'allowed_tools', got {kind!r}")


def _normalize_thinking(request: Any) -> bool | None:
    kwargs = _get(request, "chat_template_kwargs") or {}
    for value in (_get(kwargs, "enable_thinking"), _get(kwargs, "thinking"), _get(request, "enable_thinking")):
        if value is not None:
            if not isinstance(value, bool):
                raise ValueError(f"thinking switches must be booleans, got {value!r}")
            return value
    return None


def normalize_request(request: Any) -> ParserRequest:
    """Normalize an OpenAI-shaped request (dict or object); ``None`` means no tools, no switches."""
    if isinstance(request, ParserRequest):
        return request
    tools = _normalize_tools(_get(request, "tools"))
    choice, forced, allowed = _normalize_choice(_get(request, "tool_choice"), tools)
    if choice == "none":
        allowed = frozenset()
    parallel = _get(request, "parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise ValueError(f"parallel_tool_calls must be a boolean, got {parallel!r}")
    kwargs = _get(request, "chat_template_kwargs")
    return ParserRequest(tools, choice, forced, allowed, _normalize_thinking(request),
                         max_calls=1 if parallel is False else None,
                         template_kwargs=dict(kwargs) if isinstance(kwargs, Mapping) else None)
