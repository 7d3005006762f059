"""The plugin loaded the ways vLLM 0.33 loads plugins, its names looked up in vLLM's registries."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from vllm.reasoning import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers import ToolParser, ToolParserManager

from lmparse.registry import ReasoningParserManager as LmReasoning
from lmparse.registry import ToolParserManager as LmTools

from . import harness

ROOT = Path(__file__).resolve().parents[3]


def test_the_plugin_flags_register_every_lmparse_name_idempotently():
    # `--tool-parser-plugin` / `--reasoning-parser-plugin` end here, and vLLM runs them twice.
    ToolParserManager.import_tool_parser("lmparse.integrations.vllm")
    ReasoningParserManager.import_reasoning_parser("lmparse.integrations.vllm")
    first = {n: ToolParserManager.get_tool_parser(f"lmparse-{n}") for n in LmTools.names()}
    ToolParserManager.import_tool_parser("lmparse.integrations.vllm")
    import lmparse.integrations.vllm as plugin

    plugin.register()
    for name, cls in first.items():
        assert ToolParserManager.get_tool_parser(f"lmparse-{name}") is cls
        assert issubclass(cls, ToolParser) and cls.lmparse_name == name
    for name in LmReasoning.names():
        cls = ReasoningParserManager.get_reasoning_parser(f"lmparse-{name}")
        assert issubclass(cls, ReasoningParser) and cls.lmparse_name == name
    assert set(plugin.registered_names()[0]) <= set(ToolParserManager.list_registered())
    assert set(plugin.registered_names()[1]) <= set(ReasoningParserManager.list_registered())


def _fresh_python(code: str) -> str:
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_general_plugin_entry_point_registers_without_flags():
    (ep,) = [ep for ep in entry_points(group="vllm.general_plugins") if ep.name == "lmparse"]
    assert ep.value == "lmparse.integrations.vllm:register"
    # A fresh process that never imports the plugin itself: vLLM's loader (run in the API server
    # and in every engine core) finds it through the installed entry point.
    out = _fresh_python(
        "import sys\n"
        "from vllm.plugins import load_general_plugins\n"
        "assert 'lmparse.integrations.vllm' not in sys.modules\n"
        "load_general_plugins()\n"
        "from vllm.tool_parsers import ToolParserManager\n"
        "from vllm.reasoning import ReasoningParserManager\n"
        "print(ToolParserManager.get_tool_parser('lmparse-qwen3coder').__name__)\n"
        "print(ReasoningParserManager.get_reasoning_parser('lmparse-kimi-k2').__name__)\n")
    assert out.split() == ["LmparseToolParser_qwen3coder", "LmparseReasoningParser_kimi_k2"]


def test_vllm_serve_arguments_accept_the_names():
    # What `vllm serve M --enable-auto-tool-choice --tool-parser-plugin ... --reasoning-parser ...`
    # runs before it starts the engine: argument parsing, the plugin import, the name validation.
    model = harness.model_dir("qwen3coder")
    out = _fresh_python(
        "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
        "from vllm.entrypoints.common.cli_args import (make_arg_parser, validate_parsed_serve_args,\n"
        "    init_parser_plugin, validate_api_server_args)\n"
        "from vllm.engine.arg_utils import AsyncEngineArgs\n"
        "def check(tool, reasoning):\n"
        f"    args = make_arg_parser(FlexibleArgumentParser()).parse_args(['--model', {str(model)!r},\n"
        "        '--enable-auto-tool-choice', '--tool-parser-plugin', 'lmparse.integrations.vllm',\n"
        "        '--tool-call-parser', tool, '--reasoning-parser-plugin', 'lmparse.integrations.vllm',\n"
        "        '--reasoning-parser', reasoning])\n"
        "    validate_parsed_serve_args(args)\n"
        "    args.structured_outputs_config = AsyncEngineArgs.from_cli_args(args).create_structured_outputs_config()\n"
        "    init_parser_plugin(args); init_parser_plugin(args)\n"
        "    try:\n"
        "        validate_api_server_args(args)\n"
        "    except KeyError as exc:\n"
        "        return 'refused ' + str(exc)[:40]\n"
        "    return 'accepted'\n"
        "print(check('lmparse-qwen3coder', 'lmparse-qwen3'))\n"
        "print(check('lmparse-nope', 'lmparse-qwen3'))\n"
        "print(check('lmparse-qwen3coder', 'lmparse-nope'))\n")
    lines = out.strip().splitlines()
    assert lines[0] == "accepted"
    assert lines[1].startswith("refused") and "lmparse-nope" in lines[1]
    assert lines[2].startswith("refused") and "lmparse-nope" in lines[2]
