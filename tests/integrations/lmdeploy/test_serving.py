"""lmparse's parsers through LMDeploy's own api_server, beside LMDeploy's own parser for the family.

Level driven: ``lmdeploy serve api_server M --tool-call-parser lmparse-<name> --reasoning-parser
lmparse-<name>`` through LMDeploy's CLI parser and command, then ``api_server.serve()`` (name
validation, ``set_parsers``, the FastAPI app with LMDeploy's routers and middleware), with a
stand-in engine (``engine.py``) and no uvicorn; then ``POST /v1/chat/completions``, stream and non-stream, through the ``openai``
SDK over httpx's ASGI transport. So LMDeploy's route handler, its ``ChatRunner`` (per-result
``stream_chunk`` calls, the ``final`` flag, the finish reason), its response models and its SSE
serialization all run. Each reply the SDK assembles is compared with lmparse's own
``parse_complete``; these rows are the LMDeploy rows of docs/plugins.md's table.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

import lmparse.integrations.lmdeploy  # noqa: F401  (registers the lmparse-<name> parsers)
from lmparse import create_parser

from .. import compat
from ..new_families import NOT_RUN
from ...support.wires import TOOLS
from .engine import Reply, chat, served_app, sse_events
from .replies import CALLS, NEW, QWEN3, Case, Delivery, cases, pieces

ENGINE = "LMDeploy 0.18.0"
CASES = cases()
PAIRS = [(i, j) for i, case in enumerate(CASES) for j in range(len(case.deliveries))]


def lmparse_reply(case: Case) -> Reply:
    family = case.family
    if family.response != "default":  # gpt-oss: one response parser, read from the token ids
        ids = [t for one in pieces(family, case.text)[1] for t in one]
        parser = create_parser(response_parser=family.response, request={"tools": TOOLS})
        return as_reply(parser.parse_complete(case.text, ids))
    request = {"tools": TOOLS, **family.extra}
    return as_reply(create_parser(family.tool, family.reasoning, request=request).parse_complete(case.text))


def as_reply(message: Any) -> Reply:
    calls = tuple((c.function.name, c.function.arguments) for c in message.tool_calls)
    return message.content or "", message.reasoning_content or "", calls


def names(case: Case, plugin: bool) -> tuple[str | None, str | None]:
    """(--tool-call-parser, --reasoning-parser) for the family, lmparse's or LMDeploy's."""
    family = case.family
    if family.response != "default":  # LMDeploy picks its gpt-oss parser by architecture
        return ("lmparse-" + family.response,) * 2 if plugin else (None, None)
    if plugin:
        return "lmparse-" + family.tool, "lmparse-" + family.reasoning if family.reasoning else None
    return family.lmdeploy_tool, family.lmdeploy_reasoning


@functools.cache
def served(case_index: int, delivery_index: int, plugin: bool) -> tuple[Reply, str | None]:
    """One reply through a freshly served app (LMDeploy configures its parser classes per
    process, so each server is built right before its request)."""
    case = CASES[case_index]
    delivery: Delivery = case.deliveries[delivery_index]
    app, engine = served_app(*names(case, plugin), arch=case.family.arch)
    return chat(app, engine, case.family.request(), case.steps(delivery), stream=delivery.stream,
                finish=case.finish)


def cell(case_index: int, delivery_index: int, plugin: bool) -> str:
    family = CASES[case_index].family
    if not plugin and family.new is not None and family.new.lmdeploy is None:
        return NOT_RUN  # LMDeploy has no parser for the family
    try:
        got, _ = served(case_index, delivery_index, plugin)
    except Exception as exc:  # LMDeploy's own parser may raise: that is a table entry
        return compat.failure(exc)
    return compat.verdict(got, lmparse_reply(CASES[case_index]))


def rows() -> list[compat.Row]:
    return [compat.Row(CASES[i].reply, ENGINE, CASES[i].deliveries[j].label, cell(i, j, True),
                       CASES[i].family.own, cell(i, j, False)) for i, j in PAIRS]


def pair_id(pair: tuple[int, int]) -> str:
    case = CASES[pair[0]]
    return f"{case.reply}-{case.deliveries[pair[1]].label}".replace(" ", "_")


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_the_plugin_through_lmdeploys_http_route_equals_lmparse_itself(pair):
    case = CASES[pair[0]]
    expected = lmparse_reply(case)
    got, finish = served(*pair, True)
    assert compat.verdict(got, expected) == "same", (got, expected)
    if case.finish == "length":
        assert finish == "length"
    else:
        assert finish == ("tool_calls" if expected[2] else "stop")


def test_the_compatibility_rows_on_the_page_are_what_lmdeploy_gives():
    table = rows()
    assert 30 + 2 * len(NEW) <= len(table) <= 45 + 2 * len(NEW)
    assert any(row.reply.startswith("gpt-oss") for row in table)
    assert all(row.plugin == "same" for row in table)
    compat.check_or_update(ENGINE, table)


def test_every_clean_reply_has_reasoning_text_and_two_calls():
    for case in CASES[:5]:
        content, reasoning, calls = lmparse_reply(case)
        assert content and reasoning and len(calls) == 2, case.reply


def test_a_hard_delivery_puts_its_whole_span_into_one_engine_step():
    hard = [(case, d) for case in CASES for d in case.deliveries if "one delta" in d.label]
    assert len(hard) == 9
    for case, delivery in hard:
        texts = [text for text, _ in case.steps(delivery)]
        wire = case.family.wire
        together = {"text": ("weather.", wire.open), "both": (wire.open + wire.calls(*CALLS)[len(wire.open):], ""),
                    "`</think>`": (wire.think_close + wire.open, "")}[delivery.label.split()[1]]
        assert any(all(part in text for part in together) for text in texts), (case.reply, texts)


def test_lmparse_requests_keep_special_tokens_and_lmdeploys_own_do_not():
    case = CASES[0]
    for plugin, keeps in ((True, True), (False, False)):
        app, engine = served_app(*names(case, plugin))
        chat(app, engine, case.family.request(), case.steps(case.deliveries[0]), stream=False)
        assert engine.gen_configs[-1].skip_special_tokens is not keeps


def test_each_streamed_call_opens_with_its_id_and_name_as_lmdeploys_contract_asks():
    case = CASES[0]
    app, engine = served_app(*names(case, True))
    events = sse_events(app, engine, QWEN3.request(), case.steps(case.deliveries[1]))
    assert events[-1] == "[DONE]" and events[0]["choices"][0]["delta"]["role"] == "assistant"
    calls = [c for e in events[:-1] for c in e["choices"][0]["delta"].get("tool_calls", [])]
    for index, name in ((0, "get_weather"), (1, "f")):
        deltas = [c for c in calls if c["index"] == index]
        assert deltas[0]["id"] and deltas[0]["type"] == "function" and deltas[0]["function"]["name"] == name
        assert not any(c.get("id") for c in deltas[1:])
    ids = {c["id"] for c in calls if c.get("id")}
    assert len(ids) == 2


def test_malformed_output_never_raises_out_of_the_plugin():
    text = "<think>x</think>ok <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
    steps = [(text[i:i + 5], [i]) for i in range(0, len(text), 5)]
    for stream in (True, False):
        app, engine = served_app("lmparse-qwen3", "lmparse-qwen3")
        (content, _, _), finish = chat(app, engine, QWEN3.request(), steps, stream=stream)
        assert content.startswith("ok") and finish


if __name__ == "__main__":
    for row in rows():
        print(row.markdown())
