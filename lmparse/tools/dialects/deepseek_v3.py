"""DeepSeek-V3 / V3-0324 / R1: calls typed ``function``, arguments in a fenced JSON block.

Wire syntax (the R1 templates put ``\\n`` between calls)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {...}
    ```<｜tool▁call▁end｜>
    <｜tool▁call▁begin｜>...<｜tool▁call▁end｜><｜tool▁calls▁end｜>

Some templates close the fence right after the JSON (no newline before the
backticks); the fence itself is optional here.  The ``<｜...｜>`` markers are one
token each in the R1 tokenizer; `````json`` is ```````, ``json``, and a lone fence
is one token, so no proper prefix of the section end ends a chunk.
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
FENCE_OPEN: Final = "```json"
FENCE_CLOSE: Final = "```"


@mypyc_attr(allow_interpreted_subclasses=True)
class DeepSeekV3ToolParser(SectionToolParser):
    summary = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```…"
    # The fence tells it from V3.1's templates, which share the section markers.
    template_markers = (CALLS_BEGIN, CALLS_END, FENCE_OPEN)
    tool_open_tags = (CALLS_BEGIN,)
    # Every marker is one token: a decoding with spaces between special tokens parses too
    # (a block with a space after its opener; the space before it stays text).
    spaced_tokens = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)
    tool_close_tag = CALLS_END
    tool_close_prefixes = ()
    call_begin = CALL_BEGIN
    header_end = "\n"  # the header is "function<｜tool▁sep｜>NAME"
    header_forbidden = ""
    args_prefix = FENCE_OPEN
    args_suffix = FENCE_CLOSE
    call_end = CALL_END

    @classmethod
    def _split_header(cls, header: str) -> tuple[str | None, str | None]:
        kind, sep, name = header.partition(SEP)
        name = (name if sep else kind).strip()  # "function" is the only call type
        return (name or None), None

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        body = "\n".join(
            f"{CALL_BEGIN}function{SEP}{name}\n{FENCE_OPEN}\n{arguments}\n{FENCE_CLOSE}{CALL_END}"
            for name, arguments in calls
        )
        return f"{CALLS_BEGIN}{body}{CALLS_END}"
