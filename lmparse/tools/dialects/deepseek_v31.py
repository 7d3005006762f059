"""DeepSeek-V3.1: one section of calls, each a name and its JSON arguments::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>

The official template writes no whitespace between calls and puts the content, if
any, right before the section.  Every marker is one token in the V3.1 tokenizer (the
``▁`` are U+2581, the bars U+FF5C), so no proper prefix ends a chunk at a token boundary.
"""

from __future__ import annotations

from typing import Final

from ..section import SectionToolParser
from ..._mypyc import mypyc_attr

CALLS_BEGIN: Final = "<｜tool▁calls▁begin｜>"
CALLS_END: Final = "<｜tool▁calls▁end｜>"
CALL_BEGIN: Final = "<｜tool▁call▁begin｜>"
SEP: Final = "<｜tool▁sep｜>"
CALL_END: Final = "<｜tool▁call▁end｜>"


@mypyc_attr(allow_interpreted_subclasses=True)
class DeepSeekV31ToolParser(SectionToolParser):
    summary = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>…"
    tool_open_tags = (CALLS_BEGIN,)
    # Every marker is one token: a decoding with spaces between special tokens parses too
    # (a block with a space after its opener; the space before it stays text).
    spaced_tokens = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)
    tool_close_tag = CALLS_END
    tool_close_prefixes = ()
    call_begin = CALL_BEGIN
    header_end = SEP
    call_end = CALL_END

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        body = "".join(f"{CALL_BEGIN}{name}{SEP}{arguments}{CALL_END}" for name, arguments in calls)
        return f"{CALLS_BEGIN}{body}{CALLS_END}"
