"""The content event vocabulary: what the layers decide, and the one edge that makes deltas of it.

Three parts: ``deltas_of`` (the edge: which neighbours it joins, what makes no delta), the
``CallEmitter``'s events for a call's life, and, over every wire of the contract matrix, the
events a whole parser produces per chunk -- dense call indices, a start before any
argument, every started call ended, a drop record as an event and on ``dropped`` alike.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from lmparse.events import CONTENT, REASONING, CallArgs, CallEnd, CallStart, DroppedCall, Events, Text
from lmparse.messages import Deltas, deltas_of
from lmparse.response import base as router_module
from lmparse.tools.calls import CallEmitter

from .support.stream import random_chunks
from .support.wires import ALL_WIRES, Wire


def shape(deltas: Deltas) -> list[dict[str, Any]]:
    return [{**d.to_dict(), "tools": tools} for d, tools in deltas]


# ---- the edge: deltas_of ------------------------------------------------------------------------


def test_neighbouring_texts_of_one_channel_are_one_delta() -> None:
    events: Events = [Text(CONTENT, "a"), Text(CONTENT, "b"), Text(REASONING, "c"), Text(REASONING, "d"),
                      Text(CONTENT, "e")]
    assert shape(deltas_of(events)) == [
        {"content": "ab", "tools": False}, {"reasoning_content": "cd", "tools": False},
        {"content": "e", "tools": False},
    ]


def test_a_call_start_takes_the_argument_text_right_after_it() -> None:
    events: Events = [CallStart(0, "call_1", "f"), CallArgs(0, '{"a"'), CallArgs(0, ": 1}"), CallEnd(0)]
    assert shape(deltas_of(events)) == [{
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        "tools": True,
    }]


def test_argument_text_of_two_calls_or_after_text_is_not_joined() -> None:
    events: Events = [CallArgs(0, "1}"), CallEnd(0), CallStart(1, "call_2", "g"), CallEnd(1), CallArgs(1, "x"),
                      Text(CONTENT, "t"), CallArgs(1, "y")]
    deltas = shape(deltas_of(events))
    assert [d["tool_calls"][0]["index"] if "tool_calls" in d else d["content"] for d in deltas] == [0, 1, "t", 1]
    assert deltas[1]["tool_calls"][0]["function"] == {"name": "g", "arguments": "x"}
    assert deltas[3]["tool_calls"][0] == {"index": 1, "function": {"arguments": "y"}}


def test_call_ends_and_drop_records_make_no_delta() -> None:
    record = DroppedCall("zzz", "not among the request's tools")
    assert deltas_of([CallEnd(0), record]) == []
    # ... and do not part the texts around them
    assert shape(deltas_of([Text(CONTENT, "a"), record, Text(CONTENT, "b")])) == [{"content": "ab", "tools": False}]


def test_events_are_values() -> None:
    assert Text(CONTENT, "a") == Text(CONTENT, "a") != Text(REASONING, "a")
    assert CallStart(0, "i", "f") == CallStart(0, "i", "f") != CallStart(1, "i", "f")
    assert CallArgs(0, "{}") != CallEnd(0)
    assert repr(CallArgs(2, "{")) == "CallArgs(2, '{')"


# ---- a call's life through the emitter ----------------------------------------------------------


def emitter(allowed: frozenset[str] | None = None, max_calls: int | None = None) -> CallEmitter:
    ids = iter(f"call_{i}" for i in range(100))
    return CallEmitter(allowed, lambda: next(ids), max_calls)


def test_arguments_before_the_name_follow_its_start() -> None:
    calls, out = emitter(), []
    calls.begin()
    calls.arguments(out, '{"a": ')
    calls.arguments(out, "1}")
    assert out == []
    calls.name(out, "f")
    calls.end(out)
    assert out == [CallStart(0, "call_0", "f"), CallArgs(0, '{"a": 1}'), CallEnd(0)]


def test_a_call_with_no_arguments_gets_an_empty_object_before_its_end() -> None:
    calls, out = emitter(), []
    calls.begin()
    calls.name(out, "f")
    calls.end(out)
    assert out == [CallStart(0, "call_0", "f"), CallArgs(0, "{}"), CallEnd(0)]


def test_a_dropped_call_is_one_record_and_takes_no_index() -> None:
    calls, out = emitter(frozenset({"g"})), []
    for name in ("zzz", "g"):
        calls.begin()
        calls.name(out, name)
        calls.arguments(out, "{}")
        calls.end(out)
    (record,) = calls.dropped
    assert (record.name, record.reason) == ("zzz", "not among the request's tools")
    assert out == [record, CallStart(0, "call_0", "g"), CallArgs(0, "{}"), CallEnd(0)]


def test_a_call_past_max_calls_is_dropped() -> None:
    calls, out = emitter(max_calls=1), []
    for name in ("f", "g"):
        calls.begin()
        calls.name(out, name)
        calls.end(out)
    assert [type(e).__name__ for e in out] == ["CallStart", "CallArgs", "CallEnd", "DroppedCall"]
    assert calls.dropped == [out[-1]]


# ---- every wire: the events a parser produces -------------------------------------------------


class Recorded:
    """The events each chunk reached the edge with (the fast lanes' chunks, text or a block's
    argument text, make their one delta without events)."""

    def __init__(self) -> None:
        self.chunks: list[Events] = []

    def __call__(self, events: Events) -> Deltas:
        self.chunks.append(list(events))
        return deltas_of(events)


def check_call_events(events: Events, dropped: list[DroppedCall]) -> list[tuple[str, str]]:
    """The events' call contract; returns the calls they spell, in order."""
    open_: int | None = None
    calls: list[list[str]] = []
    records: list[DroppedCall] = []
    for event in events:
        if isinstance(event, CallStart):
            assert open_ is None, f"call {event.index} started inside call {open_}"
            assert event.index == len(calls), "indices are dense from 0"
            assert event.id and event.name
            open_ = event.index
            calls.append([event.name, ""])
        elif isinstance(event, CallArgs):
            assert event.index == open_, "argument text belongs to the open call"
            calls[event.index][1] += event.text
        elif isinstance(event, CallEnd):
            assert event.index == open_, "only the open call ends"
            open_ = None
        elif isinstance(event, DroppedCall):
            records.append(event)
        else:
            assert isinstance(event, Text) and event.text, f"an empty or unknown event: {event!r}"
    assert open_ is None, "every call that started ended by the end of the reply"
    assert [id(r) for r in records] == [id(r) for r in dropped], "every drop record is an event, once"
    for name, args in calls:
        assert isinstance(json.loads(args), dict), f"{name}'s arguments are a JSON object"
    return [(name, args) for name, args in calls]


def reply(w: Wire) -> str:
    a = '{"city": "Paris", "days": 3}'
    return w.plain + "Hi. " + w.calls(("zzz", "{}"), ("get_weather", a), ("f", "{}"))


@pytest.mark.pure_only("it patches the router module's deltas_of and the block's lane")
@pytest.mark.parametrize("wire", ALL_WIRES, ids=[w.id for w in ALL_WIRES])
def test_a_parser_s_events_keep_the_call_contract(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    text = reply(wire)
    rng = random.Random(20261203)
    spelled = None
    for chunks in ([text], list(text), random_chunks(text, rng)):
        recorded = Recorded()
        monkeypatch.setattr(router_module, "deltas_of", recorded)
        parser = wire.parser(wire.request())
        parser._block.parser.take_run = lambda text: None  # type: ignore[attr-defined]  # (the block's lane
        # makes its deltas itself; closed, every argument goes through the events)
        for chunk in chunks:
            parser.stream_chunk(chunk)
        parser.stream_chunk("", final=True)
        events = [e for chunk in recorded.chunks for e in chunk]
        calls = check_call_events(events, parser.dropped)
        assert [name for name, _ in calls] == ["get_weather", "f"]
        assert [d.name for d in parser.dropped] == ["zzz"]
        assert spelled is None or calls == spelled, "every chunking spells the same calls"
        spelled = calls


@pytest.mark.pure_only("it patches the Harmony module's deltas_of")
def test_harmony_s_router_speaks_the_same_events(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmparse import create_parser
    from lmparse.response import harmony

    text = ("<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant<|channel|>commentary"
            ' to=functions.zzz <|constrain|>json<|message|>{}<|call|><|start|>assistant<|channel|>commentary'
            ' to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>')
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    for chunks in ([text], list(text)):
        recorded = Recorded()
        monkeypatch.setattr(harmony, "deltas_of", recorded)
        parser = create_parser(response_parser="gpt-oss", request={"tools": tools})
        for chunk in chunks:
            parser.stream_chunk(chunk)
        parser.stream_chunk("", final=True)
        events = [e for chunk in recorded.chunks for e in chunk]
        assert check_call_events(events, parser.dropped) == [("f", '{"a": 1}')]
        assert "".join(e.text for e in events if isinstance(e, Text) and e.channel is REASONING) == "Need it."
