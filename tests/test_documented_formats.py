"""Wire formats as other serving stacks document and pin them, parsed by ours.

Each row is a reply exactly as a family writes it (or as it reads after a server has
skipped a control token), the parser name, and the calls that must come out; every row
goes through the shared validator (whole, per character, random chunkings).
"""

from __future__ import annotations

import json

import pytest

from lmparse import create_parser

from .support.stream import check_parse

W = ("get_weather", {"city": "SF"})

ROWS = [
    ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>', [W]),
    ("pythonic", '[get_weather(city="SF", units="metric")]', [("get_weather", {"city": "SF", "units": "metric"})]),
    ("mistral", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "SF"}}]', [W]),
    # v11+ with the control token [ARGS] skipped by the server, [TOOL_CALLS] kept
    ("mistral", '[TOOL_CALLS]get_weather{"city": "SF"}', [W]),
    ("mistral", '[TOOL_CALLS]get_weather {"city": "SF"}[TOOL_CALLS]get_time{}', [W, ("get_time", {})]),
    ("qwen3coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nSF\n</parameter>\n</function>\n</tool_call>", [W]),
    # Kimi headers may end in a newline or be surrounded by spaces
    (
        "kimi-k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\n"
        '<|tool_call_argument_begin|>{"city": "SF"}<|tool_call_end|><|tool_calls_section_end|>',
        [W],
    ),
    (
        "kimi-k2",
        "<|tool_calls_section_begin|> <|tool_call_begin|> functions.get_weather:0 <|tool_call_argument_begin|> "
        '{"city": "SF"} <|tool_call_end|> <|tool_calls_section_end|>',
        [W],
    ),
    (
        "deepseek-v3",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "SF"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [W],
    ),
    (
        "deepseek-v31",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "SF"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [W],
    ),
    (
        "minimax-m2",
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">SF</parameter>\n</invoke>\n</minimax:tool_call>',
        [W],
    ),
    ("glm45", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>SF</arg_value>\n</tool_call>", [W]),
    ("glm47", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>SF</arg_value></tool_call>", [W]),
    (
        "deepseek-v4",
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">SF</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
        [W],
    ),
    ("llama3", '{"name": "get_weather", "parameters": {"city": "SF"}}', [W]),
    ("llama3", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "SF"}}', [W]),
    ("internlm", '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "SF"}}<|action_end|>', [W]),
]


@pytest.mark.parametrize("parser,raw,calls", ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_documented_format(parser, raw, calls):
    got = check_parse(lambda: create_parser(tool_parser=parser), raw)
    content, reasoning, tool_calls = got
    assert (content, reasoning) == (None, None)
    assert [(name, json.loads(args)) for name, args in tool_calls] == calls
