"""The per-token SSE templates write the same JSON the general encoder writes for the same delta."""

from __future__ import annotations

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
