"""Templates and tokenizers from the model: ``lmparse serve --engine X --model DIR`` reads a
Hugging Face model directory as transformers does, ``--chat-template FILE`` wins over it,
``--template-from-engine`` lets llama-server render (once per request), and a real engine
with no template at all is a startup error that names the flags.  The model directories
are built at run time from the tokenizer test data (tests/support/model_dir.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pytest.importorskip("jinja2")
tokenizers = pytest.importorskip("tokenizers")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from lmparse.serve.app import create_app, upstream_binding  # noqa: E402
from lmparse.serve.families import get_family, missing_parsers  # noqa: E402
from lmparse.serve.model_dir import load_model_dir  # noqa: E402
from lmparse.serve.openai import parse_request  # noqa: E402

from .support.model_dir import QWEN3_EOS_IDS, qwen3_model_dir, data_file  # noqa: E402
from .support.server import LiveServer  # noqa: E402
from .test_serve_upstream import TOOLS, FakeEngines, ThreadServer, check_request  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")

HI = [{"role": "user", "content": "hi"}]


def _config(model, **changes) -> None:
    path = model / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**config, **changes}), encoding="utf-8")


# ---- reading the directory -----------------------------------------------------------------------


def test_named_templates_give_default_and_tool_use_for_requests_with_tools(tmp_path):
    model = qwen3_model_dir(tmp_path, chat_template=[
        {"name": "default", "template": "DEFAULT {{ messages[0].content }}"},
        {"name": "tool_use", "template": "TOOL_USE {{ tools[0].function.name }} {{ messages[0].content }}"}])
    template = load_model_dir(model).template
    assert template.render(HI, None, None) == "DEFAULT hi"
    assert template.render(HI, TOOLS, None) == "TOOL_USE get_weather hi"


def test_chat_template_jinja_wins_over_tokenizer_config(tmp_path):
    model = qwen3_model_dir(tmp_path, chat_template="FROM CONFIG", jinja="FROM JINJA {{ messages[0].content }}")
    assert load_model_dir(model).template.render(HI, None, None) == "FROM JINJA hi"


def test_bos_and_eos_of_tokenizer_config_reach_the_template(tmp_path):
    model = qwen3_model_dir(tmp_path, chat_template="{{ bos_token }}[{{ messages[0].content }}]{{ eos_token }}")
    _config(model, bos_token={"content": "<|endoftext|>", "special": True}, eos_token="<|im_end|>")
    files = load_model_dir(model)
    assert files.template.render(HI, None, None) == "<|endoftext|>[hi]<|im_end|>"
    assert (files.bos, files.eos) == ("<|endoftext|>", "<|im_end|>")


@pytest.mark.parametrize("eos_token_id, ids", [(151645, (151645,)), (QWEN3_EOS_IDS, tuple(QWEN3_EOS_IDS)),
                                                (None, (151645,))])  # None: the EOS token's id
def test_generation_config_eos_ids_are_the_end_of_turn_tokens(tmp_path, eos_token_id, ids):
    files = load_model_dir(qwen3_model_dir(tmp_path, eos_token_id=eos_token_id))
    assert files.stop_token_ids == ids
    assert files.stop_texts == tuple({151645: "<|im_end|>", 151643: "<|endoftext|>"}[i] for i in ids)


def test_the_models_tokenizer_counts_and_its_stop_ids_reach_the_binding(tmp_path):
    model = qwen3_model_dir(tmp_path)
    binding = upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model)
    real = tokenizers.Tokenizer.from_file(str(model / "tokenizer.json"))
    text = "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>"
    assert binding.engine.tokenizer.count(text) == len(real.encode(text, add_special_tokens=False).ids) == 11
    assert binding.stop_token_ids == tuple(QWEN3_EOS_IDS)


def test_chat_template_file_wins_over_the_models(tmp_path):
    model = qwen3_model_dir(tmp_path / "model", chat_template="MODEL'S")
    file = tmp_path / "mine.jinja"
    file.write_text("MINE {{ messages[0].content }}", encoding="utf-8")
    binding = upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model,
                               chat_template=str(file))
    request, _ = parse_request({"messages": HI}, "qwen3", "reasoning_content")
    assert binding.engine.prompt(request) == "MINE hi"


# ---- what a real engine without a template gets: a startup error naming the flags ----------------


@pytest.mark.parametrize("engine, flags", [("vllm", ["--model DIR", "--chat-template FILE"]),
                                           ("llamacpp", ["--model DIR", "--chat-template FILE",
                                                         "--template-from-engine"])])
def test_an_engine_without_a_template_is_refused_naming_the_flags(engine, flags):
    with pytest.raises(ValueError) as refused:
        upstream_binding(get_family("qwen3"), engine, "http://unused")
    for flag in flags:
        assert flag in str(refused.value)


def test_the_cli_refuses_to_start_without_a_template():
    done = subprocess.run([sys.executable, "-m", "lmparse.cli", "serve", "--quiet", "--engine", "sglang",
                           "--upstream", "http://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--engine sglang needs the model's chat template: pass --model DIR" in done.stderr


def test_a_model_without_a_template_and_engines_that_cannot_render_are_refused(tmp_path):
    model = qwen3_model_dir(tmp_path)
    _config(model, chat_template=None)
    with pytest.raises(ValueError, match="has no chat template .*pass --chat-template FILE"):
        upstream_binding(get_family("qwen3"), "vllm", "http://unused", model_dir=model)
    with pytest.raises(ValueError, match="--template-from-engine needs --engine llamacpp"):
        upstream_binding(get_family("qwen3"), "vllm", "http://unused", template_from_engine=True)


# ---- end to end: `lmparse serve --engine vllm --model DIR` --------------------------------------


HISTORY = [{"role": "user", "content": "What is the weather in Paris right now?"},
           {"role": "assistant", "content": None, "tool_calls": [  # the reply lmparse gave last turn
               {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
           {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 24 degrees"},
           {"role": "user", "content": "And tomorrow?"}]


def test_serve_with_a_model_directory_renders_and_counts_with_the_model(tmp_path):
    """The fake vLLM gets the rendering of the model's own template (Qwen3's tokenizer_config
    one, not the test data's mirror), and prompts are counted with its tokenizer."""
    source = json.loads(data_file("qwen3/tokenizer_config.json").read_text(encoding="utf-8"))["chat_template"]
    model = qwen3_model_dir(tmp_path, chat_template=source)
    fakes = FakeEngines()
    upstream = ThreadServer(fakes.app())
    live = LiveServer(["--family", "qwen3", "--engine", "vllm", "--upstream", upstream.url + "/vllm",
                       "--model", str(model)])
    try:
        client = openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0)
        completion = client.chat.completions.create(model="qwen3", messages=HISTORY, tools=TOOLS)
        assert completion.choices[0].message.tool_calls[0].function.name == "get_weather"
        body = check_request(fakes, "vllm")
        request, _ = parse_request({"messages": HISTORY, "tools": TOOLS}, "qwen3", "reasoning_content")
        expected = load_model_dir(model).template.render(request.messages, request.tools, None)
        assert body["prompt"] == expected
        assert "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>" in expected
        counted = anthropic.Anthropic(base_url=live.url, api_key="unused", max_retries=0).messages.count_tokens(
            model="qwen3", messages=[{"role": "user", "content": "What is the weather in Paris right now?"}])
        real = tokenizers.Tokenizer.from_file(str(model / "tokenizer.json"))
        prompt = "<|im_start|>user\nWhat is the weather in Paris right now?<|im_end|>\n<|im_start|>assistant\n"
        assert counted.input_tokens == len(real.encode(prompt, add_special_tokens=False).ids)
    finally:
        live.stop()
        upstream.stop()


# ---- --template-from-engine: llama-server renders ------------------------------------------------


ENGINE_PROMPT = "<|im_start|>user\nrendered by the engine<|im_end|>\n<|im_start|>assistant\n"


class RenderingLlamaServer(FakeEngines):
    """The llama.cpp fake plus ``POST /llamacpp/apply-template``: a fixed prompt, a 400 for a
    message it rejects, a 500 when told to fail."""

    def __init__(self) -> None:
        super().__init__()
        self.renders: list[dict] = []

    async def apply_template(self, request: Request) -> Response:
        body = await request.json()
        self.renders.append(body)
        text = body["messages"][-1]["content"]
        if text == "reject me":
            return JSONResponse({"error": {"code": 400, "message": "Unsupported role: robot",
                                           "type": "invalid_request_error"}}, status_code=400)
        if text == "fail":
            return JSONResponse({"error": {"code": 500, "message": "boom"}}, status_code=500)
        return JSONResponse({"prompt": ENGINE_PROMPT})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/llamacpp/apply-template", self.apply_template, methods=["POST"]),
                                 Route("/{path:path}", self.serve, methods=["POST"])])


def test_template_from_engine_renders_once_per_request_and_sends_that_prompt(tmp_path):
    fakes = RenderingLlamaServer()
    upstream = ThreadServer(fakes.app())
    binding = upstream_binding(get_family("qwen3"), "llamacpp", upstream.url + "/llamacpp", template_from_engine=True,
                               model_dir=qwen3_model_dir(tmp_path))
    gateway = ThreadServer(create_app([binding]))
    try:
        client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
        completion = client.chat.completions.create(model="qwen3", messages=HISTORY, tools=TOOLS, stream=False,
                                                    extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        assert completion.choices[0].message.tool_calls[0].function.name == "get_weather"
        [render] = fakes.renders  # once per request
        assert render["tools"] == TOOLS and render["chat_template_kwargs"] == {"enable_thinking": False}
        assert render["messages"][1] == {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
        [(path, body)] = fakes.requests["llamacpp"]
        assert path == "/completion" and body["prompt"] == ENGINE_PROMPT
        assert completion.usage.prompt_tokens > 0
    finally:
        gateway.stop()
        upstream.stop()


def test_the_engines_template_refusing_is_a_400_and_its_failure_a_502():
    fakes = RenderingLlamaServer()
    upstream = ThreadServer(fakes.app())
    binding = upstream_binding(get_family("qwen3"), "llamacpp", upstream.url + "/llamacpp", template_from_engine=True)
    gateway = ThreadServer(create_app([binding]))
    try:
        def post(text: str) -> httpx.Response:
            return httpx.post(gateway.url + "/v1/chat/completions", timeout=30,
                              json={"model": "qwen3", "messages": [{"role": "user", "content": text}]})
        refused = post("reject me")
        assert refused.status_code == 400 and "Unsupported role: robot" in refused.json()["error"]["message"]
        failed = post("fail")
        assert failed.status_code == 502 and failed.json()["error"]["type"] == "server_error"
        assert "llamacpp" not in fakes.requests  # nothing was generated
    finally:
        gateway.stop()
        upstream.stop()
