"""Kimi-K2 / K2.5: ``<|tool_calls_section_begin|>`` sections of ``functions.NAME:IDX`` calls.

Wire syntax (the official templates write no whitespace between markers)::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>

``functions.NAME:IDX`` is the call id (IDX counts calls across the conversation in
K2-Instruct / K2-Thinking, within the message in the original K2 template); the
function name is what lies between the ``functions.`` prefix and the ``:IDX`` suffix.
A call whose ``<|tool_call_end|>`` is missing is ended by the section end.

Tokenization: every marker is one (non-special) token, ids 163595-163599; no public
Kimi vocabulary exists, so the empty prefix tuple rests on those ids.
"""

from __future__ import annotations

from typing import Final

import re

from ..section import SectionToolParser
from ..._mypyc import mypyc_attr

SECTION_BEGIN: Final = "<|tool_calls_section_begin|>"
SECTION_END: Final = "<|tool_calls_section_end|>"
CALL_BEGIN: Final = "<|tool_call_begin|>"
ARGUMENT_BEGIN: Final = "<|tool_call_argument_begin|>"
CALL_END: Final = "<|tool_call_end|>"
_CALL_ID: Final = re.compile(r"(?:functions\.)?(.*?)(?::\d+)?")


@mypyc_attr(allow_interpreted_subclasses=True)
class KimiK2ToolParser(SectionToolParser):
    summary = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}"
               "<|tool_call_end|>…")
    tool_open_tags = (SECTION_BEGIN,)
    # Every marker is one token: a decoding with spaces between special tokens parses too
    # (a block with a space after its opener; the space before it stays text).
    spaced_tokens = (SECTION_BEGIN, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END, SECTION_END)
    tool_close_tag = SECTION_END
    tool_close_prefixes = ()
    call_begin = CALL_BEGIN
    header_end = ARGUMENT_BEGIN
    call_end = CALL_END

    @classmethod
    def _split_header(cls, header: str) -> tuple[str | None, str | None]:
        call_id = header.strip()
        match = _CALL_ID.fullmatch(call_id)  # matches every header without a line break
        name = match.group(1).strip() if match else ""
        return (name, call_id) if name else (None, None)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        body = "".join(
            f"{CALL_BEGIN}functions.{name}:{i}{ARGUMENT_BEGIN}{arguments}{CALL_END}"
            for i, (name, arguments) in enumerate(calls)
        )
        return f"{SECTION_BEGIN}{body}{SECTION_END}"
