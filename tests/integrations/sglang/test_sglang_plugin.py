"""lmparse inside SGLang 0.5.23: registered through its own plugin loader, accepted by its own
argument parser, and driven through its own FunctionCallParser / ReasoningParser as serving_chat
drives them, giving exactly lmparse's own parse for the five families, stream and non-stream."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import entry_points

import pytest
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins
from sglang.srt.server_args import ServerArgs, prepare_server_args

from lmparse import ReasoningParserManager, ToolParserManager, create_parser
from lmparse.constrain import structural_tag_for

from . import _serving
from .families import FAMILIES, MODES, WEATHER, Family

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


def _through_sglang(family: Family, mode: str, tool: str, reasoning: str) -> _serving.Reply:
    if mode == "non-stream":
        return _serving.complete(tool, reasoning, WEATHER, family.force_reasoning(), family.text())
    return _serving.stream(tool, reasoning, WEATHER, family.force_reasoning(), family.deltas(mode))


@pytest.mark.parametrize("mode", [*MODES, "non-stream"])
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.wire)
def test_sglangs_serving_path_gives_lmparses_own_parse(family: Family, mode: str) -> None:
    expected = family.lmparse_reply()
    assert [name for name, _ in expected[2]] == ["get_weather", "get_weather"]
    assert [json.loads(args) for _, args in expected[2]] == [json.loads(a) for a in (PARIS_TOKYO)]
    got = _through_sglang(family, mode, f"lmparse-{family.tool}", f"lmparse-{family.reasoning}")
    assert got == expected


PARIS_TOKYO = ('{"city": "Paris", "days": 2}', '{"city": "Tokyo", "days": 1}')


def in_tree_verdict(family: Family, mode: str) -> str:
    """SGLang's own parsers for the family against lmparse's parse: "same", or what differs."""
    content, reasoning, calls = family.lmparse_reply()
    try:
        got = _through_sglang(family, mode, family.sglang_tool, family.sglang_reasoning)
    except Exception as exc:  # an in-tree parser failing is a finding for the table, not a test error
        return f"raises {type(exc).__name__}"
    differs = []
    if got[1].strip() != reasoning.strip():
        differs.append("reasoning")
    if got[0].strip() != content.strip():
        differs.append("content")
    try:
        same_calls = [(n, json.loads(a)) for n, a in got[2]] == [(n, json.loads(a)) for n, a in calls]
    except ValueError:
        same_calls = False
    if not same_calls:
        differs.append(f"calls ({len(got[2])} of {len(calls)})" if len(got[2]) != len(calls) else "call arguments")
    return "same" if not differs else "differs: " + ", ".join(differs)


def compatibility_table() -> str:
    """The docs table: family x mode, lmparse through SGLang vs SGLang's in-tree parser."""
    rows = ["| family | increments | `lmparse-<name>` in SGLang | SGLang's in-tree parser |", "|---|---|---|---|"]
    for family in FAMILIES:
        for mode in (*MODES, "non-stream"):
            mine = _through_sglang(family, mode, f"lmparse-{family.tool}", f"lmparse-{family.reasoning}")
            ours = "same as `parse_complete`" if mine == family.lmparse_reply() else "DIFFERS"
            theirs = in_tree_verdict(family, mode)
            rows.append(f"| {family.wire} (`{family.sglang_tool}` / `{family.sglang_reasoning}`) | {mode} | {ours} | {theirs} |")
    return "\n".join(rows)


def test_the_in_tree_comparison_runs_for_every_family() -> None:
    table = compatibility_table()
    assert "DIFFERS" not in table
    assert table.count("\n") == 1 + len(FAMILIES) * (len(MODES) + 1)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.wire)
def test_a_required_call_is_constrained_by_lmparses_structural_tag(family: Family) -> None:
    parser = FunctionCallParser(_serving.sglang_tools(WEATHER), f"lmparse-{family.tool}")
    kind, tag = parser.get_structure_constraint("required", parallel_tool_calls=False)
    assert kind == "structural_tag"
    assert tag.model_dump(by_alias=True) == structural_tag_for(family.tool, WEATHER, "required", False)
    assert parser.get_structure_constraint("auto") is None  # auto stays unconstrained


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.wire)
def test_a_reply_cut_inside_a_call_streams_like_lmparses_parse(family: Family) -> None:
    text = family.text()
    cut = text[: text.index("Tokyo")]  # the second call's arguments end mid-string
    tool, reasoning = f"lmparse-{family.tool}", f"lmparse-{family.reasoning}"
    streamed = _serving.stream(tool, reasoning, WEATHER, family.force_reasoning(), list(cut))
    message = create_parser(family.tool, family.reasoning, request=family.request()).parse_complete(cut)
    assert streamed == (message.content or "", message.reasoning_content or "",
                        tuple((c.function.name, c.function.arguments) for c in message.tool_calls))


if __name__ == "__main__":  # `python -m tests.integrations.sglang.test_sglang_plugin` prints the table
    print(compatibility_table())
