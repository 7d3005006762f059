"""Several gateway replicas in front of one engine: readiness for the load balancer, and no
state a replica must own (a reply from one is continued on the other).

The engine is a small scripted vLLM: ``GET /health`` answers what the test sets, and
``POST /v1/completions`` streams the recorded Qwen3 reply (reasoning, then a call) while
keeping the prompts it was sent."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
anthropic = pytest.importorskip("anthropic")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from lmparse.serve.app import create_app, upstream_binding  # noqa: E402
from lmparse.serve.families import get_family  # noqa: E402
from lmparse.serve.readiness import TTL  # noqa: E402

from .support.server import LiveServer, free_port  # noqa: E402
from .support.upstream import REASONING, recorded  # noqa: E402
from .test_serve_upstream import ThreadServer  # noqa: E402

KEY = "shared-signing-key-for-every-replica"
TOOLS = [{"name": "get_weather", "description": "weather", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
ASK = {"role": "user", "content": "What is the weather in Paris?"}


class Engine:
    def __init__(self) -> None:
        self.health = 200
        self.probes = 0
        self.prompts: list[str] = []

    async def get_health(self, request: Request) -> Response:
        self.probes += 1
        return Response(status_code=self.health)

    async def complete(self, request: Request) -> StreamingResponse:
        self.prompts.append((await request.json())["prompt"])
        return StreamingResponse(iter([recorded("vllm")]), media_type="text/event-stream")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/health", self.get_health, methods=["GET"]),
                                 Route("/v1/completions", self.complete, methods=["POST"])])


@pytest.fixture(scope="module")
def engine() -> Iterator[tuple[Engine, ThreadServer]]:
    scripted = Engine()
    server = ThreadServer(scripted.app())
    yield scripted, server
    server.stop()


def test_ready_follows_the_engine_and_health_stays_up(engine, tmp_path):
    scripted, upstream = engine
    family = get_family("qwen3")
    template = str(_template_file(tmp_path))
    gateway = ThreadServer(create_app([
        upstream_binding(family, "vllm", upstream.url, names=["qwen3"], chat_template=template),
        upstream_binding(family, "vllm", f"http://127.0.0.1:{free_port()}", names=["gone"], chat_template=template)]))
    try:
        def states() -> tuple[int, dict]:
            r = httpx.get(gateway.url + "/ready", timeout=10)
            return r.status_code, r.json()

        status, body = states()
        assert (status, body["ready"], body["upstreams"]) == (503, False, {"qwen3": "ready", "gone": "unreachable"})
        assert upstream.url not in str(body)  # an engine's URL is never shown
        health = httpx.get(gateway.url + "/health", timeout=10)
        assert health.status_code == 200 and health.json()["upstreams"]["gone"] == "unreachable"
    finally:
        gateway.stop()
    gateway = ThreadServer(create_app([upstream_binding(family, "vllm", upstream.url, names=["qwen3"],
                                                        chat_template=template)]))
    try:
        assert httpx.get(gateway.url + "/ready", timeout=10).status_code == 200
        scripted.health = 503  # the engine is loading
        time.sleep(TTL + 0.1)  # past the cached probe
        r = httpx.get(gateway.url + "/ready", timeout=10)
        assert r.status_code == 503 and r.json()["upstreams"] == {"qwen3": "loading"}
        probes, started = scripted.probes, time.monotonic()
        for _ in range(50):  # a load balancer polling hard costs the engine one probe per TTL
            httpx.get(gateway.url + "/ready", timeout=10)
        assert scripted.probes - probes <= 1 + (time.monotonic() - started) / TTL
    finally:
        scripted.health = 200
        gateway.stop()


def test_two_replicas_serve_interleaved_turns_of_one_conversation(engine, tmp_path):
    """Replicas that share --signing-key accept each other's thinking signatures, so a turn
    answered by one continues on the other with the model's reasoning back in the prompt."""
    scripted, upstream = engine
    args = ["--family", "qwen3", "--engine", "vllm", "--upstream", upstream.url, "--signing-key", KEY,
            "--chat-template", str(_template_file(tmp_path))]
    replicas = [LiveServer(args), LiveServer(args)]
    try:
        clients = [anthropic.Anthropic(base_url=r.url, api_key="unused", max_retries=0) for r in replicas]
        for first, second in itertools.islice(itertools.cycle([(0, 1), (1, 0)]), 6):
            reply = clients[first].messages.create(model="qwen3", max_tokens=200, tools=TOOLS, messages=[ASK])
            thinking, call = reply.content[0], reply.content[-1]
            assert thinking.type == "thinking" and thinking.thinking.strip() == REASONING
            assert call.type == "tool_use" and call.input == {"city": "Paris"}
            follow_up = [ASK, {"role": "assistant", "content": [block.model_dump() for block in reply.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                       "content": "sunny"}]}]
            clients[second].messages.create(model="qwen3", max_tokens=200, tools=TOOLS, messages=follow_up)
            assert REASONING in scripted.prompts[-1], "the other replica dropped the signed reasoning"
    finally:
        for r in replicas:
            r.stop()


def _template_file(tmp_path) -> str:
    """The Qwen3 chat template of the test data, as a file for --chat-template."""
    from lmparse.serve.tokenizer import testdata_dir

    root = testdata_dir()
    path = root / "templates" / get_family("qwen3").template if root else None
    if path is None or not path.is_file():
        pytest.skip("the Qwen3 chat template is not in the test data")
    return str(path)
