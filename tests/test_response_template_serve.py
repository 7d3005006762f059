"""``lmparse serve --model DIR``: a model directory that ships a ``response_template`` is parsed by
it when no dialect is named (and the server says so); a named dialect wins.  The directories are
written at test time from the Qwen3 tokenizer test data (tests/support/model_dir.py)."""

from __future__ import annotations

import json
import logging
from copy import deepcopy
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
pytest.importorskip("jinja2")
pytest.importorskip("tokenizers")

from lmparse.serve.app import simulated_binding, upstream_binding  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402
from lmparse.request import ParserRequest  # noqa: E402

from .support.model_dir import qwen3_model_dir  # noqa: E402
from .support.response_templates import QWEN3  # noqa: E402
from .support.server import LiveServer  # noqa: E402
from .support.upstream import REASONING, REPLY  # noqa: E402
from .test_serve_upstream import FakeEngines, ThreadServer  # noqa: E402

# Qwen3's fallback without its reasoning field: the reply's <think> block stays content, which
# tells this template's parsing apart from the qwen3 family's.
NO_REASONING = deepcopy(QWEN3)
del NO_REASONING["fields"]["reasoning_content"]
# The same markers as Beam-style metadata: vLLM's field name for reasoning.
BEAM_QWEN = deepcopy(QWEN3)
BEAM_QWEN["fields"]["thinking"] = BEAM_QWEN["fields"].pop("reasoning_content")


def model_with_template(tmp_path: Path, template: dict) -> Path:
    model = qwen3_model_dir(tmp_path)
    path = model / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**config, "response_template": template}), encoding="utf-8")
    return model


def test_the_models_template_parses_when_no_dialect_is_named(tmp_path, caplog):
    model = model_with_template(tmp_path, NO_REASONING)
    with caplog.at_level(logging.INFO, logger="lmparse.serve"):
        binding = upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model,
                                   dialect_named=False)
    assert binding.family.response_parser == "response-template"
    assert "ships a response_template" in caplog.text
    message = binding.new_parser(ParserRequest.accept_all()).parse_complete(REPLY)
    assert message.reasoning_content is None and REASONING in message.content
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]


def test_a_named_dialect_wins_over_the_models_template(tmp_path):
    model = model_with_template(tmp_path, NO_REASONING)
    binding = upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model)
    assert binding.response_template is None
    assert binding.new_parser(ParserRequest.accept_all()).parse_complete(REPLY).reasoning_content.strip() == REASONING


def test_response_parser_response_template_takes_the_models_template_or_says_what_is_missing(tmp_path):
    family = get_family("qwen3").with_parsers("", "", "response-template")
    model = model_with_template(tmp_path / "with", NO_REASONING)
    binding = upstream_binding(family, "vllm", "http://unused", model_dir=model)
    assert binding.new_parser(ParserRequest.accept_all()).parse_complete(REPLY).reasoning_content is None
    with pytest.raises(ValueError, match="needs --model DIR whose tokenizer_config.json has a response_template"):
        upstream_binding(family, "vllm", "http://unused", model_dir=qwen3_model_dir(tmp_path / "without"))


def test_a_template_lmparse_cannot_serve_is_a_startup_error_naming_the_way_out(tmp_path):
    broken = deepcopy(QWEN3)
    broken["fields"]["tool_calls"]["open_pattern"] = "<tool_call>.*"
    model = model_with_template(tmp_path, broken)
    with pytest.raises(ValueError, match="response_template cannot be served.*--family or --tool-call-parser"):
        upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model, dialect_named=False)


def test_serve_model_dir_with_a_template_end_to_end(tmp_path):
    model = model_with_template(tmp_path, NO_REASONING)
    fakes = FakeEngines()
    upstream = ThreadServer(fakes.app())
    live = LiveServer(["--engine", "vllm", "--upstream", upstream.url + "/vllm", "--model", str(model),
                       "--log-level", "info"])
    try:
        client = openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0)
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        message = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}],
                                                 tools=tools).choices[0].message
        assert [c.function.name for c in message.tool_calls] == ["get_weather"]
        assert REASONING in message.content
        assert "parsed by the response-template parser" in live.log_text()
    finally:
        live.stop()
        upstream.stop()


def test_family_beam_parses_with_the_models_template_in_beam_mode(tmp_path):
    from lmparse.response.template import BeamTemplateParser

    model = model_with_template(tmp_path / "with", BEAM_QWEN)
    binding = upstream_binding(get_family("beam"), "vllm", "http://unused", model_dir=model)
    assert binding.family.response_parser == "beam" and binding.response_template.mode == "beam"
    parser = binding.new_parser(ParserRequest.accept_all())
    assert type(parser) is BeamTemplateParser
    message = parser.parse_complete(REPLY)
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    assert message.reasoning_content.strip() == REASONING  # the reply opens its own <think>
    with pytest.raises(ValueError, match="beam response parser needs --model DIR"):
        upstream_binding(get_family("beam"), "vllm", "http://unused", model_dir=qwen3_model_dir(tmp_path / "without"))
    with pytest.raises(ValueError, match="serve it from a real engine with --model DIR"):
        simulated_binding(get_family("beam"))


def test_family_beam_refuses_a_template_vllm_would_refuse(tmp_path):
    model = model_with_template(tmp_path, QWEN3)  # reasoning_content: transformers' field name, not Beam's
    with pytest.raises(ValueError, match="not Beam fields"):
        upstream_binding(get_family("beam"), "vllm", "http://unused", model_dir=model)
