"""lmparse inside SGLang 0.5.23: registered through its own plugin loader, accepted by its own
argument parser, and driven through its own ``OpenAIServingChat.handle_request`` (only the
scheduler round trip stood in), giving exactly lmparse's own parse, stream and non-stream; the
same replies through SGLang's in-tree parsers make this engine's rows of docs/plugins.md."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

import pytest
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins
from sglang.srt.server_args import ServerArgs, prepare_server_args

from lmparse import ReasoningParserManager, ToolParserManager
from lmparse.constrain import structural_tag_for

from .. import compat
from ..new_families import NOT_RUN, own_cell
from . import _serving
from .families import FAMILIES, MODES, MULTI, NEW, PARIS, TOKYO, WEATHER, Family, merged

load_plugins()  # what `python -m sglang.launch_server` runs before it parses its arguments


def test_the_entry_point_is_lmparse_in_sglangs_plugin_group() -> None:
    (point,) = [ep for ep in entry_points(group="sglang.srt.plugins") if ep.name == "lmparse"]
    assert point.value == "lmparse.integrations.sglang:register"


def test_load_plugins_registers_every_lmparse_parser_under_its_prefixed_name() -> None:
    for name in ToolParserManager.names():
        assert FunctionCallParser.ToolCallParserEnum[f"lmparse-{name}"].lmparse_name == name
    for name in ReasoningParserManager.names():
        assert ReasoningParser.DetectorMap[f"lmparse-{name}"].lmparse_name == name
    assert FunctionCallParser.ToolCallParserEnum["qwen"].__module__.startswith("sglang.")  # in-tree ones kept


def test_registering_again_changes_nothing() -> None:
    from lmparse.integrations import sglang as plugin

    tools, reasoners = dict(FunctionCallParser.ToolCallParserEnum), dict(ReasoningParser.DetectorMap)
    plugin.register()
    assert FunctionCallParser.ToolCallParserEnum == tools and ReasoningParser.DetectorMap == reasoners


def _choices(flag: str) -> list[str]:
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    (action,) = [a for a in parser._actions if flag in a.option_strings]
    return list(action.choices)


def test_the_launchers_argument_parser_offers_the_lmparse_names() -> None:
    tool_choices, reasoning_choices = _choices("--tool-call-parser"), _choices("--reasoning-parser")
    for family in FAMILIES:
        assert f"lmparse-{family.tool}" in tool_choices
        assert f"lmparse-{family.reasoning}" in reasoning_choices


def test_prepare_server_args_accepts_an_lmparse_tool_and_reasoning_parser() -> None:
    args = prepare_server_args(["--model-path", "unused", "--tool-call-parser", "lmparse-qwen3coder",
                                "--reasoning-parser", "lmparse-qwen3"])
    assert (args.tool_call_parser, args.reasoning_parser) == ("lmparse-qwen3coder", "lmparse-qwen3")


ENGINE = "SGLang 0.5.23"


_SERVERS: dict[tuple[str, bool], _serving.Server] = {}


def _server(family: Family, plugin: bool) -> _serving.Server:
    if (family.wire, plugin) in _SERVERS:
        return _SERVERS[family.wire, plugin]
    if plugin:
        tool, reasoning = f"lmparse-{family.tool}", family.reasoning and f"lmparse-{family.reasoning}"
    else:
        assert family.own is not None
        tool, reasoning = family.own
    server = _SERVERS[family.wire, plugin] = _serving.Server(tool, reasoning, family.server_tokenizer, family.template)
    return server


def _through_sglang(family: Family, plugin: bool, deltas: list[str], stream: bool = True,
                    finish: dict[str, Any] = _serving.STOP) -> _serving.Reply:
    body = {"tools": WEATHER, "chat_template_kwargs": family.chat_template_kwargs or None, "stream": stream}
    return _serving.Server.run(_server(family, plugin), body, deltas, finish=finish)


@pytest.mark.parametrize("mode", [*MODES, "non-stream"])
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.wire)
def test_handle_request_with_the_plugin_gives_lmparses_own_parse(family: Family, mode: str) -> None:
    expected = family.lmparse_reply()
    assert [name for name, _ in expected[2]] == ["get_weather", "get_weather"]
    assert [json.loads(args) for _, args in expected[2]] == [json.loads(a) for a in (PARIS, TOKYO)]
    deltas = family.deltas("whole" if mode == "non-stream" else mode)
    assert _through_sglang(family, True, deltas, stream=mode != "non-stream") == expected


@dataclass(frozen=True)
class Case:
    """One table row's reply and delivery for a family."""

    reply: str
    delivery: str
    text: str
    deltas: list[str]
    stream: bool = True
    finish: dict[str, Any] = field(default_factory=lambda: _serving.STOP)


def _new_cases(family: Family) -> list[Case]:
    """A late-2026 family's clean reply, non-stream and in single (Qwen3 stand-in) tokens."""
    clean = family.text()
    label = f"{family.wire}: {'reasoning, ' if family.reasoning else ''}text, two calls"
    return [Case(label, "non-stream", clean, [clean], stream=False),
            Case(label, "stream, 1 token", clean, family.one_token_deltas())]


def _cases(family: Family) -> list[Case]:
    if family.new is not None:
        return _new_cases(family)
    clean, name = family.text(), family.wire
    calls_at = clean.index(family.calls_text())
    one = family.one_token_deltas()
    cases = [Case(f"{name}: reasoning, text, two calls", "non-stream", clean, [clean], stream=False),
             Case(f"{name}: reasoning, text, two calls", "stream, 1 token", clean, one),
             Case(f"{name}: reasoning, text, two calls", f"stream, {MULTI} tokens", clean, family.deltas("multi-token")),
             Case(f"{name}: text and the call opener in one increment", "stream, 1 token; those merged", clean,
                  merged(one, clean.index("Checking"), calls_at + 1)),
             Case(f"{name}: two whole calls in one increment (SGLang #37634)", "stream, 1 token; the calls merged",
                  clean, merged(one, calls_at, len(clean)))]
    bare = family.text(between="")
    cases.append(Case(f"{name}: a call right after `</think>`, no text between (vLLM #39056, #42400)",
                      "stream, 1 token; `</think>` + opener merged", bare,
                      merged(family.one_token_deltas(bare), bare.index("</think>"), bare.index("</think>") + 9)))
    if family.wire == "deepseek-v32":
        cases += [Case(f"{name}: DSML under multi-token deltas (vLLM #40800, #54686)", f"stream, {size} tokens",
                       clean, family.deltas("multi-token", size)) for size in (2, 8, 16)]
    cut = clean[: clean.index("Tokyo")]
    cut_chunks = family.one_token_deltas(cut)
    cases.append(Case(f"{name}: cut off inside the second call's arguments (max_tokens)",
                      "stream, 1 token; finish `length`", cut, cut_chunks,
                      finish=_serving.length_finish(len(cut_chunks))))
    return cases


def _cell(family: Family, plugin: bool, case: Case) -> str:
    if not plugin and family.own is None:
        return NOT_RUN  # SGLang has no parser for the family
    want = family.lmparse_reply(case.text)
    try:
        got = _through_sglang(family, plugin, case.deltas, case.stream, case.finish)
    except Exception as exc:  # an in-tree parser failing is a finding for the table, not a test error
        if plugin:
            raise
        return compat.failure(exc)
    return compat.verdict(got, want)


@cache
def compatibility_rows() -> tuple[compat.Row, ...]:
    rows = []
    for family in [*FAMILIES, *NEW]:
        own = own_cell(family.own, " / ")
        for case in _cases(family):
            assert "".join(case.deltas) == case.text
            rows.append(compat.Row(case.reply, ENGINE, case.delivery, _cell(family, True, case), own,
                                   _cell(family, False, case)))
    return tuple(rows)


def test_every_plugin_cell_is_same() -> None:
    rows = compatibility_rows()
    assert 30 + 2 * len(NEW) <= len(rows) <= 45 + 2 * len(NEW)
    assert [row for row in rows if row.plugin != "same"] == []


def test_the_compatibility_rows_are_on_the_page() -> None:
    compat.check_or_update(ENGINE, compatibility_rows())


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.wire)
def test_a_required_call_is_constrained_by_lmparses_structural_tag(family: Family) -> None:
    parser = FunctionCallParser([Tool(**tool) for tool in WEATHER], f"lmparse-{family.tool}")
    kind, tag = parser.get_structure_constraint("required", parallel_tool_calls=False)
    assert kind == "structural_tag"
    assert tag.model_dump(by_alias=True) == structural_tag_for(family.tool, WEATHER, "required", False)
    assert parser.get_structure_constraint("auto") is None  # auto stays unconstrained
