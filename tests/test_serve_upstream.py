"""`lmparse serve` in front of a real engine: vLLM, SGLang, LMDeploy and llama.cpp, each
faked in-process (an ``httpx.MockTransport`` under the upstream client) by the recorded
event lines of ``test_upstream_decoders``, delivered in seeded random pieces; the CLI test
runs the same fake as a real HTTP server.

Checked: the request each engine receives (special tokens kept, token ids asked for, the
prompt rendered by the Qwen3 chat template), the reply the official openai SDK
accumulates (reasoning, the call's name and arguments, finish_reason tool_calls), an
upstream failure as a 502 in each API's error shape (and as the stream's error event
mid-stream), and a client that leaves closing the upstream stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import time
from typing import Any
from collections.abc import AsyncIterator, Iterator

import pytest

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from lmparse.serve.app import ModelBinding, create_app, upstream_binding  # noqa: E402
from lmparse.serve.engines.upstream import UpstreamEngine  # noqa: E402
from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.model_dir import qwen3_model_dir  # noqa: E402
from .support.server import LiveServer, free_port  # noqa: E402
from .support.upstream import (CACHED, ENGINE_OF, ENGINES, EOS_IN_IDS, EOS_TEXT, OVERFLOW_REASON,  # noqa: E402
                               PROMPT_IDS, REASONING, REFUSALS, recorded, refused, sse, steps)

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")

USER_TEXT = "What is the weather in Paris right now?"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]
BROKEN = {"error": {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}}


# ---- the fake engines --------------------------------------------------------------------------


class _Body(httpx.AsyncByteStream):
    """A streamed response body whose ``aclose`` closes its source, as a socket's would."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks

    async def aclose(self) -> None:
        await self._chunks.aclose()


class FakeEngines:
    """One fake, one path prefix per kind: ``/vllm/v1/completions``, ``/sglang/generate``...;
    ``transport`` serves it in-process, ``app`` over HTTP."""

    def __init__(self) -> None:
        self.pieces = steps()
        self.requests: dict[str, list[tuple[str, dict]]] = {}
        self.slow_closed = threading.Event()
        self.slow_sent = 0
        self.transport = httpx.MockTransport(self.handle)

    def answer(self, path: str, body: dict) -> AsyncIterator[bytes] | tuple[int, bytes]:
        """The body's bytes for a request, or an error's status and JSON body (the broken
        engine's HTTP 500, an engine's refusal of an overlong prompt); noted in ``requests``."""
        kind, _, rest = path.strip("/").partition("/")
        self.requests.setdefault(kind, []).append(("/" + rest, body))
        if kind == "broken":
            return 500, json.dumps(BROKEN).encode()
        if kind.startswith("overflow-"):
            status, data = refused(ENGINE_OF[kind])
            return (status, data) if status != 200 else self._reads(data, kind)
        return self.slow() if kind == "slow" else self._reads(recorded(kind, self.pieces), kind)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        chunks = self.answer(request.url.path, json.loads(request.content))
        if isinstance(chunks, tuple):
            return httpx.Response(chunks[0], content=chunks[1], headers={"content-type": "application/json"})
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Body(chunks))

    async def serve(self, request: Request) -> Response:
        chunks = self.answer(request.url.path, await request.json())
        if isinstance(chunks, tuple):
            return Response(chunks[1], status_code=chunks[0], media_type="application/json")
        return StreamingResponse(chunks, media_type="text/event-stream")

    @staticmethod
    async def _reads(data: bytes, seed: str) -> AsyncIterator[bytes]:
        """``data`` in random pieces: lines and UTF-8 characters cut anywhere."""
        rng = random.Random(seed)
        pos = 0
        while pos < len(data):
            size = rng.randint(1, 300)
            await asyncio.sleep(0)
            yield data[pos:pos + size]
            pos += size

    async def slow(self) -> AsyncIterator[bytes]:
        try:
            for i in range(2000):  # ~40 s if nobody stops it
                self.slow_sent = i + 1
                yield sse({"object": "text_completion", "choices": [
                    {"index": 0, "text": f" word{i}", "token_ids": [5000 + i], "finish_reason": None}]})
                await asyncio.sleep(0.02)
            yield sse(b"[DONE]")
        finally:
            self.slow_closed.set()

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.serve, methods=["POST"])])


class ThreadServer:
    """An ASGI app on a loopback port, served by uvicorn in a thread."""

    def __init__(self, app: Starlette) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def fakes() -> FakeEngines:
    return FakeEngines()


@pytest.fixture(scope="module")
def gateway(fakes: FakeEngines, tmp_path_factory) -> Iterator[ThreadServer]:
    """lmparse serving qwen3 through every fake (model name = the fake's name); one binding
    is made by ``upstream_binding`` from a Qwen3 model directory, the others share its
    tokenizer and template."""
    family = get_family("qwen3")
    first = upstream_binding(family, "vllm", "http://fake/vllm", names=["vllm"], transport=fakes.transport,
                             model_dir=qwen3_model_dir(tmp_path_factory.mktemp("qwen3")))
    tokenizer, template = first.engine.tokenizer, first.engine.template

    def binding(kind: str, url: str, transport: httpx.MockTransport | None) -> ModelBinding:
        engine = UpstreamEngine(ENGINE_OF.get(kind, kind), url, family, tokenizer, template, transport=transport)
        return ModelBinding([kind], family, engine)

    kinds = ENGINES[1:] + ["sglang-stop", "slow", "midfail", "broken"] + [f"overflow-{e}" for e in REFUSALS]
    bindings = [first] + [binding(k, f"http://fake/{k}", fakes.transport) for k in kinds]
    bindings.append(binding("unreachable", f"http://127.0.0.1:{free_port()}", None))
    server = ThreadServer(create_app(bindings))
    server.engines = {b.name: b.engine for b in bindings}
    yield server
    server.stop()


@pytest.fixture(scope="module")
def oai(gateway: ThreadServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)


def streamed_reply(client: openai.OpenAI, model: str, **kw: Any) -> tuple[Any, list[str]]:
    with client.chat.completions.stream(model=model, tools=TOOLS, stream_options={"include_usage": True},
                                        messages=[{"role": "user", "content": USER_TEXT}], **kw) as stream:
        events = [event.type for event in stream]
        return stream.get_final_completion(), events


# ---- every engine: the request it gets, the reply the SDK accumulates --------------------------


def check_request(fakes, kind: str, thinking_on: bool = True) -> dict:
    path, body = fakes.requests[kind][-1]
    engine = ENGINE_OF.get(kind, kind)
    assert path == {"vllm": "/v1/completions", "sglang": "/generate", "lmdeploy": "/generate",
                    "llamacpp": "/completion"}[engine]
    prompt = body["text"] if engine == "sglang" else body["prompt"]
    assert USER_TEXT in prompt and "get_weather" in prompt  # the user's message and the tools
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    assert body["stream"] is True
    if engine == "vllm":
        assert body["return_token_ids"] is True and body["skip_special_tokens"] is False
        assert body["stream_options"] == {"include_usage": True} and body["max_tokens"] > 0
    elif engine == "sglang":
        params = body["sampling_params"]
        assert params["skip_special_tokens"] is False and params["no_stop_trim"] is True
        assert params["max_new_tokens"] > 0
    elif engine == "lmdeploy":
        assert body["skip_special_tokens"] is False and body["max_tokens"] > 0
    else:
        assert body["return_tokens"] is True and body["n_predict"] > 0
        assert body["preserved_tokens"] == ["<tool_call>", "</tool_call>", "<think>", "</think>"]  # Qwen3's markers
    return body


@pytest.mark.parametrize("kind", ENGINES)
def test_engine_stream_through_the_openai_sdk(fakes, oai, kind):
    completion, events = streamed_reply(oai, kind)
    check_request(fakes, kind)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert REASONING in choice.message.reasoning_content
    assert "<think>" not in (choice.message.content or "") and EOS_TEXT not in (choice.message.content or "")
    assert not (choice.message.content or "").strip()
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    assert "tool_calls.function.arguments.done" in events
    usage = completion.usage
    assert usage.prompt_tokens == len(PROMPT_IDS)  # the engine's own count
    assert usage.completion_tokens == len(fakes.pieces) + (1 if kind in EOS_IN_IDS else 0)
    assert usage.completion_tokens_details.reasoning_tokens > 0


def test_non_streaming_and_anthropic_through_an_engine(fakes, gateway, oai):
    whole = oai.chat.completions.create(model="sglang", tools=TOOLS, messages=[{"role": "user", "content": USER_TEXT}])
    assert whole.choices[0].finish_reason == "tool_calls"
    assert json.loads(whole.choices[0].message.tool_calls[0].function.arguments) == {"city": "Paris"}
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    with client.messages.stream(model="vllm", max_tokens=300, messages=[{"role": "user", "content": USER_TEXT}],
                                tools=[{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}],
                                thinking={"type": "enabled", "budget_tokens": 1024}) as stream:
        message = stream.get_final_message()
    blocks = message.content  # the "\n\n" between </think> and <tool_call> opens no text block
    assert [b.type for b in blocks] == ["thinking", "tool_use"]
    assert blocks[1].input == {"city": "Paris"} and message.stop_reason == "tool_use"
    body = check_request(fakes, "vllm")
    assert body["max_tokens"] == 300
    assert message.usage.input_tokens == len(PROMPT_IDS)


def test_thinking_switch_reaches_the_template(fakes, oai):
    oai.chat.completions.create(model="llamacpp", messages=[{"role": "user", "content": USER_TEXT}],
                                extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    _, body = fakes.requests["llamacpp"][-1]
    assert body["prompt"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # Qwen3's no-think prompt


def test_logprobs_and_stop_are_passed_on(fakes, oai):
    oai.chat.completions.create(model="vllm", messages=[{"role": "user", "content": USER_TEXT}], logprobs=True,
                                top_logprobs=3, stop=["STOP"], max_tokens=77)
    _, body = fakes.requests["vllm"][-1]
    assert body["logprobs"] == 3 and body["stop"] == ["STOP"] and body["max_tokens"] == 77


def test_sglang_stop_string_kept_by_no_stop_trim_is_cut(fakes, oai):
    chunks = list(oai.chat.completions.create(model="sglang-stop", stream=True, stop=["STOP"],
                                              messages=[{"role": "user", "content": "hello"}],
                                              extra_body={"chat_template_kwargs": {"enable_thinking": False}}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello there, friend."
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert fakes.requests["sglang-stop"][-1][1]["sampling_params"]["stop"] == ["STOP"]


@pytest.mark.parametrize("kind", ENGINES)
def test_responses_api_through_each_engine(fakes, gateway, oai, kind):
    tools = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}]
    whole = oai.responses.create(model=kind, input=USER_TEXT, tools=tools)
    check_request(fakes, kind)
    with oai.responses.stream(model=kind, input=USER_TEXT, tools=tools) as stream:
        deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        streamed = stream.get_final_response()
    for response in (whole, streamed):
        assert [item.type for item in response.output] == ["reasoning", "function_call"]
        assert REASONING in response.output[0].content[0].text
        assert response.output[1].name == "get_weather" and json.loads(response.output[1].arguments) == {
            "city": "Paris"}
        assert response.usage.input_tokens == len(PROMPT_IDS)
    assert "".join(deltas) == streamed.output[1].arguments


def test_a_json_schema_reaches_the_engines_that_enforce_one(fakes, oai):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    fmt = {"format": {"type": "json_schema", "name": "city", "schema": schema}}
    for kind in ("vllm", "sglang", "llamacpp"):
        oai.responses.create(model=kind, input=USER_TEXT, text=fmt)
    assert fakes.requests["vllm"][-1][1]["structured_outputs"] == {"json": schema}
    assert json.loads(fakes.requests["sglang"][-1][1]["sampling_params"]["json_schema"]) == schema
    assert fakes.requests["llamacpp"][-1][1]["json_schema"] == schema
    oai.chat.completions.create(model="vllm", messages=[{"role": "user", "content": USER_TEXT}],
                                response_format={"type": "json_object"})
    assert fakes.requests["vllm"][-1][1]["structured_outputs"] == {"json_object": True}


def test_count_tokens_through_an_engine(gateway):
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    counted = client.messages.count_tokens(model="vllm", messages=[{"role": "user", "content": USER_TEXT}])
    assert counted.input_tokens > 0


# ---- the command line --------------------------------------------------------------------------


def test_cli_serves_in_front_of_an_engine(fakes: FakeEngines, tmp_path) -> None:
    upstream = ThreadServer(fakes.app())  # a real HTTP engine for a real `lmparse serve`
    live = LiveServer(["--family", "qwen3", "--engine", "llamacpp", "--upstream", upstream.url + "/llamacpp",
                       "--upstream-model", "qwen3-8b", "--model", str(qwen3_model_dir(tmp_path))])
    try:
        client = openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0)
        completion, _ = streamed_reply(client, "qwen3")
        assert completion.choices[0].finish_reason == "tool_calls"
        assert completion.choices[0].message.tool_calls[0].function.name == "get_weather"
        body = check_request(fakes, "llamacpp")
        assert body["model"] == "qwen3-8b"
        models = httpx.get(live.url + "/v1/models", timeout=10).json()["data"]
        assert models[0]["engine"] == "llamacpp"
    finally:
        live.stop()
        upstream.stop()


# ---- failures ----------------------------------------------------------------------------------


def _access_reason(caplog, request_id: str) -> str:
    """The access line of request ``request_id`` (written once its response has ended: the
    server thread may still be writing it when the client has read the answer)."""
    deadline = time.monotonic() + 5
    while True:
        lines = [r.getMessage() for r in caplog.records if r.name == "lmparse.access" and request_id in r.getMessage()]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("model", ["broken", "unreachable"])
def test_upstream_failure_is_a_502_in_each_api_shape(gateway, model, caplog):
    caplog.set_level(logging.INFO, logger="lmparse.access")
    r = httpx.post(gateway.url + "/v1/chat/completions", timeout=10, json={
        "model": model, "stream": True, "messages": [{"role": "user", "content": USER_TEXT}]})
    assert r.status_code == 502, r.text
    assert r.headers["content-type"].startswith("application/json")  # never half a stream
    error = r.json()["error"]
    request_id = r.headers["x-request-id"]
    # The client learns only that it failed, and the id; the upstream's URL and words stay in the log.
    assert error == {"message": f"internal error (request id {request_id})", "type": "server_error",
                     "param": None, "code": None}
    logged = _access_reason(caplog, request_id)
    assert "upstream vllm" in logged and " 502 " in logged
    if model == "broken":
        assert "CUDA out of memory" in logged and "HTTP 500" in logged
    else:
        assert "http://127.0.0.1:" in logged
    r = httpx.post(gateway.url + "/v1/messages", timeout=10, json={
        "model": model, "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": USER_TEXT}]})
    assert r.status_code == 502
    data = r.json()
    assert data == {"type": "error", "error": {"type": "api_error",
                                               "message": f"internal error (request id {r.headers['x-request-id']})"}}
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": USER_TEXT}])


def _failure_logged(caplog, message: str) -> None:
    """``message`` names a request id whose log record has the engine's own words."""
    request_id = message.removeprefix("internal error (request id ").removesuffix(")")
    assert request_id.startswith("req_") and message == f"internal error (request id {request_id})"
    deadline = time.monotonic() + 5
    while True:  # the server thread logs it as the stream ends: maybe just after the client read it
        logged = [r.getMessage() for r in caplog.records if request_id in r.getMessage()]
        if any("engine crashed" in line for line in logged) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert any("engine crashed" in line for line in logged), logged


def test_upstream_error_mid_stream_is_the_streams_error_event(oai, caplog):
    with pytest.raises(openai.APIError) as info:
        for _ in oai.chat.completions.create(model="midfail", stream=True,
                                             messages=[{"role": "user", "content": USER_TEXT}]):
            pass
    assert "engine crashed" not in str(info.value)
    _failure_logged(caplog, info.value.message)


def test_responses_failures_before_and_during_the_stream(gateway, caplog):
    r = httpx.post(gateway.url + "/v1/responses", json={"model": "broken", "input": USER_TEXT, "stream": True},
                   timeout=10)
    assert r.status_code == 502 and r.json()["error"]["type"] == "server_error"
    events = []
    with httpx.stream("POST", gateway.url + "/v1/responses", timeout=10,
                      json={"model": "midfail", "input": USER_TEXT, "stream": True}) as r:
        assert r.status_code == 200
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    _failure_logged(caplog, events[-2]["message"])
    assert events[-1]["response"]["status"] == "failed"
    assert events[-1]["response"]["error"]["message"] == events[-2]["message"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def _metric(server: ThreadServer, name: str) -> float:
    text = httpx.get(server.url + "/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and line[len(name)] in " {")


def test_a_non_streaming_client_leaving_closes_the_upstream_stream(fakes, gateway):
    fakes.slow_closed.clear()
    cancelled, failed = _metric(gateway, "lmparse_engine_cancelled_total"), _metric(gateway, "lmparse_engine_failed_total")
    with pytest.raises(httpx.TimeoutException):
        httpx.post(gateway.url + "/v1/chat/completions", timeout=httpx.Timeout(10, read=0.5),
                   json={"model": "slow", "messages": [{"role": "user", "content": "go"}]})
    assert fakes.slow_closed.wait(10), "the upstream stream was not closed"
    sent = fakes.slow_sent
    assert sent < 500
    deadline = time.monotonic() + 5
    while _metric(gateway, "lmparse_engine_cancelled_total") == cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _metric(gateway, "lmparse_engine_cancelled_total") == cancelled + 1  # the metrics show it
    assert _metric(gateway, "lmparse_engine_failed_total") == failed
    assert _metric(gateway, "lmparse_requests_in_flight") == 0
    time.sleep(0.2)
    assert fakes.slow_sent == sent  # nothing more was generated


def test_an_engine_failing_mid_stream_counts_as_failed_not_cancelled(gateway, oai):
    cancelled, failed = _metric(gateway, "lmparse_engine_cancelled_total"), _metric(gateway, "lmparse_engine_failed_total")
    with pytest.raises(openai.APIError):
        for _ in oai.chat.completions.create(model="midfail", stream=True,
                                             messages=[{"role": "user", "content": USER_TEXT}]):
            pass
    deadline = time.monotonic() + 5
    while _metric(gateway, "lmparse_engine_failed_total") == failed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _metric(gateway, "lmparse_engine_failed_total") == failed + 1
    assert _metric(gateway, "lmparse_engine_cancelled_total") == cancelled


def test_client_leaving_closes_the_upstream_stream(fakes, gateway, oai):
    engine = gateway.engines["slow"]
    fakes.slow_closed.clear()
    before = engine.streams_cancelled
    stream = oai.chat.completions.create(model="slow", stream=True, messages=[{"role": "user", "content": "go"}])
    received = 0
    for _ in stream:
        received += 1
        if received == 5:
            break
    stream.close()
    assert fakes.slow_closed.wait(10), "the upstream stream was not closed"
    sent = fakes.slow_sent
    assert sent < 500
    deadline = time.monotonic() + 5  # httpcore may drop the socket a moment before our own close runs
    while engine.streams_cancelled < before + 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert engine.streams_cancelled == before + 1, engine.stats()
    time.sleep(0.2)
    assert fakes.slow_sent == sent  # nothing more was generated


# ---- sampling options, refusals, cached tokens -------------------------------------------------

SAMPLING = {"temperature": 0, "top_p": 0.5, "seed": 11, "presence_penalty": 0.25, "frequency_penalty": 0.75,
            "logit_bias": {"151645": 100}, "stop": ["STOP"], "logprobs": True, "top_logprobs": 2}
EXTRA = {"top_k": 1, "min_p": 0.1, "repetition_penalty": 1.2, "stop_token_ids": [151643],
         "grammar": 'root ::= "a"', "mirostat": 2, "min_tokens": 1, "ebnf": 'root ::= "a"', "made_up": True}
EXPECTED = {
    "vllm": {"temperature": 0, "top_p": 0.5, "seed": 11, "presence_penalty": 0.25, "frequency_penalty": 0.75,
             "logit_bias": {"151645": 100}, "stop": ["STOP"], "logprobs": 2, "top_k": 1, "min_p": 0.1,
             "repetition_penalty": 1.2, "stop_token_ids": [151643], "min_tokens": 1},
    "sglang": {"temperature": 0, "top_p": 0.5, "sampling_seed": 11, "presence_penalty": 0.25,
               "frequency_penalty": 0.75, "logit_bias": {"151645": 100}, "stop": ["STOP"], "top_k": 1, "min_p": 0.1,
               "repetition_penalty": 1.2, "stop_token_ids": [151643], "ebnf": 'root ::= "a"'},
    "lmdeploy": {"temperature": 0, "top_p": 0.5, "stop": ["STOP"], "return_logprob": True, "top_k": 1,
                 "min_p": 0.1, "repetition_penalty": 1.2, "stop_token_ids": [151643]},
    "llamacpp": {"temperature": 0, "top_p": 0.5, "seed": 11, "presence_penalty": 0.25, "frequency_penalty": 0.75,
                 "logit_bias": [[151645, 100]], "stop": ["STOP", "<|endoftext|>"], "n_probs": 2, "top_k": 1,
                 "min_p": 0.1, "repeat_penalty": 1.2, "grammar": 'root ::= "a"', "mirostat": 2},
}


@pytest.mark.parametrize("kind", EXPECTED)
def test_every_sampling_option_of_the_sdk_reaches_the_engine_under_its_names(fakes, oai, kind):
    oai.chat.completions.create(model=kind, messages=[{"role": "user", "content": USER_TEXT}], extra_body=EXTRA,
                                **SAMPLING)
    _, body = fakes.requests[kind][-1]
    params = body["sampling_params"] if kind == "sglang" else body
    assert {key: params.get(key) for key in EXPECTED[kind]} == EXPECTED[kind]
    assert "made_up" not in params and "made_up" not in body  # not on any allow-list: ignored
    assert "mirostat" not in params or kind == "llamacpp"  # another engine's extra stays out


def test_anthropic_and_responses_sampling_options_reach_the_engine(fakes, gateway, oai):
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    # This SDK has no sampling arguments of its own any more: the API still takes them.
    client.messages.create(model="llamacpp", max_tokens=50, stop_sequences=["END"],
                           messages=[{"role": "user", "content": USER_TEXT}],
                           extra_body={"output_config": {"format": {"type": "json_schema", "schema": schema}},
                                       "temperature": 0.2, "top_p": 0.9, "top_k": 5, "seed": 3, "typical_p": 0.5})
    _, body = fakes.requests["llamacpp"][-1]
    assert {k: body[k] for k in ("temperature", "top_p", "top_k", "stop", "seed", "typical_p", "json_schema")} == {
        "temperature": 0.2, "top_p": 0.9, "top_k": 5, "stop": ["END"], "seed": 3, "typical_p": 0.5,
        "json_schema": schema}
    oai.responses.create(model="sglang", input=USER_TEXT, temperature=0.3, top_p=0.8, extra_body={"top_k": 4})
    params = fakes.requests["sglang"][-1][1]["sampling_params"]
    assert (params["temperature"], params["top_p"], params["top_k"]) == (0.3, 0.8, 4)


@pytest.mark.parametrize("field, value", [("logit_bias", {"x": 1}), ("logit_bias", {"5": 200}), ("top_k", -2),
                                          ("stop_token_ids", [1, "2"]), ("min_p", 2)])
def test_a_wrong_sampling_option_is_a_400_naming_it(oai, field, value):
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(model="vllm", messages=[{"role": "user", "content": "hi"}],
                                    extra_body={field: value})
    assert info.value.body["param"] == field


@pytest.mark.parametrize("engine", REFUSALS)
def test_a_prompt_longer_than_the_engines_context_is_a_400_in_each_api_shape(gateway, oai, engine):
    kind = f"overflow-{engine}"
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as info:
            oai.chat.completions.create(model=kind, stream=stream, messages=[{"role": "user", "content": "hi"}])
        assert info.value.body == {"message": OVERFLOW_REASON[engine], "type": "invalid_request_error",
                                   "param": None, "code": "context_length_exceeded"}
    r = httpx.post(gateway.url + "/v1/messages", timeout=10, json={
        "model": kind, "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 400 and r.json() == {"type": "error", "error": {
        "type": "invalid_request_error", "message": OVERFLOW_REASON[engine]}}
    with pytest.raises(openai.BadRequestError) as info:
        oai.responses.create(model=kind, input="hi", stream=True)
    assert info.value.body["message"] == OVERFLOW_REASON[engine]


@pytest.mark.parametrize("kind", ["llamacpp", "sglang"])
def test_cached_prompt_tokens_surface_in_each_apis_usage(gateway, oai, kind):
    whole = oai.chat.completions.create(model=kind, tools=TOOLS, messages=[{"role": "user", "content": USER_TEXT}])
    streamed, _ = streamed_reply(oai, kind)
    for completion in (whole, streamed):
        assert completion.usage.prompt_tokens == len(PROMPT_IDS)
        assert completion.usage.prompt_tokens_details.cached_tokens == CACHED[kind]
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    with client.messages.stream(model=kind, max_tokens=300, messages=[{"role": "user", "content": USER_TEXT}],
                                tools=[{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}],
                                ) as stream:
        message = stream.get_final_message()
    assert message.usage.cache_read_input_tokens == CACHED[kind]
    assert message.usage.input_tokens == len(PROMPT_IDS) - CACHED[kind]  # Anthropic counts the cached part apart
    response = oai.responses.create(model=kind, input=USER_TEXT)
    assert response.usage.input_tokens_details.cached_tokens == CACHED[kind]
