"""The request body each upstream engine is sent, built without a server or an engine."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

pytest.importorskip("orjson")

from lmparse.serve.engines import bodies  # noqa: E402
from lmparse.serve.engines.base import Sampling  # noqa: E402
from lmparse.serve.engines.bodies import EXTRA_FIELDS, BodyOptions, llamacpp_body  # noqa: E402
from lmparse.serve.engines.special import preserved_tokens  # noqa: E402
from lmparse.serve.engines.upstream import ENGINES  # noqa: E402
from lmparse.serve.errors import RequestError  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402

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


# ---- sampling options, extras, preserved markers, constraints -----------------------------------

EVERY = Sampling(temperature=0.0, top_p=0.9, top_k=20, min_p=0.05, seed=7, presence_penalty=0.5,
                 frequency_penalty=-0.5, repetition_penalty=1.1, logit_bias={151645: 100, 9: -100},
                 stop_token_ids=[151643])
TEXTS = {151643: "<|endoftext|>"}.get
QWEN3_MARKERS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]


def every_field(engine: str) -> dict[str, Any]:
    """A request that sets every option lmparse forwards, through ``engine``'s builder."""
    req = request(max_tokens=64, stop=["STOP"], logprobs=True, top_logprobs=2, sampling=EVERY,
                  response_format={"type": "json_schema", "schema": SCHEMA})
    options = BodyOptions("m", 4096, tuple(QWEN3_MARKERS), TEXTS)
    return ENGINES[engine].body(req, "PROMPT", options)


def test_vllm_gets_every_option_under_its_own_names() -> None:
    assert every_field("vllm") == {
        "prompt": "PROMPT", "stream": True, "return_token_ids": True, "skip_special_tokens": False,
        "spaces_between_special_tokens": False, "add_special_tokens": False,
        "stream_options": {"include_usage": True}, "max_tokens": 64, "stop": ["STOP"], "model": "m",
        "temperature": 0.0, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "seed": 7, "presence_penalty": 0.5,
        "frequency_penalty": -0.5, "repetition_penalty": 1.1, "logit_bias": {"151645": 100, "9": -100},
        "stop_token_ids": [151643], "logprobs": 2, "structured_outputs": {"json": SCHEMA}}


def test_sglang_gets_every_option_in_its_sampling_params() -> None:
    assert every_field("sglang") == {
        "text": "PROMPT", "stream": True, "model": "m", "return_logprob": True, "top_logprobs_num": 2,
        "return_text_in_logprobs": True, "sampling_params": {
            "skip_special_tokens": False, "spaces_between_special_tokens": False, "no_stop_trim": True,
            "max_new_tokens": 64, "stop": ["STOP"], "temperature": 0.0, "top_p": 0.9, "top_k": 20, "min_p": 0.05,
            "sampling_seed": 7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1,
            "logit_bias": {"151645": 100, "9": -100}, "stop_token_ids": [151643],
            "json_schema": json.dumps(SCHEMA, separators=(",", ":"))}}


def test_lmdeploy_gets_the_options_its_generate_takes_and_logs_the_others(caplog: pytest.LogCaptureFixture,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "_warned", set())  # each warning is once per process: start afresh
    with caplog.at_level(logging.WARNING, "lmparse.serve"):
        built = every_field("lmdeploy")
    assert built == {
        "prompt": "PROMPT", "stream": True, "skip_special_tokens": False, "spaces_between_special_tokens": False,
        "max_tokens": 64, "stop": ["STOP"], "model": "m", "temperature": 0.0, "top_p": 0.9, "top_k": 20,
        "min_p": 0.05, "repetition_penalty": 1.1, "stop_token_ids": [151643], "return_logprob": True}
    logged = " ".join(r.getMessage() for r in caplog.records)
    for missing in ("seed", "presence_penalty", "frequency_penalty", "logit_bias", "JSON schema"):
        assert f"takes no {missing}" in logged


def test_llamacpp_gets_every_option_and_stops_on_a_token_by_its_rendered_text() -> None:
    assert every_field("llamacpp") == {
        "prompt": "PROMPT", "stream": True, "return_tokens": True, "cache_prompt": True, "n_predict": 64,
        "stop": ["STOP", "<|endoftext|>"], "model": "m", "temperature": 0.0, "top_p": 0.9, "top_k": 20,
        "min_p": 0.05, "seed": 7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "repeat_penalty": 1.1,
        "logit_bias": [[151645, 100], [9, -100]], "preserved_tokens": QWEN3_MARKERS + ["<|endoftext|>"],
        "n_probs": 2, "json_schema": SCHEMA}


@pytest.mark.parametrize("engine, no_cut", [("vllm", -1), ("sglang", -1), ("lmdeploy", 0), ("llamacpp", 0)])
@pytest.mark.parametrize("top_k", [0, -1])
def test_no_top_k_cut_is_each_engines_own_word_for_it(engine: str, no_cut: int, top_k: int) -> None:
    assert sampling(engine, body(engine, sampling=Sampling(top_k=top_k)))["top_k"] == no_cut


def test_unset_options_are_not_sent_so_the_engine_keeps_its_defaults() -> None:
    for engine in ENGINES:
        built = sampling(engine, body(engine))
        assert not {"temperature", "top_p", "top_k", "seed", "logit_bias", "stop_token_ids"} & set(built)
    assert "preserved_tokens" not in body("llamacpp")


EXTRAS = {"grammar": "root ::= \"hi\"", "mirostat": 2, "n_probs": 5, "min_tokens": 3, "guided_regex": "a+",
          "ebnf": "root ::= \"a\"", "ignore_eos": True, "no_such_field": 1, "prompt": "INJECTED",
          "stream": False, "text": "INJECTED"}


@pytest.mark.parametrize("engine, passed", [
    ("vllm", {"min_tokens": 3, "guided_regex": "a+", "ignore_eos": True}),
    ("sglang", {"ebnf": "root ::= \"a\"", "ignore_eos": True}),
    ("lmdeploy", {"ignore_eos": True}),
    ("llamacpp", {"grammar": "root ::= \"hi\"", "mirostat": 2, "n_probs": 5, "ignore_eos": True}),
])
def test_extras_pass_only_on_the_engines_allow_list(engine: str, passed: dict[str, Any]) -> None:
    plain, built = body(engine), body(engine, extra=EXTRAS)
    added = {k: v for k, v in sampling(engine, built).items() if k not in sampling(engine, plain)}
    assert added == passed
    assert built["text" if engine == "sglang" else "prompt"] == "PROMPT" and built["stream"] is True
    assert set(passed) <= set(EXTRA_FIELDS[engine])


def test_an_extra_never_replaces_what_lmparse_asked_for() -> None:
    built = body("llamacpp", logprobs=True, top_logprobs=3, extra={"n_probs": 9})
    assert built["n_probs"] == 3


def test_llamacpp_is_asked_to_render_each_familys_markers() -> None:
    """The markers these families' GGUFs store as CONTROL tokens, inner ones included."""
    for family, markers in [("llama3", ["<|python_tag|>"]),
                            ("deepseek-v31", ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                                              "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"]),
                            ("kimi-k2", ["<|tool_calls_section_begin|>", "<|tool_call_begin|>",
                                         "<|tool_call_argument_begin|>", "<|tool_call_end|>"]),
                            ("mistral", ["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]"]),
                            ("internlm", ["<|action_start|>", "<|plugin|>", "<|action_end|>"]),
                            ("gpt-oss", ["<|channel|>", "<|message|>", "<|call|>", "<|return|>"])]:
        preserved = preserved_tokens(get_family(family))
        assert set(markers) <= set(preserved), (family, preserved)
        built = llamacpp_body(request(), "P", BodyOptions(None, 10, preserved))
        assert built["preserved_tokens"] == list(preserved) and all(isinstance(t, str) for t in preserved)


TAG = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [],
                                            "at_least_one": True}}
STRUCTURAL_TAG = {"structural_tag": json.dumps(TAG)}  # what lmparse.constrain.constraint_for gives


def test_a_constraint_goes_where_each_engine_reads_it_over_a_reply_format() -> None:
    fmt = {"type": "json_schema", "schema": SCHEMA}
    tagged = body("vllm", constraint=STRUCTURAL_TAG, response_format=fmt)
    assert json.loads(tagged["structured_outputs"]["structural_tag"]) == TAG
    params = body("sglang", constraint=STRUCTURAL_TAG, response_format=fmt)["sampling_params"]
    assert json.loads(params["structural_tag"]) == TAG and "json_schema" not in params
    grammar = {"grammar": "root ::= \"<tool_call>\""}
    built = body("llamacpp", constraint=grammar, response_format=fmt, extra={"grammar": "root ::= \"x\""})
    assert built["grammar"] == grammar["grammar"] and "json_schema" not in built


@pytest.mark.parametrize("engine, constraint", [("lmdeploy", STRUCTURAL_TAG), ("llamacpp", STRUCTURAL_TAG),
                                                ("vllm", {"grammar": "root ::= \"a\""})])
def test_a_constraint_an_engine_cannot_take_is_a_400_not_dropped(engine: str, constraint: dict[str, Any]) -> None:
    with pytest.raises(RequestError, match=f"cannot be enforced on {engine}") as info:
        body(engine, constraint=constraint)
    assert info.value.status == 400
