"""The request as the parsers and the constraints see it: one immutable value, normalized once.

``ParserRequest`` holds the callable tools (name -> function dict), the tool choice as a
variant (``Auto``, ``NoTools``, ``Required``, ``Named``, ``Allowed``), the most calls a reply
may make (1 for ``parallel_tool_calls: false``) and the thinking switches.  Each API
normalizes its own request shape into it once: ``normalize_request`` reads the OpenAI Chat
shape (a plain dict or any object with the same attributes), and the server's Responses and
Anthropic adapters build it from their own, already-checked fields.  Nothing changes it
afterwards; what a caller wants different is a new value.  Configuration errors raise
``ValueError`` naming the offending field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["ParserRequest", "normalize_request", "ToolChoice", "Auto", "NoTools", "Required", "Named", "Allowed",
           "AUTO", "NO_TOOLS", "REQUIRED"]

_CHOICE_MODES = ("none", "auto", "required")


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


class _Frozen:
    """A value whose fields are set once, in ``__init__`` (``object.__setattr__``)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: make a new value instead of setting {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


# ---- tool choice --------------------------------------------------------------------------


class ToolChoice(_Frozen):
    """Which of the offered tools a reply may call, and whether it must call one."""

    __slots__ = ()
    must_call = False  # the reply has to call a tool (``required``, a named tool)
    mode = "auto"  # the OpenAI string it amounts to: "none", "auto" or "required"

    def callable_names(self, offered: Iterable[str]) -> frozenset[str]:
        """The names a call may use, of those offered."""
        return frozenset(offered)

    def _fields(self) -> tuple[Any, ...]:
        return ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._fields() == self._fields()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._fields()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(f) for f in self._fields())})"

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle make a value through __init__
        return type(self), self._fields()


class Auto(ToolChoice):
    """``auto``: the model may call any offered tool, or none."""

    __slots__ = ()


class NoTools(ToolChoice):
    """``none`` (or no tools offered): no call; tool markup stays content verbatim."""

    __slots__ = ()
    mode = "none"

    def callable_names(self, offered: Iterable[str]) -> frozenset[str]:
        return frozenset()


class Required(ToolChoice):
    """``required`` (Anthropic ``any``): at least one call of an offered tool."""

    __slots__ = ()
    must_call = True
    mode = "required"


class Named(ToolChoice):
    """A named tool: exactly that tool is called (once, when the constraint builds it)."""

    __slots__ = ("name",)
    __match_args__ = ("name",)
    must_call = True
    mode = "required"
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def callable_names(self, offered: Iterable[str]) -> frozenset[str]:
        return frozenset((self.name,))

    def _fields(self) -> tuple[Any, ...]:
        return (self.name,)


class Allowed(ToolChoice):
    """``allowed_tools``: only ``names`` may be called; ``required`` says one must be."""

    __slots__ = ("names", "required")
    __match_args__ = ("names", "required")
    names: frozenset[str]
    required: bool

    def __init__(self, names: Iterable[str], required: bool = False) -> None:
        object.__setattr__(self, "names", frozenset(names))
        object.__setattr__(self, "required", required)

    @property
    def must_call(self) -> bool:  # type: ignore[override]
        return self.required

    @property
    def mode(self) -> str:  # type: ignore[override]
        return "required" if self.required else "auto"

    def callable_names(self, offered: Iterable[str]) -> frozenset[str]:
        return self.names

    def _fields(self) -> tuple[Any, ...]:
        return (tuple(sorted(self.names)), self.required)


AUTO, NO_TOOLS, REQUIRED = Auto(), NoTools(), Required()


# ---- the request value ----------------------------------------------------------------------


class ParserRequest(_Frozen):
    """What the parsers and the constraints need to know about one request, normalized once.

    ``tools``: name -> function dict (name, description, parameters), read-only.  ``choice``:
    the tool choice (``None``: ``auto`` with tools, ``none`` without).  ``max_calls``: 1 for
    ``parallel_tool_calls: false`` (later calls are dropped).  ``thinking``: the thinking
    switch, None when the request does not say.  ``template_kwargs``: ``chat_template_kwargs``
    as sent (a family's own switch, MiniMax-M3's ``thinking_mode`` or Hunyuan's
    ``reasoning_effort``, is read by its reasoning parser)."""

    __slots__ = ("tools", "choice", "max_calls", "thinking", "template_kwargs", "allowed_names")
    tools: Mapping[str, dict[str, Any]]
    choice: ToolChoice
    max_calls: int | None
    thinking: bool | None
    template_kwargs: Mapping[str, Any]
    allowed_names: frozenset[str] | None  # names a parser may emit; None: any name (``accept_all``)

    def __init__(self, tools: Mapping[str, dict[str, Any]] | None = None, choice: ToolChoice | None = None,
                 max_calls: int | None = None, thinking: bool | None = None,
                 template_kwargs: Mapping[str, Any] | None = None) -> None:
        tools = MappingProxyType(dict(tools or {}))
        if choice is None:
            choice = AUTO if tools else NO_TOOLS
        setter = object.__setattr__
        setter(self, "tools", tools)
        setter(self, "choice", choice)
        setter(self, "max_calls", max_calls)
        setter(self, "thinking", thinking)
        setter(self, "template_kwargs", MappingProxyType(dict(template_kwargs or {})))
        setter(self, "allowed_names", choice.callable_names(tools))

    @classmethod
    def accept_all(cls) -> ParserRequest:
        """No request: nothing to filter by, every tool name is accepted."""
        request = cls(choice=AUTO)
        object.__setattr__(request, "allowed_names", None)
        return request

    @property
    def tool_choice(self) -> str:
        """The choice as OpenAI's string: "none", "auto" or "required" (a named tool: "required")."""
        return self.choice.mode

    @property
    def forced_name(self) -> str | None:
        """The tool a named tool_choice forces, else None."""
        return self.choice.name if isinstance(self.choice, Named) else None

    @property
    def tools_enabled(self) -> bool:
        """False when tool markup must stay content verbatim (no tools, or tool_choice none)."""
        return self.allowed_names is None or (bool(self.tools) and not isinstance(self.choice, NoTools))

    @property
    def callable_tools(self) -> list[dict[str, Any]]:
        """The function dicts a call may name (``allowed_tools`` and a named tool narrow them)."""
        if not self.tools_enabled:
            return []
        allowed = self.allowed_names
        return [fn for name, fn in self.tools.items() if allowed is None or name in allowed]

    @property
    def required_functions(self) -> list[dict[str, Any]] | None:
        """The functions one of which the reply must call; None when it need not call any."""
        return self.callable_tools if self.choice.must_call and self.tools_enabled else None

    @property
    def single_call(self) -> bool:
        """A forced reply makes exactly one call (a named tool, as vLLM does, or parallel off)."""
        return isinstance(self.choice, Named) or self.max_calls == 1

    def schema_for(self, name: str) -> dict[str, Any] | None:
        """The JSON schema of the offered tool ``name``'s parameters (None: not offered, or none given)."""
        fn = self.tools.get(name)
        return None if fn is None else fn.get("parameters")

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle make a value through __init__
        return _rebuild, (dict(self.tools), self.choice, self.max_calls, self.thinking, dict(self.template_kwargs),
                          self.allowed_names is None)

    def __repr__(self) -> str:
        return (f"ParserRequest(tools={list(self.tools)}, choice={self.choice!r}, max_calls={self.max_calls}, "
                f"thinking={self.thinking})")


def _rebuild(tools: dict[str, dict[str, Any]], choice: ToolChoice, max_calls: int | None, thinking: bool | None,
             template_kwargs: dict[str, Any], any_name: bool) -> ParserRequest:
    if any_name:
        return ParserRequest.accept_all()
    return ParserRequest(tools, choice, max_calls, thinking, template_kwargs)


# ---- the OpenAI Chat shape --------------------------------------------------------------------


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


def _normalize_choice(raw: Any, tools: dict[str, dict[str, Any]]) -> ToolChoice | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        if raw not in _CHOICE_MODES:
            raise ValueError(f"tool_choice must be one of {', '.join(_CHOICE_MODES)} or an object, got {raw!r}")
        if raw == "required" and not tools:
            raise ValueError("tool_choice 'required' needs a non-empty tools list")
        return REQUIRED if raw == "required" else AUTO if raw == "auto" else NO_TOOLS
    kind = _get(raw, "type")
    if kind == "function":
        name = _named(raw, "tool_choice")
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise ValueError(f"tool_choice names tool {name!r}, which is not in tools ({known})")
        return Named(name)
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
        missing = sorted(set(names) - set(tools))
        if missing:
            raise ValueError(f"tool_choice.allowed_tools names tools not in tools: {', '.join(missing)}")
        return Allowed(names, required=mode == "required")
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
    """Normalize an OpenAI Chat request (dict or object); ``None`` means no tools, no switches."""
    if isinstance(request, ParserRequest):
        return request
    tools = _normalize_tools(_get(request, "tools"))
    choice = _normalize_choice(_get(request, "tool_choice"), tools)
    parallel = _get(request, "parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise ValueError(f"parallel_tool_calls must be a boolean, got {parallel!r}")
    kwargs = _get(request, "chat_template_kwargs")
    return ParserRequest(tools, choice, max_calls=1 if parallel is False else None,
                         thinking=_normalize_thinking(request),
                         template_kwargs=kwargs if isinstance(kwargs, Mapping) else None)
