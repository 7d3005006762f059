"""Per-token SSE encoding: the templates write the same JSON the general encoder writes for the
same delta, and the connection's writes of one turn of the loop leave as one."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from lmparse.messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from lmparse.serve import openai

MESSAGES = [
    DeltaMessage(content="plain"),
    DeltaMessage(content='quote " backslash \\ newline \n tab \t nul \x00 é 🙂'),
    DeltaMessage(content=""),
    DeltaMessage(reasoning_content="thinking </think> \u2028"),
    DeltaMessage(reasoning_content=""),
    DeltaMessage(tool_calls=[DeltaToolCall(3, function=DeltaFunctionCall(arguments='{"a": "\\"x\\""'))]),
    DeltaMessage(tool_calls=[DeltaToolCall(0, function=DeltaFunctionCall(arguments=None))]),
    DeltaMessage(tool_calls=[DeltaToolCall(0)]),
    DeltaMessage(),
    DeltaMessage(tool_calls=[]),
]
# Shapes the template leaves to the general encoder.
GENERAL = [
    DeltaMessage(content="a", reasoning_content="b"),
    DeltaMessage(content="a", tool_calls=[DeltaToolCall(0, function=DeltaFunctionCall(arguments="{"))]),
    DeltaMessage(tool_calls=[DeltaToolCall(0, "call_1", "function", DeltaFunctionCall("f", ""))]),
    DeltaMessage(tool_calls=[DeltaToolCall(0, function=DeltaFunctionCall(arguments="1")),
                             DeltaToolCall(1, function=DeltaFunctionCall(arguments="2"))]),
]


@pytest.mark.parametrize("field", sorted(openai.REASONING_FIELDS))
@pytest.mark.parametrize("message", MESSAGES, ids=repr)
def test_chat_completions_template_writes_the_bytes_of_the_general_encoder(message, field):
    fields = openai.REASONING_FIELDS[field]
    keys = tuple(orjson.dumps(f) + b":" for f in fields)
    general = openai._delta_dict(message, fields)
    written = openai._delta_json(message, keys)
    assert written == (orjson.dumps(general) if general else b"")


@pytest.mark.parametrize("message", GENERAL, ids=repr)
def test_chat_completions_template_leaves_other_shapes_to_the_general_encoder(message):
    assert openai._delta_json(message, (b'"reasoning_content":',)) is None


class _Recorded:
    """A transport that records what reaches it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 7


def test_events_written_in_one_turn_of_the_loop_leave_as_one_write_in_order():
    from lmparse.serve.connections import CoalescingTransport

    async def run() -> list[list[bytes]]:
        inner = _Recorded()
        transport = CoalescingTransport(inner, asyncio.get_running_loop())
        seen = []
        for event in (b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"):
            transport.write(event)
        seen.append(list(inner.writes))  # nothing yet: the loop has not turned
        await asyncio.sleep(0)
        seen.append(list(inner.writes))
        transport.write(b"data: 4\n\n")
        transport.close()  # flushes first
        seen.append(list(inner.writes))
        assert transport.get_write_buffer_size() == 7  # the rest is the wrapped transport's
        return seen

    before, after_turn, after_close = asyncio.run(run())
    assert before == []
    assert after_turn == [b"data: 1\n\ndata: 2\n\ndata: 3\n\n"]
    assert after_close == after_turn + [b"data: 4\n\n"]


def test_a_join_is_dropped_when_the_connection_closed_before_the_loop_turned():
    from lmparse.serve.connections import CoalescingTransport

    async def run() -> list[bytes]:
        inner = _Recorded()
        transport = CoalescingTransport(inner, asyncio.get_running_loop())
        transport.write(b"data: 1\n\n")
        inner.closed = True  # the peer went away
        await asyncio.sleep(0)
        return inner.writes

    assert asyncio.run(run()) == []
