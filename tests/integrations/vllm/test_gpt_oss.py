"""gpt-oss inside vLLM 0.33: what vLLM's serving layer does with a ``gpt_oss`` model, pinned.

``OpenAIServingChat.__init__`` passes ``is_harmony=(hf_config.model_type == "gpt_oss")`` to
``ParserManager.get_parser``; ``ParserManager._compose_parser`` then returns vLLM's own
``HarmonyParser`` whatever ``--tool-call-parser`` / ``--reasoning-parser`` name, and
``HarmonyParser.__init__`` refuses any class but vLLM's ``GptOssReasoningParser`` /
``GptOssToolParser``, whose parsing methods are stubs that raise. If a vLLM upgrade changes
either fact, these tests say so (and an ``lmparse-gpt-oss`` may then be worth registering).
"""

from __future__ import annotations

import os

import pytest

import lmparse.integrations.vllm  # noqa: F401  (registers lmparse-*)
from lmparse import create_parser
from lmparse.serve.tokenizer import testdata_dir as tokenizer_data

from . import harness

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}
REPLY = ("<|channel|>analysis<|message|>Let me check.<|end|><|start|>assistant<|channel|>final<|message|>Sure.<|end|>"
         "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
         '{"city": "SF"}<|call|>')


@pytest.fixture
def harmony_ids(monkeypatch):
    """REPLY as real o200k/Harmony token ids (openai-harmony over the test data's vocabulary)."""
    root = tokenizer_data()
    if root is None or not (root / "gpt-oss" / "o200k_base.tiktoken").is_file():
        pytest.skip("gpt-oss/o200k_base.tiktoken not in the tokenizer test data (run `make testdata`)")
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", os.fspath(root / "gpt-oss"))
    from vllm.entrypoints.openai.parser import harmony_utils

    monkeypatch.setattr(harmony_utils, "_harmony_encoding", None)
    return harmony_utils.get_encoding().encode(REPLY, allowed_special="all")


def test_a_gpt_oss_model_gets_vllms_harmony_parser_whatever_the_names():
    from vllm.parser import ParserManager
    from vllm.parser.harmony import HarmonyParser

    saved = (HarmonyParser.reasoning_parser_cls, HarmonyParser.tool_parser_cls, HarmonyParser.tool_strict_level)
    try:
        composed = ParserManager.get_parser(tool_parser_name="lmparse-qwen", reasoning_parser_name="lmparse-qwen3",
                                            enable_auto_tools=True, is_harmony=True)
        assert composed is HarmonyParser
        with pytest.raises(ValueError, match="Harmony requires GptOssReasoningParser"):
            composed(None)
        with pytest.raises(TypeError, match="cannot be used with the tokenizer"):  # `vllm serve` at startup
            ParserManager.get_parser(tool_parser_name="lmparse-qwen", reasoning_parser_name="lmparse-qwen3",
                                     enable_auto_tools=True, is_harmony=True, tokenizer=object())
    finally:
        HarmonyParser.reasoning_parser_cls, HarmonyParser.tool_parser_cls, HarmonyParser.tool_strict_level = saved


def test_harmony_parser_calls_no_tool_or_reasoning_parser_method(harmony_ids):
    # vLLM's GptOss parsers raise on every parsing call, and HarmonyParser still parses a reply
    # (its own openai-harmony StreamableParser over the token ids): vLLM calls none of them.
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.harmony import HarmonyParser
    from vllm.reasoning.gptoss_reasoning_parser import GptOssReasoningParser
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

    parser_cls = type("Harmony", (HarmonyParser,), {"reasoning_parser_cls": GptOssReasoningParser,
                                                    "tool_parser_cls": GptOssToolParser})
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Weather in SF?"}])
    with pytest.raises(NotImplementedError):
        parser_cls(None).reasoning_parser.extract_reasoning(REPLY, request)
    reasoning, content, calls = parser_cls(None).parse("", request, model_output_token_ids=harmony_ids)
    stream = parser_cls(None)
    chunks = [stream.parse_delta("", [token], request, finished=i == len(harmony_ids) - 1)
              for i, token in enumerate(harmony_ids)]
    folded = harness.fold_chunks([{"choices": [{"delta": c.model_dump(exclude_none=True)}]} for c in chunks if c])
    mine = create_parser(response_parser="gpt-oss").parse_complete(REPLY)
    want = (mine.content, mine.reasoning_content, [(c.function.name, c.function.arguments) for c in mine.tool_calls])
    assert (content, reasoning, [(c.name, c.arguments) for c in calls]) == want
    assert harness.outcome(folded) == harness.outcome({"content": want[0], "reasoning": want[1], "tool_calls": [
        {"function": {"name": n, "arguments": a}} for n, a in want[2]]})


@pytest.mark.parametrize("with_vocabulary", [False, True], ids=["text", "o200k-at-hand"])
def test_harmony_output_of_a_model_vllm_composes_like_any_other(monkeypatch, with_vocabulary):
    # model_type is not gpt_oss, so vLLM composes lmparse-gpt-oss like any other pair and calls
    # every method of it: lmparse's gpt-oss parser handles the whole reply. The model here has
    # Qwen3's vocabulary (Harmony's markers are several tokens each): its token ids are not
    # o200k's, so they are never read as such, even with the o200k vocabulary at hand.
    if with_vocabulary:
        root = tokenizer_data()
        if root is None:
            pytest.skip("no tokenizer test data")
        monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", os.fspath(root / "gpt-oss"))
    served = harness.serving("qwen", "lmparse-gpt-oss", "lmparse-gpt-oss")
    body = {"model": "m", "messages": [{"role": "user", "content": "Weather in SF?"}], "tools": [TOOL]}
    mine = create_parser(response_parser="gpt-oss", request=body).parse_complete(REPLY)
    want = harness.outcome({"content": mine.content, "reasoning": mine.reasoning_content,
                            "tool_calls": [tc.to_dict() for tc in mine.tool_calls]})
    assert want == ("Sure.", "Let me check.", [("get_weather", {"city": "SF"})])
    for stream, step in ((False, 0), (True, 1), (True, 5)):
        got = harness.chat(served, {**body, "stream": stream}, REPLY, step)
        assert harness.outcome(got) == want, (stream, step)
