"""A stand-in for LMDeploy's engine: what its serving layer reads, replies from a token stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from types import SimpleNamespace
from typing import Any


def stand_in_context(arch: str = "Qwen3ForCausalLM") -> Any:
    """What ``api_server.set_parsers`` reads of its server context (no tokenizer: no tag ids)."""
    engine = SimpleNamespace(arch=arch, tokenizer=SimpleNamespace(model=SimpleNamespace(model=None)))
    return SimpleNamespace(async_engine=engine, response_parser_cls=None)


async def engine_results(steps: Sequence[tuple[str, list[int]]]) -> AsyncIterator[Any]:
    """The engine's outputs for one reply: one result per step, the last one finished."""
    produced = 0
    for i, (text, ids) in enumerate(steps):
        produced += len(ids)
        yield SimpleNamespace(response=text, token_ids=ids, finish_reason="stop" if i == len(steps) - 1 else None,
                              logprobs=None, input_token_len=7, generate_token_len=produced, cached_tokens=0,
                              routed_experts=None, cache_block_ids=None)


class Sessions:
    """The session manager ChatRunner closes its session with."""

    def remove(self, session: object) -> None:
        pass
