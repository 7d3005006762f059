"""The ``response-template`` parser: transformers 5.24.0's fallback templates (written from
PROTOCOLS.md, tests/support/response_templates.py) give the hand-written dialects' results on
their DESIGN §7 case tables, and the executor quirks lmparse does not follow are pinned here."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import pytest

from lmparse import create_parser
from lmparse.response.template import ResponseTemplate

from .support.response_templates import GEMMA4, GEMMA_PROMPT, QWEN3, QWEN3_5, QWEN_NOT_THINKING, QWEN_THINKING
from .support.stream import Expected, check_parse, result_of
from .support.wires import GEMMA4 as GEMMA4_WIRE
from .support.wires import QWEN, QWEN3CODER, Wire
from . import test_contract as contract
from .test_contract import CASES, applies

A = '{"city": "Paris", "days": 3}'
TOOLS = QWEN.request()["tools"]


def thinking_off(request: Mapping[str, Any] | None) -> bool:
    kwargs = (request or {}).get("chat_template_kwargs") or {}
    return kwargs.get("enable_thinking") is False


def qwen_prompt(request: Mapping[str, Any] | None) -> str:
    return QWEN_NOT_THINKING if thinking_off(request) else QWEN_THINKING


# (hand-written wire, its reasoning parser, the fallback template, the prompt its chat template renders)
# The Qwen3.5 pair runs with the Qwen3.5 reasoning parser, which reads the same prompt.
PAIRS = {
    "qwen3": (QWEN, "qwen3", QWEN3, qwen_prompt),
    "qwen3_5": (replace(QWEN3CODER, reasoning_parser="qwen3.5"), "qwen3.5", QWEN3_5, qwen_prompt),
    "gemma4": (GEMMA4_WIRE, "gemma4", GEMMA4, lambda request: GEMMA_PROMPT),
}


def template_wire(wire: Wire, template: dict[str, Any], prompt: Any) -> Wire:
    """``wire``'s layout, parsed by the response-template parser given ``prompt(request)``.

    Quirk: a call inside a reasoning region does not end it (HF's region watches only its closer),
    where the gemma4 dialect ends the reasoning at ``<|tool_call>`` (vLLM)."""
    compiled = ResponseTemplate(template)

    def parser(self: Wire, request: Mapping[str, Any] | None) -> Any:
        return create_parser(response_template=compiled, request=request, prompt=prompt(request))

    cls = type(f"Template{type(wire).__name__}", (type(wire),), {"parser": parser})
    values = {f.name: getattr(wire, f.name) for f in fields(wire)}
    return cls(**{**values, "id": f"template-{wire.id}", "call_ends_reasoning": False})  # type: ignore[no-any-return]


def hand_written(wire: Wire, reasoning: str, prompt: Any, request: Mapping[str, Any] | None) -> Any:
    return create_parser(tool_parser=wire.tool_parser, reasoning_parser=reasoning, request=request,
                         prompt=prompt(request))


def equivalence_cases() -> list[Any]:
    out = []
    for key, (wire, _reasoning, template, prompt) in PAIRS.items():
        twire = template_wire(wire, template, prompt)
        for case in CASES:
            if applies(case, twire):
                out.append(pytest.param(key, twire, *case(twire), id=f"{key}-{case.__name__}"))
    return out


@pytest.mark.parametrize("key,twire,text,expected,request_", equivalence_cases())
def test_fallback_template_passes_the_dialects_case_table(key: str, twire: Wire, text: str, expected: Expected,
                                                           request_: Any) -> None:
    twire.check(text, expected, request=request_)


TEMPLATE_WIRES = {key: template_wire(wire, template, prompt) for key, (wire, _, template, prompt) in PAIRS.items()}


@pytest.mark.parametrize("key", PAIRS)
def test_fallback_templates_record_dropped_calls_and_stream_a_megabyte_value(key: str) -> None:
    """The contract's other two checks: a call to an unoffered tool is recorded in ``dropped``; a
    1 MB string value streams early with a small held suffix."""
    contract.test_dropped_calls_are_recorded(TEMPLATE_WIRES[key])
    contract.test_long_string_value_streams_in_bounded_memory(TEMPLATE_WIRES[key])


# The cases where the gemma4 dialect ends reasoning at a call: the quirk above, and no other.
CALL_IN_REASONING = {"call_nested_in_reasoning", "filtered_call_nested_in_reasoning", "missing_reasoning_close"}


@pytest.mark.parametrize("key", PAIRS)
def test_fallback_template_gives_the_hand_written_results(key: str) -> None:
    wire, reasoning, template, prompt = PAIRS[key]
    twire = template_wire(wire, template, prompt)
    for case in CASES:
        if not applies(case, wire):
            continue
        text, _, request = case(wire)
        want = result_of(hand_written(wire, reasoning, prompt, request).parse_complete(text))
        got = result_of(twire.parser(request).parse_complete(text))
        if key == "gemma4" and case.__name__ in CALL_IN_REASONING:
            assert got != want and got[2] == want[2], case.__name__  # same calls; the reasoning goes on
            continue
        assert got == want, case.__name__


def gemma(text: str, request: Any = None) -> Any:
    return create_parser(response_template=GEMMA4, request=request or {"tools": TOOLS}, prompt=GEMMA_PROMPT)


def test_quirk_a_gemma_call_inside_the_channel_keeps_the_reasoning_open() -> None:
    text = '<|channel>thought\nthink<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>more<channel|>answer'
    check_parse(lambda: gemma(text), text, Expected("answer", "thinkmore", [("f", '{"a": "x"}')]))


def qwen(request: Any = None, prompt: str | None = None) -> Any:
    return create_parser(response_template=QWEN3, request=request or {"tools": TOOLS}, prompt=prompt)


def test_quirk_content_on_both_sides_of_a_call_is_kept_verbatim() -> None:
    """HF strips a text value and lets the last close overwrite (``world`` alone); lmparse streams
    both runs as they are, as the qwen dialect does."""
    text = 'Hello <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> world'
    check_parse(qwen, text, Expected("Hello  world", None, [("f", "{}")]))


def test_quirk_xml_inline_values_lose_one_newline_each_side_not_all_whitespace() -> None:
    """HF's ``\\s*(?P<value>.*?)\\s*`` strips every blank; lmparse keeps qwen3coder's rule."""
    text = "<tool_call>\n<function=f>\n<parameter=a>\n  two  \n\n</parameter>\n</function>\n</tool_call>"

    def make() -> Any:
        return create_parser(response_template=QWEN3_5, request={"tools": TOOLS})

    check_parse(make, text, Expected(None, None, [("f", '{"a": "  two  \\n"}')]))


def test_quirk_an_end_of_turn_marker_in_the_text_stays_text() -> None:
    """The implicit field's closers are end-of-turn tokens the server stops at; written out, they
    are text (nothing lost), as in the qwen dialect."""
    check_parse(qwen, "Hi<|im_end|>", Expected("Hi<|im_end|>"))


@pytest.mark.parametrize("prompt,expected", [
    (QWEN_THINKING, Expected("b", "a")),
    (QWEN_NOT_THINKING, Expected("a</think>b")),
    (None, Expected("a</think>b")),  # HF with prefix "": the implicit field first
])
def test_the_prompt_decides_where_the_reply_starts(prompt: str | None, expected: Expected) -> None:
    check_parse(lambda: qwen(prompt=prompt), "a</think>b", expected)


def test_the_prompt_is_read_after_its_last_start_anchor() -> None:
    """As HF cuts its prefix: an opener inside the anchor itself opens nothing."""
    template = {**QWEN3, "start_anchor": "<|im_start|>assistant\n<think>\n"}
    check_parse(lambda: create_parser(response_template=template, prompt=QWEN_THINKING), "a</think>b",
                Expected("a</think>b"))


def test_quirk_every_call_streams_without_repeats() -> None:
    """Without ``repeats`` HF keeps the last call only; lmparse emits every call it parses."""
    fields = {**QWEN3["fields"], "tool_calls": {k: v for k, v in QWEN3["fields"]["tool_calls"].items()
                                                if k != "repeats"}}
    text = QWEN.calls(("f", "{}"), ("g", '{"a": 1}'))

    def make() -> Any:
        return create_parser(response_template={**QWEN3, "fields": fields}, request={"tools": TOOLS})

    check_parse(make, text, Expected(None, None, [("f", "{}"), ("g", '{"a": 1}')]))


def test_a_gemma_name_outside_the_name_pattern_does_not_open_a_call() -> None:
    text = '<|tool_call>call:get-weather{a:<|"|>x<|"|>}<tool_call|>'
    check_parse(lambda: gemma(text), text, Expected(text))


def test_arguments_stream_before_the_region_closes() -> None:
    """Beyond HF / vLLM / SGLang (whole calls at region_close): identity, then argument text."""
    for template, head in [
        (QWEN3, '<tool_call>\n{"name": "f", "arguments": {"a": "long va'),
        (QWEN3_5, "<tool_call>\n<function=f>\n<parameter=a>\nlong va"),
        (GEMMA4, '<|tool_call>call:f{a:<|"|>long va'),
    ]:
        p = create_parser(response_template=template, request={"tools": TOOLS})
        deltas = p.stream_chunk(head)
        calls = [tc for d, _ in deltas for tc in (d.tool_calls or [])]
        assert calls[0].function.name == "f"
        assert "long va" in "".join(tc.function.arguments or "" for tc in calls), template


def test_loads_from_a_json_file_and_a_model_directory(tmp_path: Path) -> None:
    file = tmp_path / "template.json"
    file.write_text(json.dumps(QWEN3), encoding="utf-8")
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>", "response_template": QWEN3}))
    text = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    for source in (QWEN3, file, str(model), model / "tokenizer_config.json"):
        message = create_parser(response_template=source).parse_complete(text)
        assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [("f", '{"a": 1}')]


@pytest.mark.parametrize("change,message", [
    ({"mystery": 1}, "unknown key"),
    ({"version": 2}, "version"),
    ({"fields": {}}, "non-empty"),
    ({"fields": {**QWEN3["fields"], "tool_calls": {"open_pattern": "<a>.*", "content": "json"}}}, "not supported"),
    ({"fields": {**QWEN3["fields"], "title": {"open": "<t>", "close": "</t>"}}}, "not served"),
    ({"fields": {"content": {"content": "yaml"}}}, "content 'yaml'"),
    ({"fields": {**QWEN3["fields"], "content": {"join": ""}}}, "join needs repeats"),
    ({"fields": {**QWEN3["fields"], "tool_calls": {**QWEN3["fields"]["tool_calls"], "transform": None,
                                                   "open_pattern": "<c>(?P<name>\\w+)"}}}, "need a transform"),
    ({"fields": {**QWEN3["fields"], "reasoning_content": {"open": ["<think>", "<t>"], "close": "</think>"}}},
     "one literal open"),
    ({"start_anchor": None, "start_anchor_pattern": "<a>\\s+"}, "literal text"),
    ({"start_anchor_pattern": "<a>"}, "exactly one of"),
    ({"fields": {**QWEN3["fields"], "content": {"open": "<answer>", "close": "</answer>"}}}, "without an opener"),
    ({"fields": {**QWEN3["fields"], "content": {"content": "json"}}}, "text field"),
])
def test_a_template_lmparse_cannot_serve_is_refused_by_name(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_parser(response_template={**QWEN3, **change})


def test_a_template_without_calls_routes_reasoning_and_content() -> None:
    template = {"start_anchor": "<|im_start|>assistant\n", "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}}}

    def make() -> Any:
        return create_parser(response_template=template, request={"tools": TOOLS})

    text = '<think>a</think>b<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    check_parse(make, text, Expected('b<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', "a"))


def test_a_literal_start_anchor_pattern_is_read_as_its_text() -> None:
    template = {**{k: v for k, v in QWEN3.items() if k != "start_anchor"},
                "start_anchor_pattern": "<\\|im_start\\|>assistant\\n"}
    assert ResponseTemplate(template).spec.anchors == ("<|im_start|>assistant\n",)
    assert ResponseTemplate(GEMMA4).spec.anchors == ("<|turn>model\n", "<tool_response|>")


def test_response_template_parser_needs_a_template() -> None:
    with pytest.raises(ValueError, match="response_template="):
        create_parser(response_parser="response-template")
    with pytest.raises(ValueError, match="tool_parser"):
        create_parser(tool_parser="qwen", response_template=QWEN3)


# ---- linear time: the worst text of each region, streamed in 64-character chunks ----------------

HOSTILE = {
    "qwen3": lambda n: ("<" * (n // 4) + "<tool_cal" * (n // 40) + '<tool_call>\n{"name": "f", "arguments": {"a": "'
                        + '<\\"' * (n // 12) + '"}}\n</tool_call>'),
    "qwen3_5": lambda n: ("<thin" * (n // 20) + "<tool_call>\n<function=f>\n<parameter=a>\n"
                          + "</param" * (n // 14) + "\n</parameter>\n</function>\n</tool_call>"),
    "gemma4": lambda n: ("<|tool_cal" * (n // 40) + '<|tool_call>call:f{a:<|"|>' + "<|\"" * (n // 6)
                         + '<|"|>}<tool_call|>'),
}
TEMPLATES = {"qwen3": QWEN3, "qwen3_5": QWEN3_5, "gemma4": GEMMA4}


def stream_cost(template: dict[str, Any], text: str, repeats: int) -> float:
    import time

    compiled = ResponseTemplate(template)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for _ in range(repeats):
            p = compiled.parser({"tools": TOOLS})
            for i in range(0, len(text), 64):
                p.stream_chunk(text[i : i + 64])
            p.stream_chunk("", final=True)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("key", HOSTILE)
def test_hostile_regions_cost_linear_work(key: str) -> None:
    """16 times the text may cost at most 4 times 16 the work (a ratio, no absolute time)."""
    import gc

    small, large = 1 << 15, 1 << 19
    gc.collect()
    gc.disable()
    try:
        small_cost = stream_cost(TEMPLATES[key], HOSTILE[key](small), large // small)
        large_cost = stream_cost(TEMPLATES[key], HOSTILE[key](large), 1)
    finally:
        gc.enable()
    assert large_cost <= 4 * small_cost, (key, small_cost, large_cost)


NAMED_JSON = {"start_anchor": "<|start|>", "fields": {
    "tool_calls": {"open_pattern": r"<call>(?P<name>[\w.-]+)", "close": "</call>", "content": "json",
                   "repeats": True, "transform": {"type": "function",
                                                  "function": {"name": "{name}", "arguments": "{content}"}}},
    "content": {}}}


def test_a_name_captured_by_the_opener_with_plain_json_arguments_streams_them() -> None:
    text = 'Sure.<call>f{"a": "x \\"y\\" }", "b": [1, {"c": null}]}</call><call>g{}</call>'

    def make() -> Any:
        return create_parser(response_template=NAMED_JSON, request={"tools": TOOLS})

    check_parse(make, text, Expected("Sure.", None, [("f", '{"a": "x \\"y\\" }", "b": [1, {"c": null}]}'),
                                                   ("g", "{}")]))
    p = make()
    calls = [tc for d, _ in p.stream_chunk('<call>f{"a": "lo') for tc in (d.tool_calls or [])]
    assert calls[0].function.name == "f" and "lo" in "".join(tc.function.arguments or "" for tc in calls)


def test_broken_named_json_keeps_its_text() -> None:
    """Not a name: text.  Broken arguments after the name: the call ends with what it had."""
    def make() -> Any:
        return create_parser(response_template=NAMED_JSON, request={"tools": TOOLS})

    check_parse(make, "<call>{oops}</call>", Expected("<call>{oops}</call>"))
    p = make()
    message = p.parse_complete('<call>f{"a": 1]</call>')
    assert [c.function.name for c in message.tool_calls] == ["f"]


def test_lmparse_parse_takes_a_response_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lmparse.cli import main

    template = tmp_path / "template.json"
    template.write_text(json.dumps(GEMMA4), encoding="utf-8")
    reply = tmp_path / "reply.txt"
    reply.write_text('<|channel>thought\nhm<channel|>Sure.<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>',
                     encoding="utf-8")
    assert main(["parse", "--response-template", str(template), str(reply)]) == 0
    message = json.loads(capsys.readouterr().out)
    assert (message["content"], message["reasoning_content"]) == ("Sure.", "hm")
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": "x"}'}
