"""lmparse.constrain without xgrammar: the dialects' call syntax, the GBNF text, the verdict.

(``test_constrain_xgrammar`` compiles everything built here and feeds it real calls.)
"""

from __future__ import annotations

import json

import pytest

from lmparse import create_parser
from lmparse.constrain import Unconstrainable, check_calls, constraint_for, dialect_syntax, gbnf_for, schema_errors
from lmparse.constrain.gbnf import GbnfRules, literal
from lmparse.constrain.literals import PYTHON_LITERALS
from lmparse.registry import ToolParserManager
from lmparse.tools.syntax import CallSyntax

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
           "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
DIALECTS = sorted({name for name in ToolParserManager.names()})
# Dialects whose calls CallSyntax cannot spell (each says why in its ``call_syntax``).
UNCONSTRAINABLE = {"cohere-command", "command-a"}  # the model's call counter precedes the name


def _rebuilt(syntax: CallSyntax, calls: list[tuple[str, str]]) -> str:
    """A JSON-arguments reply written from the syntax alone (index i for a numbered call)."""
    index = (lambda i: f"{i}{syntax.args_open}") if syntax.numbered else (lambda i: "")
    body = syntax.separator.join(f"{syntax.call_begin(n)}{index(i)}{a}{syntax.call_end}"
                                 for i, (n, a) in enumerate(calls))
    return f"{syntax.section_open}{body}{syntax.section_close}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_describes_its_calls_as_its_renderer_writes_them(dialect: str) -> None:
    cls = ToolParserManager.get(dialect)
    syntax = cls.call_syntax()
    if syntax is None:  # not expressible (MiniMax-M3's per-key closers, Hunyuan's suffixed tags): refused
        with pytest.raises(Unconstrainable):
            dialect_syntax(dialect)
        return
    calls = [("get_weather", '{"city": "Paris"}'), ("get_time", "{}")]
    if syntax.arguments == "json":
        assert _rebuilt(syntax, calls) == cls.render(calls)
    else:  # XML / Python arguments: the call frame and the parameter tags are the parser's own markers
        assert syntax.call_begin("f") in cls.render([("f", "{}")])
        if syntax.params is not None:
            assert syntax.params.open.startswith(cls.parameter_open)
            assert syntax.call_end.startswith(cls.function_close)


@pytest.mark.parametrize(("dialect", "begin", "end"), [
    ("qwen3", '<tool_call>\n{"name": "get_weather", "arguments": ', "}\n</tool_call>"),
    ("qwen3coder", "<tool_call>\n<function=get_weather>\n", "</function>\n</tool_call>"),
    ("kimi-k2", "<|tool_call_begin|>functions.get_weather:", "<|tool_call_end|>"),
    ("deepseek-v31", "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>", "<｜tool▁call▁end｜>"),
    ("glm47", "<tool_call>get_weather", "</tool_call>"),
    ("mistral", "[TOOL_CALLS]get_weather[ARGS]", ""),
    ("gemma4", "<|tool_call>call:get_weather", "<tool_call|>"),
    ("apertus", '{"get_weather": ', "}"),  # inside <|tools_prefix|>[ ... ]<|tools_suffix|>
])
def test_call_frames(dialect: str, begin: str, end: str) -> None:
    syntax = ToolParserManager.get(dialect).call_syntax()
    assert syntax is not None and (syntax.call_begin("get_weather"), syntax.call_end) == (begin, end)


def test_gbnf_for_required_names_every_tool_and_repeats_calls() -> None:
    tools = TOOLS + [{"type": "function", "function": {"name": "get_time"}}]
    grammar = gbnf_for("qwen3", tools, "required", parallel=True)
    assert grammar.splitlines()[0] == 'root ::= call ( "\\n" call )*'
    assert "call ::= call-0 | call-1" in grammar.splitlines()
    assert gbnf_for("qwen3", tools, "required", parallel=False).splitlines()[0] == "root ::= call"
    assert gbnf_for("qwen3", tools, "auto") is None


def test_schema_subset_becomes_rules() -> None:
    rules = GbnfRules()
    obj = rules.value({"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"enum": ["x", 1]},
                                                        "c": {"type": "array", "items": {"type": "number"},
                                                              "minItems": 1}},
                       "required": ["b"]})
    text = rules.rules[obj]
    assert '"\\"b\\"" ws ":" ws ( "\\"x\\"" | "1" )' in text  # required, reached with or without a
    assert text.startswith('"{" ws ( "\\"a\\""')
    assert rules.rules["boolean"] == '"true" | "false"'
    array = next(v for k, v in rules.rules.items() if k.startswith("array-"))
    assert array == '"[" ws number ( ws "," ws number )* ws "]"'
    assert rules.value({"$ref": "#/x"}) == "value"  # anything else: any JSON value
    python = GbnfRules(PYTHON_LITERALS)
    assert python.value({"type": "null"}) == "null" and python.rules["null"] == '"None"'


def test_literals_escape_what_gbnf_needs() -> None:
    assert literal('a"b\\c\nd\x01') == '"a\\"b\\\\c\\nd\\x01"'
    assert literal("<｜DSML｜>") == '"<｜DSML｜>"'  # UTF-8 as it is


def test_engines_without_a_constraint_format_are_refused() -> None:
    assert constraint_for("qwen3", "lmdeploy", TOOLS, "auto") is None
    with pytest.raises(Unconstrainable, match="lmdeploy engine has no way"):
        constraint_for("qwen3", "lmdeploy", TOOLS, "required")
    with pytest.raises(Unconstrainable, match="no call syntax"):
        constraint_for(None, "vllm", TOOLS, "required")
    assert set(constraint_for("qwen3", "llamacpp", TOOLS, "required") or {}) == {"grammar"}


def test_schema_errors_and_the_verdict() -> None:
    assert schema_errors({"city": "Paris", "days": 2}, WEATHER) == []
    assert schema_errors({"days": "2"}, WEATHER) == ["arguments.city is required",
                                                      "arguments.days must be of type integer"]
    assert schema_errors(True, {"type": "integer"}) == ["arguments must be of type integer"]
    fns = [t["function"] for t in TOOLS]
    assert check_calls([("get_weather", '{"city": "Rome"}')], fns) is None
    assert check_calls([], fns) == "the model did not call a tool although tool_choice required it"
    assert "not JSON" in (check_calls([("get_weather", "{oops")], fns) or "")
    assert "does not allow" in (check_calls([("rm_rf", "{}")], fns) or "")


def test_parallel_false_keeps_the_first_call_and_drops_the_rest() -> None:
    text = ToolParserManager.get("qwen3").render([("get_weather", '{"city": "Paris"}'),
                                                  ("get_weather", '{"city": "Rome"}')])
    request = {"tools": TOOLS, "parallel_tool_calls": False}
    parser = create_parser(tool_parser="qwen3", request=request)
    message = parser.parse_complete(text)
    assert [json.loads(c.function.arguments) for c in message.tool_calls or []] == [{"city": "Paris"}]
    assert [d.reason for d in parser.dropped] == ["parallel_tool_calls is false: only the first call is kept"]
    both = create_parser(tool_parser="qwen3", request={"tools": TOOLS}).parse_complete(text)
    assert len(both.tool_calls or []) == 2
