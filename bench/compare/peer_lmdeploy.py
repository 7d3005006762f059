"""LMDeploy 0.18's parser stack: its ``default`` response parser (peer side, bench/.peers/lmdeploy only).

The venv holds LMDeploy without torch (``scripts/setup_bench_peers.sh``).  Three package
modules on the parsers' import path pull in the engines; ``bench.peer_lmdeploy``'s import
stands in for them (its docstring says how).  Everything the parse runs is LMDeploy's code.
Its server calls ``stream_chunk(delta_text, delta_token_ids)`` per step (``final=True``
last) and ``parse_complete(text)`` for a non-streamed reply.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterator

from ..peer_lmdeploy import _import_parsers
from .cases import Case, complete_result


class Adapter:
    def __init__(self) -> None:
        responses, _tools, self._request_cls, self.impl = _import_parsers()
        self._base = responses.get("default")
        self._classes: dict[tuple, Any] = {}

    def new_state(self, case: Case, parsers: dict) -> Any:
        names = (parsers.get("tool"), parsers.get("reasoning"))
        cls = self._classes.get(names)
        if cls is None:
            # The parser names are class attributes: one subclass per pairing.
            cls = type("Compare", (self._base,), {"reasoning_parser_cls": None, "tool_parser_cls": None})
            cls.set_parsers(reasoning_parser_name=names[1], tool_parser_name=names[0])
            self._classes[names] = cls
        request = self._request_cls(model="bench", messages=[{"role": "user", "content": "go"}],
                                    tools=case.tools or None)
        return cls(request)

    def prepare(self, case: Case, pieces: list[str]) -> list[str]:
        return pieces

    def stream(self, state: Any, fed: list[str]) -> Iterator[Any]:
        stream = state.stream_chunk
        for piece in fed[:-1]:
            for delta, _has_tools in stream(piece, []):
                yield delta
        for delta, _has_tools in stream(fed[-1], [], final=True):
            yield delta

    def feed(self, state: Any, fed: list[str]) -> None:
        stream = state.stream_chunk
        for piece in fed[:-1]:
            stream(piece, [])
        stream(fed[-1], [], final=True)

    def complete(self, state: Any, case: Case) -> list[Any]:
        content, calls, reasoning = state.parse_complete(case.text)
        return complete_result(content, reasoning, (call.function for call in calls or ()))
