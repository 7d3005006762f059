"""Reasoning parsers: descriptors of the reasoning tags and the initial mode.

A reasoning "parser" parses nothing: it declares its tags and whether a response
starts inside reasoning.  Buffering, tag recognition and routing belong to the
response parser.  This module holds the base and the rules families share; a family's own
tags and rule are declared in its module under ``lmparse.families``, which also registers
every name.

The initial mode comes from the request's thinking switch (``starts_in_reasoning``, each
family's rule) unless the class's ``initial_mode`` is ``"auto"`` and the rendered prompt
was given: then the prompt's tail decides (``prompt_opens_reasoning``), because those
templates settle the mode in the prompt itself (a prefilled opener, a prefilled empty
block, or nothing so that the model decides).
"""

from __future__ import annotations

from typing import ClassVar

from ..request import ParserRequest

__all__ = ["ReasoningParser", "DefaultReasoningParser", "OptInThinking", "ModelOpensReasoning", "AlwaysReasoning",
           "PromptDecidesReasoningParser", "prompt_opens_reasoning"]


def prompt_opens_reasoning(prompt: str, start_tag: str, label: str = "") -> bool:
    """True when the prompt ends with an unclosed ``start_tag``, optionally followed by the
    tag's ``label`` (Gemma 4's ``<|channel>thought\n``), trailing whitespace aside: the reply
    starts inside reasoning.  A closed block or no opener means content, until the model
    writes the opener itself."""
    tail = prompt.rstrip()
    tag = start_tag.rstrip() or start_tag  # a tag that ends in a newline (a template's thinking opener)
    at = tail.rfind(tag)
    if at < 0:
        return False
    rest = tail[at + len(tag):]
    return rest == "" or (bool(label) and rest == label.rstrip())


class ReasoningParser:
    """``<think>`` ... ``</think>``; starts in reasoning unless the request turns thinking off."""

    start_tag: str | None = "<think>"
    end_tag: str = "</think>"
    # Proper prefixes of the tags that end a decoded chunk at a real token boundary,
    # longest first (see tests/test_token_prefixes.py for the tokenizers checked).
    start_tag_prefixes: tuple[str, ...] = ()
    end_tag_prefixes: tuple[str, ...] = ()
    # A tool call opened while reasoning ends the reasoning; a close tag the model still
    # writes after it is a stray tag, dropped from the content.
    tool_call_ends_reasoning: bool = False
    # A close tag met outside reasoning is dropped (MiniMax-M3's adaptive mode writes a bare
    # ``</mm:think>`` before an answer it did not think about).
    bare_end_tag_dropped: bool = False
    # A label the open tag may carry, dropped (Gemma 4's channel name ``thought\n``).
    start_label: str = ""
    # "request": the thinking switch decides (``starts_in_reasoning``); "auto": the rendered
    # prompt's tail decides when it is given (see the module docstring).
    initial_mode: str = "request"
    # The family's message framing (see ``ToolParser.framing_markers``): dropped from the
    # content; while reasoning, one ends the reasoning (a skipped close tag).
    framing_markers: ClassVar[tuple[str, ...]] = ()

    def __init__(self, request: ParserRequest, prompt: str | None = None) -> None:
        self.request = request
        self.prompt = prompt  # the rendered prompt (its tail is enough), when the caller has it

    def starts_in_reasoning(self) -> bool:
        """The family's rule from the request alone."""
        return self.request.thinking is not False

    def initial_reasoning(self) -> bool:
        """Whether the reply starts inside reasoning: the prompt's tail in ``auto`` mode, else the request."""
        if self.initial_mode == "auto" and self.prompt is not None and self.start_tag:
            return prompt_opens_reasoning(self.prompt, self.start_tag, self.start_label)
        return self.starts_in_reasoning()

    @classmethod
    def render(cls, reasoning: str) -> str:
        """Wire text of a reasoning segment, as the model writes it."""
        return f"{cls.start_tag or ''}{cls.start_label}{reasoning}{cls.end_tag}"


class DefaultReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``, in reasoning unless the request turns thinking off."""


class OptInThinking(ReasoningParser):
    """``<think>`` families whose templates think only when the request asks for it."""

    def starts_in_reasoning(self) -> bool:
        return self.request.thinking is True


class ModelOpensReasoning(ReasoningParser):
    """Families whose templates prefill nothing: the model opens reasoning itself, so a
    reply starts plain whatever the thinking switch says."""

    def starts_in_reasoning(self) -> bool:
        return False


class AlwaysReasoning(ReasoningParser):
    """Families whose templates always prefill the opener, with no switch: the reply starts in
    reasoning whatever ``enable_thinking`` says."""

    def starts_in_reasoning(self) -> bool:
        return True


class PromptDecidesReasoningParser(DefaultReasoningParser):
    """``<think>`` families whose templates prefill the opener (thinking), an empty block
    (``<think>\\n\\n</think>\\n\\n`` Qwen3.5, ``<think></think>`` Nemotron 3 and Ling 3) or,
    for GLM-5.3, always the opener.  Without the prompt: the default rule."""

    initial_mode = "auto"
