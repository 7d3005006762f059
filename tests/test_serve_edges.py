"""The edges of `lmparse serve` every client meets: model names (exact, glob, any name on a
one-model server, 404s listing what is served), `/v1/models` in both APIs' shapes, every
error as JSON in the path's API shape (404, 405, 415, 413, 401, 400, 500), and one access
log line per request, as text or JSON."""

from __future__ import annotations

import json
import time

import pytest

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pytest.importorskip("uvicorn")

from lmparse.serve.app import create_app, simulated_binding  # noqa: E402
from lmparse.serve.engines.base import Engine  # noqa: E402
from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.server import LiveServer, live_server_fixture  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3")) or missing_parsers(get_family("glm47"))),
                                reason="qwen3 or glm47 parsers not registered")
USER = [{"role": "user", "content": "hi"}]


# Two families: qwen3 answers to its name and claude-*, glm47 to glm-4.7 only.
two = live_server_fixture("--family", "qwen3", "--family", "glm47", "--token-rate", "0", "--log-level", "info",
                       "--served-model-name", "qwen3=qwen3,claude-*", "--served-model-name", "glm47=glm-4.7",
                       "--max-body-bytes", "50000")

one = live_server_fixture("--family", "qwen3", "--token-rate", "0", "--log-level", "info", "--log-format", "json")


def family_of(server, model: str) -> str | None:
    r = httpx.post(server.url + "/v1/chat/completions", json={"model": model, "messages": USER}, timeout=30)
    return r.json()["model"] if r.status_code == 200 else None


# ---- model names -------------------------------------------------------------------------------


def test_names_and_globs_choose_the_family(two):
    models = {m["id"]: m["family"] for m in httpx.get(two.url + "/v1/models", timeout=10).json()["data"]}
    assert models == {"qwen3": "qwen3", "glm-4.7": "glm47"}
    client = anthropic.Anthropic(base_url=two.url, api_key="x", max_retries=0)
    assert client.messages.create(model="claude-opus-5-5", max_tokens=64, messages=USER).model == "claude-opus-5-5"
    assert family_of(two, "glm-4.7") == "glm-4.7"
    before = two.metric("lmparse_requests_total")
    for model in ("glm47", "gpt-5"):  # glm47 answers to glm-4.7 only; gpt-5 matches no pattern
        r = httpx.post(two.url + "/v1/chat/completions", json={"model": model, "messages": USER}, timeout=10)
        assert r.status_code == 404 and r.json()["error"]["param"] == "model"
        assert "qwen3, claude-*, glm-4.7" in r.json()["error"]["message"]
    r = httpx.post(two.url + "/v1/messages", json={"model": "gpt-5", "max_tokens": 5, "messages": USER}, timeout=10)
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"
    assert two.metric("lmparse_requests_total") == before


def test_a_one_model_server_answers_to_any_name(one):
    client = openai.OpenAI(base_url=one.url + "/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="anything-at-all", messages=USER)
    assert reply.model == "anything-at-all" and reply.choices[0].message.content
    assert client.models.retrieve("anything-at-all").id == "anything-at-all"


def test_model_objects_in_both_shapes(two):
    oai = openai.OpenAI(base_url=two.url + "/v1", api_key="x", max_retries=0)
    model = oai.models.retrieve("claude-sonnet-5")
    assert (model.id, model.object, model.owned_by) == ("claude-sonnet-5", "model", "lmparse")
    with pytest.raises(openai.NotFoundError):
        oai.models.retrieve("gpt-5")
    ant = anthropic.Anthropic(base_url=two.url, api_key="x", max_retries=0)
    info = ant.models.retrieve("claude-sonnet-5")
    assert info.type == "model" and info.id == "claude-sonnet-5" and info.created_at.year >= 2026
    assert [m.id for m in ant.models.list()] == ["qwen3", "glm-4.7"]
    with pytest.raises(anthropic.NotFoundError):
        ant.models.retrieve("gpt-5")


# ---- errors: JSON in the path's shape ------------------------------------------------------------


def openai_error(r) -> dict:
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r.json()["error"]


def anthropic_error(r) -> dict:
    assert r.headers["content-type"].startswith("application/json"), r.text
    body = r.json()
    assert body["type"] == "error"
    return body["error"]


def test_unknown_routes_and_methods(two):
    r = httpx.get(two.url + "/v1/nowhere", timeout=10)
    assert r.status_code == 404 and openai_error(r)["type"] == "not_found_error"
    r = httpx.post(two.url + "/v1/messages/nowhere", json={}, timeout=10)
    assert r.status_code == 404 and anthropic_error(r)["type"] == "not_found_error"
    r = httpx.get(two.url + "/v1/chat/completions", timeout=10)
    assert r.status_code == 405 and "POST" in r.headers["allow"] and "GET" in openai_error(r)["message"]
    assert openai_error(r)["param"] is None
    r = httpx.get(two.url + "/v1/messages", timeout=10)
    assert r.status_code == 405 and anthropic_error(r)["type"] == "invalid_request_error"
    r = httpx.put(two.url + "/v1/responses", timeout=10)
    assert r.status_code == 405 and openai_error(r)["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/messages",
                                  "/v1/messages/count_tokens"])
def test_a_body_that_is_not_json_typed_is_a_415(two, path):
    for headers in ({"content-type": "text/plain"}, {"content-type": "application/x-www-form-urlencoded"}, {}):
        r = httpx.post(two.url + path, content=b'{"messages": []}', headers=headers, timeout=10)
        assert r.status_code == 415
        error = anthropic_error(r) if path.startswith("/v1/messages") else openai_error(r)
        assert "application/json" in error["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/messages"])
def test_too_large_is_a_413_in_the_shape(two, path):
    r = httpx.post(two.url + path, json={"messages": [{"role": "user", "content": "x" * 60000}]}, timeout=10)
    assert r.status_code == 413
    if path.startswith("/v1/messages"):
        assert anthropic_error(r)["type"] == "request_too_large"
    else:
        assert "exceeds" in openai_error(r)["message"]


def test_a_crash_is_a_500_in_the_shape_without_its_details():
    class Broken(Engine):
        name = "broken"

        def start(self, request):
            raise RuntimeError("secret internal detail")

    binding = simulated_binding(get_family("qwen3"))
    binding.engine = Broken()
    app = create_app([binding])

    async def call() -> list:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            return [await c.post("/v1/chat/completions", json={"messages": USER}),
                    await c.post("/v1/messages", json={"max_tokens": 5, "messages": USER})]

    import asyncio

    oai, ant = asyncio.run(call())
    assert oai.status_code == 500 and openai_error(oai)["type"] == "server_error"
    assert ant.status_code == 500 and anthropic_error(ant)["type"] == "api_error"
    assert "secret" not in oai.text + ant.text
    for r, error in ((oai, openai_error(oai)), (ant, anthropic_error(ant))):  # the id the log line carries
        assert error["message"] == f"internal error (request id {r.headers['x-request-id']})"


# ---- the access log ------------------------------------------------------------------------------


def wait_for(server, needle: str) -> str:
    deadline = time.monotonic() + 10
    while needle not in server.log_text():
        assert time.monotonic() < deadline, server.log_text()[-2000:]
        time.sleep(0.05)
    return server.log_text()


def test_an_access_line_per_request(two):
    client = openai.OpenAI(base_url=two.url + "/v1", api_key="x", max_retries=0)
    list(client.chat.completions.create(model="claude-x", stream=True, messages=[
        {"role": "user", "content": "logged stream"}]))
    log = wait_for(two, "model=claude-x")
    line = next(ln for ln in log.splitlines() if "model=claude-x" in ln)
    assert "POST /v1/chat/completions 200" in line and "family=qwen3" in line
    assert "prompt_tokens=" in line and "completion_tokens=" in line
    httpx.post(two.url + "/v1/chat/completions", json={"model": "qwen3", "messages": [{"role": "robot"}]}, timeout=10)
    log = wait_for(two, "POST /v1/chat/completions 400")
    line = next(ln for ln in log.splitlines() if "POST /v1/chat/completions 400" in ln)
    assert 'reason="messages[0].role must be one of' in line


def test_json_log_lines_carry_the_fields(one):
    httpx.post(one.url + "/v1/responses", json={"model": "m", "input": "json logging"}, timeout=30)
    httpx.get(one.url + "/v1/nope", timeout=10)
    deadline = time.monotonic() + 10
    while True:
        records = [json.loads(ln) for ln in one.log_text().splitlines() if ln.startswith("{")]
        access = {r["path"]: r for r in records if r.get("logger") == "lmparse.access"}
        if "/v1/nope" in access and "/v1/responses" in access or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert all(ln.startswith("{") for ln in one.log_text().splitlines() if ln.strip())  # uvicorn's lines too
    ok = access["/v1/responses"]
    assert (ok["method"], ok["status"], ok["model"], ok["family"]) == ("POST", 200, "m", "qwen3")
    assert ok["prompt_tokens"] > 0 and ok["completion_tokens"] > 0 and ok["duration_ms"] >= 0
    assert access["/v1/nope"]["status"] == 404 and "no route" in access["/v1/nope"]["reason"]


def test_client_text_never_reaches_a_header_or_a_log_line_raw(two):
    kinds = [{"type": "evil\r\nx-injected: 1"}, {"type": "café"}] + [{"type": f"hosted_{i}"} for i in range(200)]
    r = httpx.post(two.url + "/v1/responses", json={"model": "qwen3", "input": "hi", "tools": kinds}, timeout=30)
    assert r.status_code == 200
    shown = r.headers["x-lmparse-ignored-tools"].split(",")
    assert shown[0] == "other" and len(shown) == 15 and "x-injected" not in r.headers  # two "other"s are one
    r = httpx.post(two.url + "/v1/chat/completions", json={"model": "claude-\nFAKE 200", "messages": USER}, timeout=30)
    assert r.status_code == 200
    log = wait_for(two, "claude-\\nFAKE 200")
    assert not any(line.startswith("FAKE") for line in log.splitlines())


def test_a_stream_the_client_leaves_is_logged_as_cancelled():
    live = LiveServer(["--family", "qwen3", "--token-rate", "50", "--log-level", "info"])
    try:
        words = " ".join(f"w{i}" for i in range(300))
        with httpx.stream("POST", live.url + "/v1/chat/completions", timeout=30, json={
                "model": "qwen3", "stream": True, "messages": [{"role": "user", "content": words}]}) as r:
            for i, _ in enumerate(r.iter_lines()):
                if i == 3:
                    break
        line = next(ln for ln in wait_for(live, "cancelled=True").splitlines() if "cancelled=True" in ln)
        assert "POST /v1/chat/completions 200" in line
    finally:
        live.stop()
