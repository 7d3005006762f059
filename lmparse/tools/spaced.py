"""Special tokens decoded with spaces between them: the layout a tool block reads past.

An engine that decodes with ``spaces_between_special_tokens`` (vLLM's slow-tokenizer path,
Hugging Face's ``decode``) joins the pieces of a reply with one space on each side of every
added token: ``<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}`` arrives as
``<|tool_call_begin|> functions.f:0 <|tool_call_argument_begin|> {}``.  A dialect whose
markers are single special tokens lists them (``ToolParser.spaced_tokens``); a block
opened with a space before its open tag, with the layout spaces around a listed token inside
its open tag (DSML's ``< ｜DSML｜ calls>``: list those spellings with ``spaced_open_tags``), or
with a space right after it, is read as such a decoding: one space on each side of each listed
token is removed before the dialect's hooks read the text, which is the exact inverse of the
join (two tokens in a row share one space; a space the text had itself is the second of two,
and stays).  A block that only the space after its tag made spaced and that is cut off before
it committed anything reads as the plain text does (``use <tool_call> tags`` is prose).

``Spacing.squeeze`` is a pure function of the text the driver is handed, plus whether what
it consumed last ended at a token; a space at the end that may precede a token not yet
arrived is removed tentatively: a parser that stops before it leaves it unconsumed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

__all__ = ["Spacing", "spaced_open_tags", "spacing_for"]


def spaced_open_tags(tags: tuple[str, ...], tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``tags`` and, after them, each tag that holds one of ``tokens`` with text beside it as a
    spaced decoding writes it (``<｜DSML｜calls>`` -> ``< ｜DSML｜ calls>``)."""
    pattern = re.compile("(" + "|".join(map(re.escape, sorted(set(tokens), key=len, reverse=True))) + ")")
    spaced = (" ".join(part for part in pattern.split(tag) if part) for tag in tags)
    return (*tags, *(tag for tag in dict.fromkeys(spaced) if tag not in tags))


class Spacing:
    """The layout spaces around one dialect's special tokens (built once per class)."""

    __slots__ = ("_pattern", "_ends_at_token", "_laid_out")

    def __init__(self, tokens: tuple[str, ...]) -> None:
        alternatives = "|".join(map(re.escape, sorted(set(tokens), key=len, reverse=True)))
        partial = "|".join(re.escape(t[:i]) for t in set(tokens) for i in range(len(t) - 1, 0, -1))
        # A token and the space after it, or a space before a token (tentative before a
        # token's start or the end of the text).
        self._pattern = re.compile(f"(?:{alternatives})( ?)| (?=(?:{alternatives})|(?P<t>(?:{partial})?)\\Z)")
        self._ends_at_token = re.compile(f"(?:{alternatives})\\Z")
        # A token that starts a tag with a space after it, or one inside it with a space on each
        # side (V4.1's own ``<｜DSML｜ calls>`` is neither).
        self._laid_out = re.compile(f"\\A(?:{alternatives}) | (?:{alternatives})(?: |\\Z)")

    def lays_out(self, tag: str) -> bool:
        """``tag`` (an open tag) is spelled as a spaced decoding writes it."""
        return tag.startswith(" ") or self._laid_out.search(tag) is not None

    def ends_at_token(self, text: str, end: int) -> bool:
        """``text[:end]`` ends with one of the tokens (a space after ``end`` is its layout)."""
        return self._ends_at_token.search(text, 0, end) is not None

    def squeeze(self, text: str, lead: bool) -> tuple[str, list[tuple[int, int]]]:
        """``text`` without the layout spaces (a leading one too when ``lead``: it follows a
        token), and where they were: ``(position in the result, spaces removed up to there)``,
        ascending; a tentative space counts from the position after it."""
        parts: list[str] = []
        removed: list[tuple[int, int]] = []
        last = gone = 0
        start = 0
        if lead and text.startswith(" "):
            gone, last, start = 1, 1, 1
            removed.append((0, 1))
        for match in self._pattern.finditer(text, start):
            space = match.start(1) if match.group(1) else match.start() if match.group(1) is None else -1
            if space < 0:
                continue  # a token with no space after it
            parts.append(text[last:space])
            gone += 1
            last = space + 1
            tentative = match.group("t") is not None
            removed.append((last - gone + tentative, gone))
        if not removed:
            return text, removed
        parts.append(text[last:])
        return "".join(parts), removed

    @staticmethod
    def original(consumed: int, removed: list[tuple[int, int]], size: int) -> int:
        """Where ``consumed`` characters of the squeezed text end in the original one."""
        at = bisect_right(removed, (consumed, size))
        return consumed + (removed[at - 1][1] if at else 0)


@lru_cache(maxsize=64)
def spacing_for(tokens: tuple[str, ...]) -> Spacing:
    """The ``Spacing`` of one dialect's tokens, built once."""
    return Spacing(tokens)
