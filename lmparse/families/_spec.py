"""The shape of a family declaration: ``Family``, the parsers it names, the peers' names for it.

A ``Family`` is an immutable value; every family module under ``lmparse.families`` builds one
and calls it ``FAMILY``.  Nothing here imports a parser: the values only hold the classes the
family module hands them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Family", "Parser", "Peers"]


class Parser(NamedTuple):
    """A parser class and its canonical registry name (what ``lmparse parsers`` lists first).

    The value is declared once, in the module of the family the parser was written for;
    other families that share it import the value and add their own names as aliases."""

    name: str
    cls: Any  # a ToolParser, ReasoningParser or ResponseParser class


class Peers(NamedTuple):
    """The registry names other stacks give this family's parsers (facts, for users moving
    over and for the benchmarks' peer runs; empty where a peer has none or it is unknown)."""

    vllm: tuple[str, ...] = ()
    sglang: tuple[str, ...] = ()
    lmdeploy: tuple[str, ...] = ()
    smg: tuple[str, ...] = ()  # the Shepherd Model Gateway (SMG) parsers
    llamacpp: tuple[str, ...] = ()


class Family(NamedTuple):
    """One model family: its parsers, the names they answer to, how it is served and checked.

    ``tool`` / ``reasoning`` / ``response`` are the parsers (None: no tool dialect, no
    reasoning markers, the default router); ``tool_names`` / ``reasoning_names`` are the
    registry names this family adds for them besides their canonical names (the first is what
    ``lmparse serve --family NAME`` binds).  The layout the template writes around blocks
    (``block_lead``, ``block_separator``) and the call syntax generation constraints are built
    from (``call_syntax()``, with its value grammar) are the tool dialect's own: the family
    reads them there (``layout``, ``call_syntax``), so they are declared once."""

    name: str
    description: str
    tool: Parser | None = None
    reasoning: Parser | None = None
    response: Parser | None = None
    tool_names: tuple[str, ...] = ()
    reasoning_names: tuple[str, ...] = ()
    # The test data the family is served and verified with: a tokenizer directory (None: a
    # pseudo-tokenizer built from the markers), the chat template ``serve`` renders with, and
    # the other templates checked to write what the parsers read (``verified_templates``: every
    # one is round-tripped by the tests).  A name holding ``/`` is a path in the test data, else
    # a file under its ``templates/``.
    tokenizer: str | None = None
    template: str | None = None
    templates: tuple[str, ...] = ()
    end_of_turn: tuple[str, ...] = ()  # texts that end the model's turn (stop strings for an upstream engine)
    peers: Peers = Peers()
    verified: str = ""  # what the declaration was checked against, where that is less than a tokenizer and a template

    # ---- what the rest of lmparse reads ------------------------------------------------------

    @property
    def tool_parser(self) -> str | None:
        """The registry name ``serve`` binds for the tool dialect."""
        return _bound(self.tool, self.tool_names)

    @property
    def reasoning_parser(self) -> str | None:
        return _bound(self.reasoning, self.reasoning_names)

    @property
    def response_parser(self) -> str:
        return self.response.name if self.response is not None else "default"

    @property
    def verified_templates(self) -> tuple[str, ...]:
        """The served template, then the others."""
        return (self.template, *self.templates) if self.template else self.templates

    @property
    def layout(self) -> tuple[str, str | None]:
        """What the template writes before a block that follows text, and between two blocks."""
        tool = self.tool.cls if self.tool is not None else None
        return (tool.block_lead, tool.block_separator) if tool is not None else ("", "")

    def call_syntax(self) -> Any:
        """The dialect's ``CallSyntax`` (None: ``tool_choice="required"`` cannot be enforced)."""
        describer = self.tool.cls if self.tool is not None else self.response.cls if self.response else None
        syntax = getattr(describer, "call_syntax", None)
        return syntax() if syntax is not None else None


def _bound(parser: Parser | None, names: tuple[str, ...]) -> str | None:
    if parser is None:
        return None
    return names[0] if names else parser.name
