"""lmparse's parsers through LMDeploy's serving layer, beside LMDeploy's own parser for the family.

Level driven: ``api_server.set_parsers`` (the server's own parser configuration, with a
stand-in context) and LMDeploy's ``ChatRunner.stream()`` / ``.collect()`` (its streaming
and non-streaming paths: per-result ``stream_chunk`` calls, the ``final`` flag, the empty
deltas it fills in and the finish reason, and ``parse_complete``), fed engine results cut
from real-tokenizer token streams one and three tokens at a time. Kimi-K2's vocabulary is
not public: its markers are single pseudo-tokens, its text pieces of 1-4 characters.
Everything a stream emits is folded and must equal lmparse's own ``parse_complete``;
LMDeploy's in-tree parser gets the same stream and its difference goes into the table
(``python -m tests.integrations.lmdeploy.test_serving`` prints it).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from lmdeploy.serve.core.chat_runner import ChatRunner
from lmdeploy.serve.openai import api_server
from lmdeploy.serve.openai.protocol import ChatCompletionRequest

import lmparse.integrations.lmdeploy  # noqa: F401  (registers the lmparse-<name> parsers)
from lmparse import create_parser

from ...support.tokenizers import load_tokenizer, roundtrips, token_chunks
from ...support.wires import GLM47, KIMI, QWEN, QWEN3CODER, TOOLS, V32, Wire, pseudo_tokens
from .engine import Sessions, engine_results, stand_in_context

Reply = tuple[str | None, str | None, list[tuple[str, Any]]]  # content, reasoning, calls (name, arguments)


@dataclass(frozen=True)
class Family:
    name: str
    wire: Wire
    tool: str  # lmparse's tool parser
    reasoning: str | None  # lmparse's reasoning parser
    lmdeploy_tool: str  # LMDeploy's own names for the family
    lmdeploy_reasoning: str | None
    tokenizer: str | None  # None: pseudo-tokens
    lead: str = " "  # between the content and the first call block


FAMILIES = [
    Family("qwen3", QWEN, "qwen3", "qwen3", "qwen3", "default", "qwen3"),
    Family("qwen3coder", QWEN3CODER, "qwen3coder", "default", "qwen3coder", "default", "qwen3"),
    Family("glm47", GLM47, "glm47", "glm45", "glm47", "default", "glm-4.7-flash"),
    # DeepSeek-V3.2 puts a blank line before its block; LMDeploy's parser only sees a block after one.
    Family("deepseek-v32", V32, "deepseek-v32", "deepseek-v32", "deepseek-v32", "deepseek-v32", "deepseek-v3.2",
           lead="\n\n"),
    Family("deepseek-v32 (block right after text)", V32, "deepseek-v32", "deepseek-v32", "deepseek-v32",
           "deepseek-v32", "deepseek-v3.2"),
    Family("kimi-k2", KIMI, "kimi-k2", "kimi-k2", "kimi-k2", "default", None),
]
CALLS = [("get_weather", '{"city": "Paris", "days": 2}'), ("f", '{"q": "a b"}')]
GROUPS = (1, 3)  # tokens per engine result


def reply_text(family: Family) -> str:
    """Reasoning, content, then two calls: the boundaries the engines' parsers get wrong."""
    wire = family.wire
    return f"{wire.think_open}Which city?{wire.think_close}Checking the weather.{family.lead}" + wire.calls(*CALLS)


def steps(family: Family, text: str, group: int) -> list[tuple[str, list[int]]]:
    """The text as an engine streams it, ``group`` tokens per result."""
    if family.tokenizer is None:
        pieces = pseudo_tokens(text, family.wire.pseudo_token_markers)
        ids = [[i] for i in range(len(pieces))]
    else:
        tok = load_tokenizer(family.tokenizer)
        if not roundtrips(tok, text):
            pytest.skip(f"{family.tokenizer} does not reproduce the reply text")
        pieces, ids = token_chunks(tok, text), [[i] for i in tok.encode(text)]
    return [("".join(pieces[i:i + group]), [t for one in ids[i:i + group] for t in one])
            for i in range(0, len(pieces), group)]


def chat_request(family: Family) -> ChatCompletionRequest:
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS,
                                 **family.wire.request_extra)


def runner(family: Family, plugin: bool, text_steps: list[tuple[str, list[int]]]) -> ChatRunner:
    """LMDeploy's ChatRunner for one request, its parser configured the way api_server does."""
    context = stand_in_context()
    if plugin:
        api_server.set_parsers(context, "lmparse-" + family.reasoning if family.reasoning else None,
                               "lmparse-" + family.tool)
    else:
        api_server.set_parsers(context, family.lmdeploy_reasoning, family.lmdeploy_tool)
    parser = context.response_parser_cls(chat_request(family))
    return ChatRunner(request=parser.request, response_parser=parser, gen_config=None, session=object(),
                      result_generator=engine_results(text_steps), session_manager=Sessions())


def streamed(family: Family, plugin: bool, text_steps: list[tuple[str, list[int]]]) -> tuple[Reply, list[str]]:
    """The folded stream and its finish reasons."""
    async def go() -> list[Any]:
        return [chunk async for chunk in runner(family, plugin, text_steps).stream()]

    chunks = asyncio.run(go())
    content, reasoning, calls = [], [], {}
    for chunk in chunks:
        delta = chunk.delta_message
        content.append(delta.content or "")
        reasoning.append(delta.reasoning_content or "")
        for call in delta.tool_calls or []:
            name, args = calls.setdefault(call.index, ["", ""])
            function = call.function
            calls[call.index] = [name + (function.name or "" if function else ""),
                                 args + (function.arguments or "" if function else "")]
    folded = ("".join(content) or None, "".join(reasoning) or None,
              [(name, arguments(args)) for _, (name, args) in sorted(calls.items())])
    return folded, [c.finish_reason for c in chunks if c.finish_reason]


def collected(family: Family, plugin: bool, text_steps: list[tuple[str, list[int]]]) -> Reply:
    result = asyncio.run(runner(family, plugin, text_steps).collect())
    calls = [(c.function.name, arguments(c.function.arguments)) for c in result.tool_calls or []]
    return result.text or None, result.reasoning_content, calls


def arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: compared as written


def lmparse_reply(family: Family, text: str) -> Reply:
    request = {"tools": TOOLS, **family.wire.request_extra}
    message = create_parser(family.tool, family.reasoning, request=request).parse_complete(text)
    calls = [(c.function.name, arguments(c.function.arguments)) for c in message.tool_calls]
    return message.content, message.reasoning_content, calls


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: f"{g}-token")
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_plugin_streamed_through_lmdeploy_equals_lmparse_itself(family, group):
    text = reply_text(family)
    expected = lmparse_reply(family, text)
    assert len(expected[2]) == 2 and expected[0] and expected[1]  # the reply really has every part
    folded, finish = streamed(family, True, steps(family, text, group))
    assert folded == expected
    assert finish == ["tool_calls"]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_plugin_collected_by_lmdeploy_equals_lmparse_itself(family):
    text = reply_text(family)
    assert collected(family, True, steps(family, text, 3)) == lmparse_reply(family, text)


def test_malformed_output_never_raises_out_of_the_plugin():
    family = FAMILIES[0]
    text = "<think>x</think>ok <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
    folded, finish = streamed(family, True, [(text[i:i + 5], [i]) for i in range(0, len(text), 5)])
    assert folded[0].startswith("ok") and finish


def compare(family: Family, plugin: bool) -> dict[str, str]:
    """One table row's cells: ``same`` or what differs, per delivery."""
    text = reply_text(family)
    expected = lmparse_reply(family, text)
    cells = {}
    for label, get in [("stream 1-token", lambda: streamed(family, plugin, steps(family, text, 1))[0]),
                       ("stream 3-token", lambda: streamed(family, plugin, steps(family, text, 3))[0]),
                       ("non-stream", lambda: collected(family, plugin, steps(family, text, 3)))]:
        try:
            got = get()
        except Exception as exc:  # LMDeploy's own parser may fail: that is a table entry
            cells[label] = f"error: {type(exc).__name__}"
            continue
        cells[label] = "same" if got == expected else difference(got, expected)
    return cells


def difference(got: Reply, expected: Reply) -> str:
    parts = [f"{field} differs" for field, a, b in zip(("content", "reasoning", "calls"), got, expected, strict=True) if a != b]
    if got[2] != expected[2]:
        parts[-1] = f"calls: {len(got[2])} of {len(expected[2])}" if len(got[2]) != len(expected[2]) else parts[-1]
    return "; ".join(parts)


def test_lmdeploys_own_parser_beside_the_plugin():
    """Not an assertion about LMDeploy: the table must be computable for every family."""
    for family in FAMILIES:
        row = compare(family, False)
        assert set(row) == {"stream 1-token", "stream 3-token", "non-stream"}


def table() -> str:
    lines = ["| family | parser | stream, 1 token/result | stream, 3 tokens/result | non-stream |",
             "|---|---|---|---|---|"]
    for family in FAMILIES:
        for plugin, label in ((True, f"lmparse-{family.tool}"), (False, f"LMDeploy `{family.lmdeploy_tool}`")):
            cells = compare(family, plugin)
            lines.append(f"| {family.name} | {label} | {cells['stream 1-token']} | {cells['stream 3-token']} "
                         f"| {cells['non-stream']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
