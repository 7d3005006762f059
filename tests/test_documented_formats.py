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
    # Gemma 4 as PROTOCOLS.md renders google-gemma-4-31B-it.jinja, and as TOKENIZERS.md tokenizes it
    (
        "gemma4",
        '<|tool_call>call:get_weather{city:<|"|>Paris "FR" & <x><|"|>,days:3,opts:{unit:<|"|>c<|"|>}}<tool_call|>'
        '<|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|><|tool_response>',
        [("get_weather", {"city": 'Paris "FR" & <x>', "days": 3, "opts": {"unit": "c"}}), ("get_weather", {"city": "Rome"})],
    ),
    ("gemma4", '<|tool_call>call:get_time{city:<|"|>London<|"|>}<tool_call|>', [("get_time", {"city": "London"})]),
]


@pytest.mark.parametrize("parser,raw,calls", ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_documented_format(parser, raw, calls):
    got = check_parse(lambda: create_parser(tool_parser=parser), raw)
    content, reasoning, tool_calls = got
    assert (content, reasoning) == (None, None)
    assert [(name, json.loads(args)) for name, args in tool_calls] == calls


# Qwen3-Coder sometimes writes its <function=...> block with no <tool_call> around it
# (seen in agent transcripts); such a block counts once its first parameter or its end
# confirms it, and prose that merely mentions the syntax stays text.
EDITOR = {"type": "object", "properties": {"command": {"type": "string"}, "path": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": n, "parameters": EDITOR}} for n in ("execute_bash", "str_replace_editor")]

BARE = [
    (
        "Let me check.\n<function=execute_bash>\n<parameter=command>\npwd && ls\n</parameter>\n</function>\nDone.",
        "Let me check.\n\nDone.",
        [("execute_bash", {"command": "pwd && ls"})],
    ),
    (
        "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/a.py</parameter>\n</function>",
        None,
        [("str_replace_editor", {"command": "view", "path": "/a.py"})],
    ),
    (
        "<function=execute_bash>\n<parameter=command>\nls\n</parameter>\n</function>\n"
        "<function=execute_bash>\n<parameter=command>\npwd\n</parameter>\n</function>",
        None,
        [("execute_bash", {"command": "ls"}), ("execute_bash", {"command": "pwd"})],
    ),
    ("Use the <function=name> syntax to call tools.", "Use the <function=name> syntax to call tools.", []),
    ("cut off <function=execute_ba", "cut off <function=execute_ba", []),
    ("cut off <function=execute_bash>\n", "cut off <function=execute_bash>\n", []),
]


@pytest.mark.parametrize("raw,content,calls", BARE, ids=[f"bare-{i}" for i in range(len(BARE))])
def test_qwen3coder_function_block_without_tool_call_tags(raw, content, calls):
    got = check_parse(lambda: create_parser(tool_parser="qwen3coder", request={"tools": TOOLS}), raw)
    assert got[0] == content
    assert [(name, json.loads(args)) for name, args in got[2]] == calls
