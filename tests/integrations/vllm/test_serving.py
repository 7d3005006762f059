"""vLLM's chat-completion serving layer (``OpenAIServingChat.create_chat_completion``: the composed
``DelegatingParser``, ``ChatStreamProcessor``, SSE serialization) driven on CPU with the lmparse
plugin, a real tokenizer and chat template per family and a stand-in engine client: what comes out
must reassemble to exactly lmparse's own ``parse_complete`` of the reply, stream and non-stream,
with one- and multi-token deltas."""

from __future__ import annotations

import json

import pytest

import lmparse.integrations.vllm  # noqa: F401  (registers lmparse-*, as --tool-parser-plugin does)
from lmparse.constrain import structural_tag_for
from lmparse.integrations.vllm.session import Session

from . import harness
from .. import compat
from .cases import BY_FAMILY, CALLS, CASES, ENGINE, NEW_CASES, REPLIES, TOOLS, body, expected, rows, run, served

def test_every_plugin_cell_of_the_table_is_same():
    # Every reply (the clean ones and the ones in-tree parsers trip on), every delivery: what
    # vLLM's serving layer emits through lmparse-* reassembles to lmparse's own parse_complete.
    assert len(REPLIES) >= 5 and all(BY_FAMILY[r.family] for r in REPLIES)
    for case in CASES:
        assert expected(case)[2] == CALLS and expected(case)[1]  # reasoning and both calls
    for case in NEW_CASES:  # the late-2026 families: both calls, reasoning where the family has it
        assert expected(case)[2] == CALLS and bool(expected(case)[1]) is bool(case.lmparse[1]), case.family
    assert [(row.reply, row.delivery) for row in rows() if row.plugin != "same"] == []


def test_the_compatibility_rows_in_the_docs_are_what_the_tests_produce():
    compat.check_or_update(ENGINE, rows())


def test_only_deltas_reach_lmparse(monkeypatch):
    # vLLM passes current_text with every delta; the plugin feeds each character once.
    fed: list[str] = []
    feed = Session.feed

    def spy(self, text, token_ids=None, final=False):
        fed.append(text)
        return feed(self, text, token_ids, final)

    monkeypatch.setattr(Session, "feed", spy)
    case = BY_FAMILY["qwen3coder"]
    assert run(case, True, True, 1) == expected(case)
    assert "".join(fed) == case.reply and len(fed) > 50


def test_a_call_nested_in_reasoning_survives_the_shared_parser():
    # Tool and reasoning parser share one lmparse parser per request: a block inside <think>
    # is a call, not reasoning text and not lost at vLLM's reasoning/tool hand-off.
    case = BY_FAMILY["qwen"]
    reply = ('<think>\nI will look it up.<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n'
             "</tool_call>\n</think>\n\nDone.")
    want = expected(case, reply=reply)
    assert want[2] == [("get_weather", {"city": "SF"})]
    for stream, step in ((False, 0), (True, 1), (True, 7)):
        got = harness.chat(served("qwen", True), body(case, stream), reply, step)
        assert harness.outcome(got) == want, (stream, step)


@pytest.mark.parametrize("family,ended", [("qwen", False), ("qwen3coder", False), ("glm47", False),
                                          ("kimi-k2", False)])
def test_is_reasoning_end_of_the_prompt_reaches_the_engine(family, ended):
    # vLLM hands is_reasoning_end(prompt) to the engine core, where it gates grammar enforcement.
    case = BY_FAMILY[family]
    harness.chat(served(family, True), body(case, False), case.reply)
    assert served(family, True).engine.seen["reasoning_ended"] is ended


def test_a_prompt_that_closes_reasoning_starts_the_reply_in_content():
    # DeepSeek-V3.2 without thinking renders "<think></think>": reasoning is over before the reply.
    case = BY_FAMILY["deepseek-v32"]
    request = body(case, True)
    request.pop("chat_template_kwargs")
    reply = "Sure.\n\n<｜DSML｜function_calls>\n" + case.reply.split("<｜DSML｜function_calls>\n")[1]
    for stream in (False, True):
        got = harness.chat(served("deepseek-v32", True), {**request, "stream": stream}, reply, 3)
        assert harness.outcome(got) == expected(case, request, reply)
    assert expected(case, request, reply)[1:] == (None, CALLS)
    assert served("deepseek-v32", True).engine.seen["reasoning_ended"] is True


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_forced_tool_choice_is_lmparse_structural_tag(choice):
    # supports_required_and_named is False for a dialect with a call syntax: vLLM keeps parsing
    # the model's own syntax, and generation is constrained by lmparse's structural tag for it.
    case = BY_FAMILY["qwen3coder"]
    request = {**body(case, True), "tool_choice": choice}
    got = harness.chat(served("qwen3coder", True), request, case.reply, 2)
    assert harness.outcome(got) == expected(case)
    params = served("qwen3coder", True).engine.seen["sampling_params"]
    assert params.skip_special_tokens is False
    assert json.loads(params.structured_outputs.structural_tag) == structural_tag_for(
        "qwen3coder", TOOLS, choice)


def test_malformed_output_never_raises():
    case = BY_FAMILY["glm47"]
    for reply in ("<tool_call>get_weather<arg_key>city</arg_key><arg_value>S", "</think></think><tool_call>",
                  "<tool_call><tool_call></tool_call>\x00\ufffd"):
        for stream, step in ((False, 0), (True, 1), (True, 4)):
            got = harness.chat(served("glm47", True), body(case, stream), reply, step)
            assert isinstance(got, dict)


@pytest.mark.parametrize("tool,reasoning", [("lmparse-qwen", "qwen3"), ("hermes", "lmparse-qwen3"),
                                            ("lmparse-qwen", None)])
def test_an_lmparse_parser_beside_an_in_tree_one(tool, reasoning):
    # Unshared: each lmparse class runs its own parser over the text vLLM hands it.
    case = BY_FAMILY["qwen"]
    chat = harness.serving("qwen", tool, reasoning)
    reply = case.reply if reasoning else case.reply.split("</think>")[1]
    want = expected(case, reply=reply, names=None if reasoning else ("qwen", None))
    for stream, step in ((False, 0), (True, 1), (True, 5)):
        got = harness.outcome(harness.chat(chat, body(case, stream), reply, step))
        if not tool.startswith("lmparse-"):
            # vLLM's hermes owns the content: it keeps the newline Qwen's template writes before
            # a call, which lmparse counts as the call's (docs/architecture.md, rules every dialect keeps).
            got, want = (got[0].rstrip("\n"), *got[1:]), (want[0].rstrip("\n"), *want[1:])
        assert got == want, (stream, step)


def test_count_reasoning_tokens_counts_the_tokens_between_the_tags():
    from vllm.reasoning import ReasoningParserManager

    tokenizer = served("qwen", True).engine.renderer.tokenizer
    parser = ReasoningParserManager.get_reasoning_parser("lmparse-qwen3")(tokenizer, chat_template_kwargs={})
    inner = tokenizer.encode("\nLet me check.\n", add_special_tokens=False)
    ids = tokenizer.encode("<think>\nLet me check.\n</think>\n\nSure.", add_special_tokens=False)
    assert parser.count_reasoning_tokens(ids) == len(inner)
    assert parser.extract_content_ids(ids) == tokenizer.encode("\n\nSure.", add_special_tokens=False)
    end = ids.index(parser.end_ids[0]) + 1  # just after </think>
    assert parser.is_reasoning_end_streaming(ids[:end], ids[end - 2:end]) is True
    assert parser.is_reasoning_end_streaming(ids, ids[end:]) is False
    assert parser.is_reasoning_end_streaming(ids[:end - 1], ids[end - 3:end - 1]) is False


TIME = {"type": "function", "function": {"name": "get_time", "description": "Time in a city",
                                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


@pytest.mark.parametrize("choice", ["none", {"type": "function", "function": {"name": "get_weather"}}],
                         ids=["none", "named"])
def test_the_shared_stream_honours_the_requests_tool_choice(choice):
    # Tool and reasoning parser both lmparse's: the one shared parser must parse with the
    # request's tool_choice from the first reasoning delta on (none: markup stays content;
    # named: a call to another tool is not a call), as lmparse itself does.
    case = BY_FAMILY["qwen"]
    reply = case.reply.replace('"get_weather", "arguments": {"city": "NY"}', '"get_time", "arguments": {"city": "NY"}')
    request = {**body(case, True), "tools": [*TOOLS, TIME], "tool_choice": choice}
    want = expected(case, {**request, "stream": False}, reply)
    auto = expected(case, {**request, "tool_choice": "auto"}, reply)
    assert want != auto  # the choice changes lmparse's own answer
    for stream, step in ((False, 0), (True, 1), (True, 5)):
        got = harness.chat(served("qwen", True), {**request, "stream": stream}, reply, step)
        assert harness.outcome(got) == want, (stream, step)


def test_each_composed_vllm_parser_links_its_own_two_lmparse_parsers():
    # vLLM 0.33 gives neither parser a reference to the other (the tool parser is built with
    # (tokenizer, tools) only); the link is made inside the composed Parser's __init__, once per
    # Parser, and never for a tool parser built anywhere else.
    from vllm.parser import ParserManager
    from vllm.parser.engine.adapters import ParserEngineToolAdapter
    from vllm.tool_parsers import ToolParserManager

    tokenizer = served("qwen", True).engine.renderer.tokenizer
    composed = ParserManager.get_parser(tool_parser_name="lmparse-qwen", reasoning_parser_name="lmparse-qwen3",
                                        enable_auto_tools=True)
    assert not issubclass(composed.tool_parser_cls, ParserEngineToolAdapter)
    first, second = (composed(tokenizer, TOOLS, chat_template_kwargs={}) for _ in range(2))
    assert first.tool_parser.link is first.reasoning_parser.link is not None
    assert second.tool_parser.link is not first.tool_parser.link
    alone = ToolParserManager.get_tool_parser("lmparse-qwen")(tokenizer, TOOLS)
    assert not alone.shared
