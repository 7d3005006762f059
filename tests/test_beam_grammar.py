"""Beam's generation grammar: a forced tool_choice constrained by the model's own response_template.

The expected replies below are written by hand from each template's markers (the Beam-style
metadata of tests/support/response_templates.py), not read off the constraint: the structural
tag's begin + arguments + end must spell them, the template parser must read them back as the
call, and, when ``xgrammar`` is installed, the compiled structural tag and GBNF must accept them
and refuse a call to an undeclared tool.
"""

from __future__ import annotations

import gzip
import json
from typing import Any, NamedTuple

import pytest

from lmparse.constrain import Unconstrainable, template_constraint
from lmparse.constrain.literals import literal
from lmparse.request import ParserRequest, normalize_request
from lmparse.response.template import ResponseTemplate
from lmparse.response.template_syntax import template_reasoning

from .support.response_templates import BEAM_DELIMITED, BEAM_GEMMA, BEAM_XML, QWEN3, QWEN3_5

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
           "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
ARGUMENTS = {"city": "Paris", "days": 3}


class Row(NamedTuple):
    template: dict[str, Any]
    mode: str
    prompt: str  # the generation prompt, reasoning not opened
    thought: str  # a reasoning region, as the model opens and closes it
    arguments: str  # ARGUMENTS as the template writes them
    call: str  # the whole call, as the template writes it


ROWS = {
    "beam-gemma": Row(BEAM_GEMMA, "beam", "<|turn>user\nhi<turn|>\n<|turn>model\n", "<|channel>thought\nplan<channel|>",
                      '{city:<|"|>Paris<|"|>,days:3}',
                      '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>'),
    "beam-json-object": Row(BEAM_DELIMITED, "beam", "<assistant>", "<think>plan</think>", '{"city": "Paris", "days": 3}',
                            '<call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</call>'),
    "beam-xml": Row(BEAM_XML, "beam", "<|im_start|>assistant\n", "<think>plan</think>",
                    "<parameter=city>\nParis\n</parameter><parameter=days>\n3\n</parameter>",
                    "<tool_call>\n<function=get_weather><parameter=city>\nParis\n</parameter><parameter=days>\n3\n"
                    "</parameter></function>\n</tool_call>"),
    "hf-qwen3": Row(QWEN3, "hf", "<|im_start|>assistant\n", "<think>plan</think>", '{"city": "Paris", "days": 3}',
                    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'),
    "hf-qwen3.5": Row(QWEN3_5, "hf", "<|im_start|>assistant\n", "<think>plan</think>",
                      "<parameter=city>\nParis\n</parameter><parameter=days>\n3\n</parameter>",
                      "<tool_call>\n<function=get_weather><parameter=city>\nParis\n</parameter><parameter=days>\n3\n"
                      "</parameter></function>\n</tool_call>"),
}


def _request(tool_choice: Any = "required", parallel: bool = True, thinking: bool | None = None,
             tools: list[dict] = TOOLS) -> ParserRequest:
    body: dict[str, Any] = {"tools": tools, "tool_choice": tool_choice, "parallel_tool_calls": parallel}
    if thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": thinking}
    return normalize_request(body)


def _tag(row: Row, request: ParserRequest | None = None, prompt: str | None = None) -> dict[str, Any]:
    template = ResponseTemplate(row.template, row.mode)
    given = template_constraint(template, "vllm", request or _request(), prompt or row.prompt)
    assert given is not None
    return json.loads(given["structural_tag"])


def _calls(tag: dict[str, Any]) -> dict[str, Any]:
    fmt = tag["format"]
    return fmt["elements"][-1] if fmt["type"] == "sequence" else fmt


def _parsed(row: Row, reply: str, prompt: str | None = None) -> tuple[Any, ...]:
    parser = ResponseTemplate(row.template, row.mode).parser(_request(), prompt or row.prompt)
    message = parser.parse_complete(reply)
    return message.reasoning_content, [(c.function.name, json.loads(c.function.arguments))
                                       for c in message.tool_calls or ()]


@pytest.mark.parametrize("name", list(ROWS))
def test_the_tag_frames_a_call_as_the_template_writes_it_and_the_parser_reads_it_back(name: str) -> None:
    row = ROWS[name]
    (tag,) = _calls(_tag(row))["tags"]
    assert tag["begin"] + row.arguments + tag["end"] == row.call
    assert _parsed(row, row.call) == (None, [("get_weather", ARGUMENTS)])
    assert _parsed(row, row.thought + row.call) == ("plan", [("get_weather", ARGUMENTS)])


@pytest.mark.parametrize("name", list(ROWS))
def test_the_reasoning_region_is_optional_before_the_calls_and_required_once_the_prompt_opened_it(name: str) -> None:
    row = ROWS[name]
    opener, _, rest = row.thought.partition("plan")
    outside = template_reasoning(ResponseTemplate(row.template, row.mode), _request(), row.prompt)
    assert outside == (opener, rest, False)
    inside = template_reasoning(ResponseTemplate(row.template, row.mode), _request(), row.prompt + opener)
    assert inside == (opener, rest, True)
    thought = _tag(row, prompt=row.prompt + opener)["format"]["elements"][0]
    assert thought == {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": rest}
    assert _parsed(row, "plan" + rest + row.call, row.prompt + opener) == ("plan", [("get_weather", ARGUMENTS)])


def test_beam_with_thinking_off_allows_no_reasoning_region_whatever_the_prompt() -> None:
    row = ROWS["beam-json-object"]
    template = ResponseTemplate(row.template, row.mode)
    assert template_reasoning(template, _request(thinking=False), row.prompt + "<think>") is None
    assert _tag(row, _request(thinking=False))["format"]["type"] == "tags_with_separator"
    # The plain mode reads the prompt: a region the prompt opened must still be closed.
    plain = ResponseTemplate(QWEN3)
    assert template_reasoning(plain, _request(thinking=False), "<|im_start|>assistant\n<think>\n") == (
        "<think>", "</think>", True)


def test_a_region_that_does_not_repeat_allows_one_call_and_one_that_repeats_several() -> None:
    assert _calls(_tag(ROWS["beam-json-object"]))["stop_after_first"] is True  # BEAM_DELIMITED: no repeats
    assert _calls(_tag(ROWS["beam-gemma"]))["stop_after_first"] is False
    assert _calls(_tag(ROWS["beam-gemma"], _request(parallel=False)))["stop_after_first"] is True


def test_beam_writes_arguments_in_name_order_and_the_plain_mode_in_declared_order() -> None:
    schema = {"type": "object", "properties": {"unit": {"type": "string"}, "city": {"type": "object", "properties": {
        "zip": {"type": "string"}, "name": {"type": "string"}}}}}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]
    beam = _calls(_tag(ROWS["beam-json-object"], _request(tools=tools)))["tags"][0]["content"]["json_schema"]
    assert list(beam["properties"]) == ["city", "unit"] and list(beam["properties"]["city"]["properties"]) == [
        "name", "zip"]
    plain = _calls(_tag(ROWS["hf-qwen3"], _request(tools=tools)))["tags"][0]["content"]["json_schema"]
    assert list(plain["properties"]) == ["unit", "city"]


def test_llama_cpp_gets_a_grammar_spelling_the_same_frame() -> None:
    row = ROWS["beam-xml"]
    grammar = template_constraint(ResponseTemplate(row.template, row.mode), "llamacpp", _request())["grammar"]
    assert literal("<tool_call>\n<function=get_weather>") in grammar and literal("</function>\n</tool_call>") in grammar


def test_no_constraint_when_the_choice_need_not_call() -> None:
    template = ResponseTemplate(BEAM_GEMMA, "beam")
    assert template_constraint(template, "vllm", _request("auto")) is None
    assert template_constraint(template, "vllm", _request("none")) is None


@pytest.mark.parametrize(("template", "mode", "tools", "message"), [
    ({"start_anchor": "<a>", "fields": {"tool_calls": {"open": "<calls>", "close": "</calls>",
                                                       "content": "python-call-list"}}},
     "hf", TOOLS, "python-call-list' and transform None has no call syntax"),
    ({**BEAM_GEMMA, "fields": {**BEAM_GEMMA["fields"], "tool_calls": {
        **BEAM_GEMMA["fields"]["tool_calls"], "content_args": {"unquoted_keys": True, "string_delims": [["«", "»"]]}}}},
     "beam", TOOLS, r"string_delims \[\['«', '»'\]\] have no grammar here"),
    (BEAM_GEMMA, "beam", [{"type": "function", "function": {"name": "get-weather"}}],
     r"cannot write the tool name\(s\) \['get-weather'\] \(names match \\w\+\)"),
])
def test_a_region_that_cannot_be_described_is_unconstrainable_saying_why(template: dict, mode: str, tools: list,
                                                                         message: str) -> None:
    with pytest.raises(Unconstrainable, match=message):
        template_constraint(ResponseTemplate(template, mode), "vllm", _request(tools=tools))
    with pytest.raises(Unconstrainable, match="lmdeploy engine has no way"):
        template_constraint(ResponseTemplate(BEAM_GEMMA, "beam"), "lmdeploy", _request())


# ---- compiled by XGrammar (skipped without the extra) -------------------------------------------


@pytest.fixture(scope="module")
def compiler() -> Any:
    xgr = pytest.importorskip("xgrammar", reason="the xgrammar extra is not installed")
    from .support.tokenizers import testdata_dir

    root = testdata_dir()
    path = root / "qwen3" / "tokenizer.json.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip("tokenizer qwen3: no test data (run `make testdata` or set LMPARSE_TESTDATA)")
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode()))
    return xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(fast, vocab_size=len(fast),
                                                                  stop_token_ids=[151645]))


def _accepts(compiled: Any, text: str) -> bool:
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(compiled)
    return matcher.accept_string(text) and matcher.accept_token(151645)


def _compiled(compiler: Any, row: Row, kind: str, prompt: str | None = None) -> Any:
    engine = "vllm" if kind == "structural_tag" else "llamacpp"
    given = template_constraint(ResponseTemplate(row.template, row.mode), engine, _request(), prompt or row.prompt)
    assert given is not None
    if kind == "structural_tag":
        return compiler.compile_structural_tag(given["structural_tag"])
    return compiler.compile_grammar(given["grammar"])


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
@pytest.mark.parametrize("name", list(ROWS))
def test_the_compiled_constraint_accepts_the_templates_call_and_refuses_an_undeclared_tool(
        compiler: Any, kind: str, name: str) -> None:
    row = ROWS[name]
    compiled = _compiled(compiler, row, kind)
    assert _accepts(compiled, row.call)
    assert _accepts(compiled, row.thought + row.call)
    assert not _accepts(compiled, row.call.replace("get_weather", "get_time"))
    assert not _accepts(compiled, "It is sunny in Paris.")
    assert not _accepts(compiled, row.call.replace(row.arguments, row.arguments.replace("Paris", "")
                                                    .replace("city", "town")))  # the required city is missing
    inside = _compiled(compiler, row, kind, row.prompt + row.thought.partition("plan")[0])
    closer = row.thought.partition("plan")[2]
    assert _accepts(inside, "plan" + closer + row.call)
    assert not _accepts(inside, row.call)


# ---- through the server: lmparse serve --family beam --engine vllm --model DIR ------------------


def _serve(tmp_path: Any, template: dict[str, Any], reply: str, engine: str = "vllm") -> tuple[Any, list[dict]]:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("jinja2")
    from lmparse.serve.app import create_app, upstream_binding
    from lmparse.serve.families import get_family

    from .support.model_dir import qwen3_model_dir
    from .support.upstream import TOKENIZER, recorded

    model = qwen3_model_dir(tmp_path)
    config = model / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text(encoding="utf-8")), "response_template": template}),
                      encoding="utf-8")
    bodies: list[dict] = []

    def handle(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        pieces = [(piece, token_id) for piece, token_id, _ in TOKENIZER.steps(reply)]
        return httpx.Response(200, content=recorded(engine, pieces), headers={"content-type": "text/event-stream"})

    binding = upstream_binding(get_family("beam"), engine, "http://engine", transport=httpx.MockTransport(handle),
                               model_dir=model)
    return create_app([binding]), bodies


def _post(app: Any, tool_choice: Any, tools: list[dict] = TOOLS) -> Any:
    import asyncio

    import httpx

    async def call() -> Any:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/v1/chat/completions", json={
                "model": "beam", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": tools,
                "tool_choice": tool_choice})

    return asyncio.run(call())


def test_family_beam_sends_vllm_the_templates_structural_tag_for_required(tmp_path: Any) -> None:
    row = ROWS["beam-xml"]
    app, bodies = _serve(tmp_path, row.template, row.thought + row.call)
    r = _post(app, "required")
    assert r.status_code == 200, r.text
    message = r.json()["choices"][0]["message"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] == [
        ("get_weather", ARGUMENTS)]
    (body,) = bodies
    tag = json.loads(body["structured_outputs"]["structural_tag"])
    thought, _, calls = tag["format"]["elements"]
    assert thought["content"]["begin"] == "<think>" and thought["content"]["end"] == "</think>"
    assert [(t["begin"], t["end"]) for t in calls["tags"]] == [("<tool_call>\n<function=get_weather>",
                                                              "</function>\n</tool_call>")]


def test_family_beam_sends_llama_cpp_the_templates_grammar_for_a_named_tool(tmp_path: Any) -> None:
    row = ROWS["beam-xml"]
    app, bodies = _serve(tmp_path, row.template, row.call, engine="llamacpp")
    r = _post(app, {"type": "function", "function": {"name": "get_weather"}})
    assert r.status_code == 200, r.text
    (body,) = bodies
    assert literal("<tool_call>\n<function=get_weather>") in body["grammar"]


def test_family_beam_answers_400_on_tool_choice_when_the_template_cannot_write_the_call(tmp_path: Any) -> None:
    app, bodies = _serve(tmp_path, BEAM_GEMMA, ROWS["beam-gemma"].call)
    r = _post(app, "required", [{"type": "function", "function": {"name": "get-weather"}}])
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["param"] == "tool_choice" and "cannot write the tool name(s) ['get-weather']" in error["message"]
    assert bodies == []


def test_the_plain_response_template_mode_is_constrained_the_same_way_on_sglang() -> None:
    from lmparse.serve.engines.base import GenerationRequest
    from lmparse.serve.families import get_family
    from lmparse.serve.tool_choice import enforce

    given = GenerationRequest([{"role": "user", "content": "hi"}], TOOLS, _request(parallel=False))
    template = ResponseTemplate(QWEN3_5)
    request, check = enforce(given, get_family("qwen3.5"), "sglang", template, lambda r: "<|im_start|>assistant\n")
    assert check is not None and request.constraint is not None
    tag = json.loads(request.constraint["structural_tag"])
    assert tag == json.loads(template_constraint(template, "sglang", given.parser_request,
                                                 "<|im_start|>assistant\n")["structural_tag"])
    assert _calls(tag)["stop_after_first"] is True
