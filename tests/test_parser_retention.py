"""A parser keeps nothing of what it has emitted: once a chunk's deltas are returned, the
argument text they carry is the caller's alone (a server drops each delta once it is sent).

Before, the call tracker kept its last delta for merging the next fragment into it, so a
parser fed a 1 MB argument in one chunk held that megabyte for as long as it lived."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from lmparse import create_parser

SIZE = 400_000
VALUE = ("line with a \"quote\", a tab\t and <b>markup</b>\n" * (SIZE // 48))[:SIZE]
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"content": {"type": "string"}}}}}]

REPLIES = {
    "qwen": "<tool_call>\n" + json.dumps({"name": "write_file", "arguments": {"content": VALUE}}) + "\n</tool_call>",
    "qwen3coder": "<tool_call>\n<function=write_file>\n<parameter=content>\n" + VALUE
    + "\n</parameter>\n</function>\n</tool_call>",
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>"
    + json.dumps({"content": VALUE}) + "<|tool_call_end|><|tool_calls_section_end|>",
}


@pytest.mark.parametrize("chunk", [None, 4096], ids=["whole", "4096"])
@pytest.mark.parametrize("name", sorted(REPLIES))
def test_nothing_emitted_stays_in_the_parser(name: str, chunk: int | None) -> None:
    reply = REPLIES[name]
    step = chunk or len(reply)
    chunks = [reply[i:i + step] for i in range(0, len(reply), step)]
    parser = create_parser(tool_parser=name, request={"tools": TOOLS})
    arguments = []
    gc.collect()
    tracemalloc.start()
    try:
        for i, piece in enumerate(chunks):
            for delta, _ in parser.stream_chunk(piece, final=i == len(chunks) - 1):
                for call in delta.tool_calls or ():
                    if call.function is not None and call.function.arguments:
                        arguments.append(call.function.arguments)
        assert json.loads("".join(arguments)) == {"content": VALUE}  # the call came out whole
        del arguments, delta, call
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < SIZE // 10, f"{name} holds {held} bytes after the reply"
