"""Responses tools as the functions a model is offered, and back.

``function`` tools as they are; ``namespace`` tools flattened to ``NS__NAME``; ``custom``
tools as a function with one string argument ``input``; any other type is a hosted tool
(``web_search``, ``file_search`` ...) no local model can run: not offered, and reported.
``ToolMap`` turns the model's flat names back into what the client declared, and
``tool_choice`` turns ``tool_choice`` into the request value's variant (``lmparse.request``).
"""

from __future__ import annotations

from typing import Any

from ...request import AUTO, NO_TOOLS, REQUIRED, Allowed, Named, ToolChoice
from ..validate import check_schema, checked, require

__all__ = ["ToolMap", "offered_tools", "tool_choice", "NAMESPACE_SEPARATOR"]

NAMESPACE_SEPARATOR = "__"


class ToolMap:
    """The model's (flat) tool names and what the client called them: kind, name, namespace."""

    __slots__ = ("_client", "_flat")

    def __init__(self) -> None:
        self._client: dict[str, tuple[str, str, str | None]] = {}
        self._flat: dict[tuple[str, str | None], str] = {}

    def add(self, kind: str, name: str, namespace: str | None = None) -> str:
        flat = f"{namespace}{NAMESPACE_SEPARATOR}{name}" if namespace else name
        self._client[flat] = (kind, name, namespace)
        self._flat[(name, namespace)] = flat
        return flat

    def client(self, flat: str) -> tuple[str, str, str | None]:
        """``(kind, name, namespace)`` for a name the model wrote."""
        return self._client.get(flat, ("function", flat, None))

    def flat(self, name: str, namespace: str | None = None) -> str:
        return self._flat.get((name, namespace)) or (f"{namespace}{NAMESPACE_SEPARATOR}{name}" if namespace else name)

    def kind_of_flat(self, flat: str) -> str | None:
        entry = self._client.get(flat)
        return entry[0] if entry is not None else None

    def kind_of(self, name: str) -> str | None:
        """The kind of a client-side name that ``tool_choice`` may name without a namespace."""
        flat = self._flat.get((name, None))
        return self._client[flat][0] if flat is not None else None



def _custom_function(tool: dict, name: str) -> dict:
    """A custom (free-form) tool offered as a function taking one string, ``input``."""
    description = tool.get("description")
    if not isinstance(description, str):
        description = ""
    fmt = tool.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "grammar" and isinstance(fmt.get("definition"), str):
        syntax = fmt.get("syntax") or "lark"
        description += f"\n\nThe input must follow this {syntax} grammar:\n{fmt['definition']}"
    return {"name": name, "description": description.strip() or None, "parameters": {
        "type": "object", "properties": {"input": {"type": "string", "description": "The tool's raw input text."}},
        "required": ["input"], "additionalProperties": False}}


def _function(tool: dict, name: str, path: str) -> dict:
    schema = tool.get("parameters")
    if schema is not None:
        check_schema(schema, f"{path}.parameters")
    return {"name": name, "description": tool.get("description"), "parameters": schema or {"type": "object"}}


def offered_tools(raw: Any, tool_map: ToolMap, ignored: list[str]) -> list[dict]:
    if raw is None:
        return []
    require(isinstance(raw, list), "tools must be a list", "tools")
    functions: list[dict] = []

    def add(tool: Any, path: str, namespace: str | None) -> None:
        require(isinstance(tool, dict), f"{path} must be an object", path)
        kind = tool.get("type")
        if kind == "namespace" and namespace is None:
            ns = tool.get("name")
            require(isinstance(ns, str) and ns, f"{path}.name must be a non-empty string", f"{path}.name")
            members = tool.get("tools")
            require(isinstance(members, list), f"{path}.tools must be a list", f"{path}.tools")
            for j, member in enumerate(members):
                add(member, f"{path}.tools[{j}]", ns)
            return
        require(kind != "namespace", f"{path}.type: namespaces do not nest", f"{path}.type")
        if kind not in ("function", "custom"):
            require(isinstance(kind, str), f"{path}.type must be a string naming a tool type", f"{path}.type")
            ignored.append(kind)
            return
        name = tool.get("name")
        require(isinstance(name, str) and name, f"{path}.name must be a non-empty string", f"{path}.name")
        if tool.get("defer_loading") is True:
            return  # tool search: not in the model's context until it is loaded
        fn = _custom_function(tool, name) if kind == "custom" else _function(tool, name, path)
        flat = f"{namespace}{NAMESPACE_SEPARATOR}{name}" if namespace else name
        require(tool_map.kind_of_flat(flat) is None, f"{path}.name: the model would see two tools named {flat!r}",
                f"{path}.name")
        fn["name"] = tool_map.add(kind, name, namespace)
        functions.append({"type": "function", "function": fn})

    for i, tool in enumerate(raw):
        add(tool, f"tools[{i}]", None)
    return functions


def tool_choice(raw: Any, tool_map: ToolMap, names: list[str]) -> ToolChoice | None:
    """Responses ``tool_choice`` as the request value's variant (None: the default, by tools)."""
    if raw is None:
        return None
    if raw in ("auto", "none", "required"):
        if raw == "required":
            require(bool(names), "tool_choice 'required' needs at least one function or custom tool", "tool_choice")
        return REQUIRED if raw == "required" else AUTO if raw == "auto" else NO_TOOLS
    require(isinstance(raw, dict), "tool_choice must be auto, none, required or an object", "tool_choice")
    kind = raw.get("type")
    if kind in ("function", "custom"):
        name = raw.get("name")
        require(isinstance(name, str) and tool_map.kind_of(name) == kind,
                f"tool_choice names {kind} tool {name!r}, which is not in tools", "tool_choice.name")
        return Named(tool_map.flat(name))
    if kind == "allowed_tools":
        mode = raw.get("mode", "auto")
        require(mode in ("auto", "required"), f"tool_choice.mode must be auto or required, got {mode!r}",
                "tool_choice.mode")
        listed = raw.get("tools")
        require(isinstance(listed, list) and listed, "tool_choice.tools must be a non-empty list", "tool_choice.tools")
        allowed = []
        for i, tool in enumerate(listed):
            unnamed = f"tool_choice.tools[{i}] must name a function or custom tool in tools"
            param = f"tool_choice.tools[{i}]"
            name = checked(tool.get("name") if isinstance(tool, dict) else None, str, unnamed, param)
            require(tool_map.kind_of(name) is not None, unnamed, param)
            allowed.append(tool_map.flat(name))
        return Allowed(allowed, required=mode == "required")
    require(False, f"tool_choice forces the hosted tool {kind!r}, which a local model cannot run", "tool_choice.type")
    return None
