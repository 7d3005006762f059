"""lmparse behind the adapter calls of ``bench.compare.measure`` (this process only).

``create_parser`` per stream, ``stream_chunk(text)`` per chunk (``final=True`` last), as
``lmparse serve`` feeds it; ``parse_complete(text)`` for a non-streamed reply.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterator

import lmparse
from lmparse import create_parser

from .cases import Case, complete_result


class Adapter:
    impl = f"lmparse {lmparse.__version__}"

    def new_state(self, case: Case, parsers: dict) -> Any:
        return create_parser(tool_parser=parsers.get("tool"), reasoning_parser=parsers.get("reasoning"),
                             request={"tools": case.tools} if case.tools else None)

    def prepare(self, case: Case, pieces: list[str]) -> list[str]:
        return pieces

    def stream(self, state: Any, fed: list[str]) -> Iterator[Any]:
        stream = state.stream_chunk
        for piece in fed[:-1]:
            for delta, _has_tools in stream(piece):
                yield delta
        for delta, _has_tools in stream(fed[-1], final=True):
            yield delta

    def feed(self, state: Any, fed: list[str]) -> None:
        stream = state.stream_chunk
        for piece in fed[:-1]:
            stream(piece)
        stream(fed[-1], final=True)

    def complete(self, state: Any, case: Case) -> list[Any]:
        parsed = state.parse_complete(case.text)
        return complete_result(parsed.content, parsed.reasoning_content, (c.function for c in parsed.tool_calls))
