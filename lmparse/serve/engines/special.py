"""The special-token text a family's replies carry: what an engine must render, what ends a turn.

Markers are often CONTROL tokens, whose text engines drop by default.  llama.cpp renders
one only when the request lists its text in ``preserved_tokens`` (a list of strings, each
kept if it is one token of the model's vocabulary, ignored otherwise), so
``preserved_tokens`` lists every marker the family's parsers read: their declared open
and close tags, and each marker-shaped piece of a call the tool dialect renders (the
inner ``<｜tool▁sep｜>``, ``<|tool_call_argument_begin|>``, ``[ARGS]``...).

The end-of-turn token's text must never reach content; vLLM and LMDeploy leave it out,
but SGLang with ``no_stop_trim`` and llama.cpp with ``--special`` send it.  Each family
declares its own (``Family.end_of_turn`` in ``lmparse.families``, verified against the
families' tokenizer configs: ``eos_token`` and the template's turn end).  gpt-oss has none here: Harmony's own
parser reads ``<|end|>`` / ``<|return|>`` / ``<|call|>``.
"""

from __future__ import annotations

import re

from ...registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
from ..families import Family

__all__ = ["SPECIAL_SHAPE", "family_markers", "preserved_tokens", "end_of_turn"]

# Text shaped like one special token: <|x|>, DeepSeek's full-width <｜x｜> and ｜DSML｜,
# XML-ish tags (<tool_call>, </arg_value>, <seed:eos>), Mistral's [TOOL_CALLS].
SPECIAL_SHAPE = re.compile(r"<\|[^|<>\s]{1,48}\|>|<｜[^｜<>]{1,48}｜>|｜DSML｜|</?[A-Za-z_][\w:.-]{0,40}>"
                           r"|\[/?[A-Z][A-Z_]{1,20}\]")

_CHATML = ("<|im_end|>", "<|endoftext|>")  # what a prompt rendered as plain ChatML ends the turn with

_SAMPLE_CALL = [("get_weather", '{"city": "Paris"}')]


def family_markers(family: Family) -> list[str]:
    """The markers the family's parsers declare (tool open and close tags, reasoning tags,
    the response grammar's own)."""
    markers: list[str] = []
    if family.tool_parser and family.tool_parser in ToolParserManager:
        tool_cls = ToolParserManager.get(family.tool_parser)
        markers += [*tool_cls.tool_open_tags, tool_cls.tool_close_tag or ""]
    if family.reasoning_parser and family.reasoning_parser in ReasoningParserManager:
        reasoning_cls = ReasoningParserManager.get(family.reasoning_parser)
        markers += [reasoning_cls.start_tag or "", reasoning_cls.end_tag]
    if family.response_parser and family.response_parser in ResponseParserManager:
        markers += ResponseParserManager.get(family.response_parser).markers
    return markers


def preserved_tokens(family: Family) -> tuple[str, ...]:
    """Every marker text the family's parsers read, whole and cut into special-token-shaped pieces."""
    markers = [m for m in family_markers(family) if m]
    texts = list(markers)
    if family.tool_parser and family.tool_parser in ToolParserManager:
        try:
            texts.append(ToolParserManager.get(family.tool_parser).render(_SAMPLE_CALL))
        except NotImplementedError:
            pass
    pieces = [piece for text in texts for piece in SPECIAL_SHAPE.findall(text)]
    return tuple(dict.fromkeys(markers + pieces))


def end_of_turn(family: Family, chatml: bool = False) -> tuple[str, ...]:
    """The texts that end the family's turn (``chatml``: prompts are rendered as plain
    ChatML, so the model was asked to end with ``<|im_end|>``)."""
    texts = family.end_of_turn
    return tuple(dict.fromkeys(texts + _CHATML)) if chatml else texts
