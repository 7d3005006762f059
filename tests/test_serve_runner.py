"""ChatRunner: transport metadata, finish reasons, usage and cancellation, on a scripted engine."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

pytest.importorskip("orjson")

from lmparse import create_parser  # noqa: E402
from lmparse.serve.engines.base import EngineChunk, EngineStream  # noqa: E402
from lmparse.serve.runner import ChatRunner  # noqa: E402

TOOLS = {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'


class Script:
    """An engine stream of fixed chunks that records whether it was closed early."""

    def __init__(self, chunks: list[EngineChunk]) -> None:
        self.chunks = chunks
        self.closed_early = False

    async def gen(self):
        done = False
        try:
            for chunk in self.chunks:
                await asyncio.sleep(0)
                yield chunk
            done = True
        finally:
            self.closed_early = not done

    def stream(self) -> EngineStream:
        return EngineStream(7, self.gen())


def run(chunks, request=TOOLS, limit=None):
    script = Script(chunks)
    runner = ChatRunner(script.stream(), create_parser(tool_parser="qwen", reasoning_parser="qwen3", request=request))

    async def collect():
        out = []
        async with aclosing(runner.run()) as deltas:
            async for d in deltas:
                out.append(d)
                if limit is not None and len(out) >= limit:
                    break
        return out

    return runner, asyncio.run(collect()), script


def test_metadata_goes_on_the_last_delta_of_a_chunk():
    # One chunk closes reasoning, carries content and a whole call: several deltas.
    runner, deltas, _ = run([EngineChunk("<think>r", [1]), EngineChunk("</think>ok" + CALL, [2, 3, 4], [{"t": 1}], "stop")])
    assert [d.token_ids for d in deltas] == [[1], None, [2, 3, 4]]
    assert deltas[1].message.content == "ok" and deltas[2].has_tool_calls
    assert deltas[-1].logprobs == [{"t": 1}] and deltas[-1].finish_reason == "tool_calls"
    assert all(d.finish_reason is None for d in deltas[:-1])


def test_a_chunk_that_yields_nothing_becomes_a_metadata_only_delta():
    runner, deltas, _ = run([EngineChunk("</think>a<tool", [1]), EngineChunk("_call>", [2]), EngineChunk("x", [3], None, "stop")],
                            request=None)
    held = deltas[1]  # "<tool" is held until "_call>" completes the tag
    assert held.token_ids == [2] and held.message.to_dict() == {}


@pytest.mark.parametrize("text,engine_reason,expected", [
    ("</think>hi", "stop", "stop"),
    ("</think>" + CALL, "stop", "tool_calls"),
    ("</think>" + CALL, "length", "length"),  # never rewritten
    ("</think>" + CALL[:20], "length", "length"),
])
def test_stop_becomes_tool_calls_only_when_a_call_was_emitted(text, engine_reason, expected):
    runner, deltas, _ = run([EngineChunk(text, [1], None, engine_reason)])
    assert runner.finish_reason == expected == deltas[-1].finish_reason


def test_usage_counts_tokens_and_reasoning_tokens():
    chunks = [EngineChunk(c, [i]) for i, c in enumerate(["r1", " r2", "</think>", "done"])]
    chunks[-1].finish_reason = "stop"
    runner, _, _ = run(chunks)
    assert (runner.usage.prompt_tokens, runner.usage.completion_tokens, runner.usage.reasoning_tokens) == (7, 4, 2)
    assert runner.usage.openai()["completion_tokens_details"] == {"reasoning_tokens": 2}


def test_an_engine_that_ends_without_a_reason_finishes_with_stop():
    runner, deltas, _ = run([EngineChunk("</think>hi <tool", [1])])
    assert runner.finish_reason == "stop" and deltas[-1].finish_reason == "stop"
    assert "".join(d.message.content or "" for d in deltas) == "hi <tool"  # held text released


def test_a_consumer_that_stops_early_closes_the_engine():
    runner, deltas, script = run([EngineChunk(f"w{i} ", [i]) for i in range(50)], limit=3)
    assert script.closed_early and not runner.completed


def test_first_argument_fragment_never_starts_with_whitespace():
    runner, deltas, _ = run([EngineChunk('</think><tool_call>{"name": "f", "arguments":', [1]),
                             EngineChunk('   {"a": 1}}</tool_call>', [2], None, "stop")])
    fragments = [tc.function.arguments for d in deltas for tc in d.message.tool_calls or () if tc.function.arguments]
    assert fragments[0].startswith("{") and "".join(fragments).replace(" ", "") == '{"a":1}'


def test_held_space_goes_in_front_of_the_text_that_follows_or_is_dropped():
    from lmparse.serve.runner import HeldSpace

    held = HeldSpace()
    assert held.hold("\n") and held.hold(" \n") and not held.hold("text")
    assert held.before("text") == "\n \ntext"
    assert held.before("more") == "more"  # released once
    held.hold("\n\n")
    held.drop()  # another kind of item opened first
    assert held.before("x") == "x"
