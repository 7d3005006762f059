"""The request body each upstream engine is sent, built without a server or an engine."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

pytest.importorskip("orjson")

from lmparse.serve.engines.bodies import BodyOptions  # noqa: E402
from lmparse.serve.engines.upstream import ENGINES  # noqa: E402

from .support.upstream import request  # noqa: E402

OPTIONS = BodyOptions(model=None, default_max_tokens=4096)
LIMIT = {"vllm": "max_tokens", "sglang": "max_new_tokens", "lmdeploy": "max_tokens", "llamacpp": "n_predict"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def body(engine: str, options: BodyOptions = OPTIONS, **kw: Any) -> dict[str, Any]:
    return ENGINES[engine].body(request(**kw), "PROMPT", options)


def sampling(engine: str, built: dict[str, Any]) -> dict[str, Any]:
    """Where the engine takes its limit and stop strings (SGLang nests them)."""
    return built["sampling_params"] if engine == "sglang" else built


@pytest.mark.parametrize("engine", ENGINES)
def test_limit_stop_and_model_go_where_each_engine_reads_them(engine: str) -> None:
    plain = body(engine)
    assert sampling(engine, plain)[LIMIT[engine]] == 4096 and "stop" not in sampling(engine, plain)
    assert "model" not in plain and plain["stream"] is True
    assert plain["text" if engine == "sglang" else "prompt"] == "PROMPT"
    named = body(engine, BodyOptions("qwen3-8b", 4096), max_tokens=77, stop=["STOP"])
    assert sampling(engine, named)[LIMIT[engine]] == 77 and sampling(engine, named)["stop"] == ["STOP"]
    assert named["model"] == "qwen3-8b"


@pytest.mark.parametrize("engine, fields", [
    ("vllm", {"logprobs": 3}),
    ("sglang", {"return_logprob": True, "top_logprobs_num": 3, "return_text_in_logprobs": True}),
    ("lmdeploy", {"return_logprob": True}),
    ("llamacpp", {"n_probs": 3}),
])
def test_logprobs_are_asked_for_in_each_engines_words(engine: str, fields: dict[str, Any]) -> None:
    built = body(engine, logprobs=True, top_logprobs=3)
    assert {key: built[key] for key in fields} == fields
    assert not set(fields) & set(body(engine))


def test_special_tokens_are_kept_and_ids_asked_for() -> None:
    assert body("vllm")["return_token_ids"] is True and body("vllm")["add_special_tokens"] is False
    assert body("sglang")["sampling_params"]["no_stop_trim"] is True
    assert body("llamacpp")["return_tokens"] is True
    for engine in ("vllm", "lmdeploy"):
        assert body(engine)["skip_special_tokens"] is False


def test_a_json_schema_or_any_json_object() -> None:
    schema_format = {"type": "json_schema", "schema": SCHEMA}
    assert body("vllm", response_format=schema_format)["structured_outputs"] == {"json": SCHEMA}
    assert body("vllm", response_format={"type": "json_object"})["structured_outputs"] == {"json_object": True}
    params = body("sglang", response_format={"type": "json_object"})["sampling_params"]
    assert json.loads(params["json_schema"]) == {"type": "object"}
    assert body("llamacpp", response_format=schema_format)["json_schema"] == SCHEMA


def test_lmdeploy_warns_once_that_it_cannot_enforce_a_format(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "lmparse.serve"):
        for _ in range(2):
            assert "json_schema" not in body("lmdeploy", response_format={"type": "json_object"})
    assert len([r for r in caplog.records if "lmdeploy" in r.getMessage()]) <= 1  # once per process
