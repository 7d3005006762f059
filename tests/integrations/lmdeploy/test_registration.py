"""lmparse's names as LMDeploy sees them: its registries, its name validation, its CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lmdeploy.serve.openai import api_server
from lmdeploy.serve.openai.protocol import ChatCompletionRequest
from lmdeploy.serve.parsers import ResponseParserManager, validate_parser_names
from lmdeploy.serve.parsers.reasoning_parser import ReasoningParserManager
from lmdeploy.serve.parsers.response_parser import BaseResponseParser
from lmdeploy.serve.parsers.tool_parser import ToolParserManager

import lmparse
from lmparse.integrations import lmdeploy as plugin

from ...support.harmony import harmony_vocab_dir
from .engine import stand_in_context

REQUEST = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}])


def test_every_dot_free_lmparse_name_resolves_through_lmdeploys_registries():
    tools, reasonings = plugin.registered_names()
    assert "lmparse-qwen3" in tools and "lmparse-deepseek-v32" in tools and "lmparse-kimi-k2" in tools
    assert "lmparse-glm45" in reasonings and "lmparse-deepseek-v32" in reasonings
    for name in tools:
        assert ToolParserManager.get(name).lmparse_name == name[len(plugin.PREFIX):]
    for name in reasonings:
        assert ReasoningParserManager.get(name).lmparse_name == name[len(plugin.PREFIX):]
    assert validate_parser_names("lmparse-glm45", "lmparse-glm47") == ("lmparse-glm45", "lmparse-glm47")


def test_dotted_names_are_not_registered_because_mmengine_reads_the_dot_as_a_scope():
    assert "glm4.5" in lmparse.ToolParserManager.names()
    assert not any("." in name for names in plugin.registered_names() for name in names)
    assert ToolParserManager.get("lmparse-glm45") is not None


def test_registering_again_changes_nothing():
    before = ToolParserManager.get("lmparse-qwen3"), ReasoningParserManager.get("lmparse-qwen3")
    plugin.register()
    plugin.register()
    assert (ToolParserManager.get("lmparse-qwen3"), ReasoningParserManager.get("lmparse-qwen3")) == before
    assert ResponseParserManager.get("default") is plugin.DefaultResponseParser


def test_lmdeploys_own_names_keep_lmdeploys_own_parser():
    context = stand_in_context()
    api_server.set_parsers(context, "default", "qwen3")
    parser = context.response_parser_cls(REQUEST)
    assert isinstance(parser, BaseResponseParser) and not isinstance(parser, plugin.LmparseResponseParser)
    assert type(parser.tool_parser).__module__.startswith("lmdeploy.")


def test_lmparse_names_give_every_request_an_lmparse_parser():
    context = stand_in_context()
    api_server.set_parsers(context, "lmparse-qwen3", "lmparse-qwen3")
    assert context.response_parser_cls.tool_parser_cls.lmparse_name == "qwen3"  # what request validation reads
    assert isinstance(context.response_parser_cls(REQUEST), plugin.LmparseResponseParser)
    api_server.set_parsers(context, "default", "qwen3")  # and back: a second configuration starts clean
    assert not isinstance(context.response_parser_cls(REQUEST), plugin.LmparseResponseParser)


def test_an_lmparse_name_beside_an_lmdeploy_name_is_refused_at_startup():
    with pytest.raises(ValueError, match="cannot be mixed with LMDeploy's own"):
        api_server.set_parsers(stand_in_context(), "default", "lmparse-qwen3")


def test_the_cli_wrapper_runs_lmdeploys_cli_with_the_names_registered():
    # LMDeploy's --tool-call-parser / --reasoning-parser take any string and list the
    # registry's names in their help; the server validates them at startup.
    run = subprocess.run([sys.executable, "-m", "lmparse.integrations.lmdeploy", "serve", "api_server", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    help_text = "".join(run.stdout.split())  # argparse wraps its help at hyphens too
    assert "--tool-call-parser" in help_text
    for name in ("lmparse-qwen3", "lmparse-qwen3coder", "lmparse-glm47", "lmparse-deepseek-v32", "lmparse-kimi-k2",
                 "lmparse-gpt-oss"):
        assert f"'{name}'" in help_text, name


def test_a_required_call_gets_a_structural_tag_and_special_tokens_kept():
    context = stand_in_context()
    api_server.set_parsers(context, "lmparse-qwen3", "lmparse-qwen3")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools,
                                    tool_choice="required")
    adjusted = context.response_parser_cls(request).request
    assert adjusted.response_format["type"] == "structural_tag"
    assert "<tool_call>" in json.dumps(adjusted.response_format)
    assert adjusted.skip_special_tokens is False


@pytest.fixture
def harmony_vocab(monkeypatch):
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(harmony_vocab_dir()))


def test_gpt_oss_stays_lmdeploys_own_unless_lmparse_gpt_oss_is_named(harmony_vocab):
    from lmparse.integrations.lmdeploy._harmony import GptOssResponseParser, LmparseGptOssResponseParser

    assert ResponseParserManager.get("gpt-oss") is GptOssResponseParser
    assert ResponseParserManager.get("lmparse-gpt-oss") is LmparseGptOssResponseParser
    context = stand_in_context("GptOssForCausalLM")
    api_server.set_parsers(context, None, None)
    own = context.response_parser_cls(REQUEST)
    assert type(own).__mro__[1].__module__.startswith("lmdeploy.")
    assert not isinstance(own, LmparseGptOssResponseParser)
    api_server.set_parsers(context, "lmparse-gpt-oss", "lmparse-gpt-oss")
    assert isinstance(context.response_parser_cls(REQUEST), LmparseGptOssResponseParser)
    api_server.set_parsers(context, None, None)  # and back
    assert not isinstance(context.response_parser_cls(REQUEST), LmparseGptOssResponseParser)


def test_lmparse_gpt_oss_chooses_lmparses_harmony_parser_under_any_architecture(harmony_vocab):
    from lmparse.integrations.lmdeploy._harmony import LmparseGptOssResponseParser

    context = stand_in_context("Qwen3ForCausalLM")
    api_server.set_parsers(context, None, "lmparse-gpt-oss")
    parser = context.response_parser_cls(REQUEST)
    assert isinstance(parser, LmparseGptOssResponseParser)
    assert parser._parser.state.source is None  # lmparse's HarmonyResponseParser, not yet fed
