"""The benchmark's dialect groups: one per registered tool parser class, plus gpt-oss's text path.

A group is named by its shortest registered name (ties: alphabetical) and answers to
every alias.  Its replies are the ``bench.fixtures`` calls rendered with the dialect's
own ``render`` after a short content written the way the dialect writes content ahead of
its calls (``render_content``: bare text for most, a ``to=user`` message for Muse), no
reasoning (``reasoning_parser=None``).  Imports lmparse, so it is used on our side only;
the peer runners receive the rendered replies in their job.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple
from collections.abc import Callable

from lmparse import create_parser
from lmparse.registry import ToolParserManager
from lmparse.response.harmony import render_reply
from lmparse.tools.xml import XmlToolParser

from .fixtures import CALL_CONTENT, Call, CallReply

__all__ = ["Dialect", "HARMONY", "all_dialects", "select_dialects", "call_reply"]

HARMONY = "gpt-oss"


class Dialect(NamedTuple):
    label: str
    names: tuple[str, ...]  # every registered name of the class, the label first
    # Value text ends at a closing tag (the XML driver): the string-argument target applies.
    xml_like: bool
    make_parser: Callable[[dict], Any]  # request -> a fresh parser
    render: Callable[[str, str], tuple[str, str]]  # (name, arguments) -> (reply text, its content)
    # The marker strings the dialect declares: a peer that needs them whole (as a tokenizer
    # sends its single-token markers) is also measured on chunks that keep them whole.
    markers: tuple[str, ...]


def _declared_markers(cls: type) -> tuple[str, ...]:
    """The outer tags plus every markup-like string constant of the dialect's module(s)."""
    found = {*cls.tool_open_tags, cls.tool_close_tag or ""}
    for klass in cls.__mro__:
        module = sys.modules.get(klass.__module__)
        if module is not None and ".dialects." in module.__name__:
            found.update(v for v in vars(module).values() if isinstance(v, str) and v[:1] in "<[`")
    return tuple(sorted(m for m in found if m))


def _tool_dialect(label: str, names: tuple[str, ...], cls: type) -> Dialect:
    def make_parser(request: dict) -> Any:
        return create_parser(tool_parser=label, reasoning_parser=None, request=request)

    def render(name: str, arguments: str) -> tuple[str, str]:
        wire = cls.render([(name, arguments)])
        if cls.tool_open_tags and not wire.startswith(cls.tool_open_tags):
            # A bare block (Llama 3 JSON, a pythonic list) is a call only at the very
            # start of a reply; after content it needs the dialect's open tag.
            wire = cls.tool_open_tags[0] + wire + (cls.tool_close_tag or "")
        return cls.render_content(CALL_CONTENT) + wire, CALL_CONTENT

    return Dialect(label, names, issubclass(cls, XmlToolParser), make_parser, render, _declared_markers(cls))


def _harmony_dialect() -> Dialect:
    content = CALL_CONTENT.strip()

    def make_parser(request: dict) -> Any:
        return create_parser(response_parser=HARMONY, request=request)

    def render(name: str, arguments: str) -> tuple[str, str]:
        # A commentary preamble is content; the call follows as its own message.
        return render_reply([("commentary", content), ("call", name, arguments)]), content

    return Dialect(HARMONY, (HARMONY,), False, make_parser, render, ())


def all_dialects() -> list[Dialect]:
    """Every registered tool parser class once (aliases folded), in label order, then gpt-oss."""
    by_class: dict[type, list[str]] = {}
    for name in ToolParserManager.names():
        by_class.setdefault(ToolParserManager.get(name), []).append(name)
    groups = []
    for cls, names in by_class.items():
        label = min(names, key=lambda n: (len(n), n))
        aliases = tuple(n for n in names if n != label)
        groups.append(_tool_dialect(label, (label, *aliases), cls))
    groups.sort(key=lambda d: d.label)
    groups.append(_harmony_dialect())
    return groups


def select_dialects(spec: str) -> list[Dialect]:
    """``all``, ``none``, or comma-separated names (any alias selects its group)."""
    groups = all_dialects()
    if spec.strip() == "all":
        return groups
    if spec.strip() == "none":
        return []
    wanted = [name.strip() for name in spec.split(",") if name.strip()]
    known = {name: group for group in groups for name in group.names}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(
            f"unknown dialect {', '.join(map(repr, unknown))}; choose all, none or from: {', '.join(sorted(known))}"
        )
    return [group for group in groups if any(known[name] is group for name in wanted)]


def call_reply(dialect: Dialect, call: Call) -> CallReply:
    text, content = dialect.render(call.name, call.arguments)
    return CallReply(
        dialect=dialect.label,
        kind=call.kind,
        size=call.size,
        text=text,
        name=call.name,
        arguments=call.arguments,
        tools=call.tools,
        content=content,
        exact=call.arguments in text,
    )
