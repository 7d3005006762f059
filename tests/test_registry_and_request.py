"""Registries, request normalization and create_parser configuration errors."""

from __future__ import annotations

import pytest

from lmparse import ReasoningParserManager, ToolParserManager, create_parser, normalize_request
from lmparse.constrain import gbnf_for, structural_tag_for
from lmparse.registry import Registry
from lmparse.request import AUTO, NO_TOOLS, REQUIRED, Allowed, Named, ParserRequest

TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "g"}},
]


def test_every_documented_name_is_registered():
    for name in ("qwen", "qwen2d5", "qwen3", "hermes", "llama3", "internlm", "intern-s1"):
        assert name in ToolParserManager
    for name in ("default", "qwen-qwq", "qwen3", "deepseek-r1", "intern-s1", "glm45", "kimi-k2",
                 "deepseek-v3", "deepseek-v32", "deepseek-v3.2", "deepseek-v4"):
        assert name in ReasoningParserManager


def test_unknown_name_lists_the_registered_ones():
    with pytest.raises(ValueError) as err:
        create_parser(tool_parser="nope")
    assert "nope" in str(err.value) and "qwen" in str(err.value) and "llama3" in str(err.value)


def test_registering_a_name_twice_for_another_class_fails():
    reg = Registry("thing")

    @reg.register_module(["a", "b"])
    class A:
        pass

    with pytest.raises(ValueError):
        reg.register_module("b")(type("B", (), {}))
    assert reg.get("a") is A and reg.get("b") is A


def test_tool_choice_forms():
    assert normalize_request({"tools": TOOLS}).tool_choice == "auto"
    assert normalize_request({}).tools_enabled is False
    r = normalize_request({"tools": TOOLS, "tool_choice": "none"})
    assert r.tools_enabled is False and r.allowed_names == frozenset()
    r = normalize_request({"tools": TOOLS, "tool_choice": "required"})
    assert r.tool_choice == "required" and r.allowed_names == {"f", "g"}
    r = normalize_request({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "g"}}})
    assert (r.tool_choice, r.forced_name, r.allowed_names) == ("required", "g", {"g"})
    r = normalize_request({
        "tools": TOOLS,
        "tool_choice": {"type": "allowed_tools",
                        "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "f"}}]}},
    })
    assert (r.tool_choice, r.allowed_names) == ("required", {"f"})


def test_tool_choice_is_normalized_to_one_variant():
    assert normalize_request({"tools": TOOLS}).choice == AUTO
    assert normalize_request({}).choice == NO_TOOLS  # no tools: nothing to call
    assert normalize_request({"tools": TOOLS, "tool_choice": "none"}).choice == NO_TOOLS
    assert normalize_request({"tools": TOOLS, "tool_choice": "required"}).choice == REQUIRED
    named = normalize_request({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "g"}}})
    assert named.choice == Named("g") and named.choice != Named("f") and named.single_call
    allowed = normalize_request({"tools": TOOLS, "tool_choice": {"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "f"}}]}}})
    assert allowed.choice == Allowed(["f"]) and not allowed.choice.must_call
    assert [fn["name"] for fn in allowed.callable_tools] == ["f"] and allowed.required_functions is None
    assert AUTO != NO_TOOLS != REQUIRED and len({AUTO, NO_TOOLS, REQUIRED, Named("f"), Named("f")}) == 4


def test_parallel_tool_calls_false_is_max_calls_one():
    assert normalize_request({"tools": TOOLS, "parallel_tool_calls": False}).max_calls == 1
    assert normalize_request({"tools": TOOLS, "parallel_tool_calls": True}).max_calls is None


def test_the_request_value_is_immutable():
    request = normalize_request({"tools": TOOLS, "tool_choice": "required"})
    with pytest.raises(AttributeError):
        request.max_calls = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        request.tools["h"] = {"name": "h"}  # type: ignore[index]
    with pytest.raises(AttributeError):
        Named("f").name = "g"  # type: ignore[misc]


def test_a_request_built_from_its_parts_equals_the_normalized_one():
    functions = {"f": {"name": "f", "description": None, "parameters": {"type": "object"}}}
    built = ParserRequest(functions, Named("f"), max_calls=1, thinking=False)
    parsed = normalize_request({"tools": TOOLS[:1], "tool_choice": {"type": "function", "function": {"name": "f"}},
                                "parallel_tool_calls": False, "chat_template_kwargs": {"enable_thinking": False}})
    assert (built.tool_choice, built.forced_name, built.allowed_names, built.max_calls, built.thinking) == (
        parsed.tool_choice, parsed.forced_name, parsed.allowed_names, parsed.max_calls, parsed.thinking)
    assert dict(built.tools) == dict(parsed.tools)


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "g"}}, {"name": "g"}])
def test_the_constraint_builders_take_the_value_or_the_raw_fields_alike(choice):
    typed = choice if "type" in choice or isinstance(choice, str) else {"type": "function", **choice}
    request = normalize_request({"tools": TOOLS, "tool_choice": typed, "parallel_tool_calls": False})
    assert structural_tag_for("qwen3", request) == structural_tag_for("qwen3", TOOLS, choice, False)
    assert gbnf_for("qwen3", request) == gbnf_for("qwen3", TOOLS, choice, parallel=False)


@pytest.mark.parametrize(
    "request_,field",
    [
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "h"}}}, "h"),
        ({"tools": TOOLS, "tool_choice": {"type": "allowed_tools",
                                          "allowed_tools": {"tools": [{"type": "function", "function": {"name": "zz"}}]}}}, "zz"),
        ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
        ({"tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
        ({"tools": [{"type": "retrieval"}]}, "tools[0].type"),
        ({"tools": "f"}, "tools"),
        ({"tool_choice": "required"}, "tools"),
        ({"chat_template_kwargs": {"enable_thinking": "yes"}}, "thinking"),
    ],
)
def test_bad_requests_name_the_field(request_, field):
    with pytest.raises(ValueError) as err:
        normalize_request(request_)
    assert field in str(err.value)


@pytest.mark.parametrize(
    "request_,thinking",
    [
        ({}, None),
        ({"chat_template_kwargs": {"enable_thinking": False}}, False),
        ({"chat_template_kwargs": {"thinking": True}}, True),
        ({"enable_thinking": False}, False),
    ],
)
def test_thinking_switches(request_, thinking):
    assert normalize_request(request_).thinking is thinking


@pytest.mark.parametrize(
    "parser,request_,starts_in_reasoning",
    [
        ("default", {}, True),
        ("qwen3", {"chat_template_kwargs": {"enable_thinking": False}}, False),
        ("deepseek-v3", {}, False),
        ("deepseek-v3", {"chat_template_kwargs": {"thinking": True}}, True),
        ("deepseek-v32", {"enable_thinking": True}, True),
        ("deepseek-v4", {}, False),
    ],
)
def test_initial_reasoning_mode(parser, request_, starts_in_reasoning):
    m = create_parser(reasoning_parser=parser, request=request_).parse_complete("abc")
    assert (m.reasoning_content, m.content) == (("abc", None) if starts_in_reasoning else (None, "abc"))


def test_leading_think_tag_is_dropped_once():
    m = create_parser(reasoning_parser="default").parse_complete("<think>a<think>b</think>c")
    assert (m.reasoning_content, m.content) == ("a<think>b", "c")


def test_think_tag_in_plain_mode_opens_reasoning():
    m = create_parser(reasoning_parser="deepseek-v3").parse_complete("x<think>r</think>y")
    assert (m.reasoning_content, m.content) == ("r", "xy")


def test_delta_to_dict_omits_unset_keys():
    p = create_parser(tool_parser="qwen")
    out = [d.to_dict() for d, _ in p.stream_chunk('hi<tool_call>{"name": "f", "arguments": {}}</tool_call>', final=True)]
    assert out[0] == {"content": "hi"}
    first = out[1]["tool_calls"][0]
    assert set(first) == {"index", "id", "type", "function"} and first["function"] == {"name": "f", "arguments": "{}"}
