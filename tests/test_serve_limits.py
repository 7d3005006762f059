"""Server limits: concurrent generations (503 + Retry-After past the limit) and the key from a file."""

from __future__ import annotations

import json
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from .support.server import LiveServer, live_server_fixture  # noqa: E402

# Two generations at once, each slow enough (5 tokens/s) to still be running when more arrive.
narrow = live_server_fixture("--family", "qwen3", "--token-rate", "5", "--max-concurrency", "2")
USER = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]


def _open_stream(url: str, started: threading.Event, stop: threading.Event) -> None:
    with httpx.stream("POST", url + "/v1/chat/completions", timeout=30,
                      json={"messages": USER, "stream": True}) as r:
        assert r.status_code == 200
        for _ in r.iter_lines():
            started.set()
            if stop.is_set():
                return


def test_past_the_limit_each_api_answers_503_with_retry_after(narrow):
    stop = threading.Event()
    started = [threading.Event(), threading.Event()]
    threads = [threading.Thread(target=_open_stream, args=(narrow.url, s, stop), daemon=True) for s in started]
    for t in threads:
        t.start()
    try:
        assert all(s.wait(30) for s in started)  # both slots are taken by open streams
        r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": USER}, timeout=10)
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["error"]["type"] == "server_error" and "concurrent" in r.json()["error"]["message"]
        r = httpx.post(narrow.url + "/v1/messages", json={"messages": USER, "max_tokens": 5}, timeout=10)
        assert r.status_code == 503 and r.json()["error"]["type"] == "overloaded_error"
        r = httpx.post(narrow.url + "/v1/responses", json={"input": "hi"}, timeout=10)
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert httpx.get(narrow.url + "/health", timeout=10).status_code == 200  # not a generation
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    # Closed streams give their slots back.
    r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}],
                                                             "max_tokens": 1}, timeout=30)
    assert r.status_code == 200, r.text


def test_failed_requests_give_their_slot_back(narrow):
    for _ in range(5):  # more than the limit: each 4xx must release what it took
        r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": "not a list"}, timeout=10)
        assert r.status_code == 400
    r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}],
                                                             "max_tokens": 1}, timeout=30)
    assert r.status_code == 200, r.text


def test_the_key_can_come_from_a_file(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("k-from-file\n")
    live = LiveServer(["--family", "qwen3", "--token-rate", "0", "--api-key-file", str(key_file)])
    try:
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        assert httpx.post(live.url + "/v1/chat/completions", json=body, timeout=10).status_code == 401
        r = httpx.post(live.url + "/v1/chat/completions", json=body, timeout=30,
                       headers={"authorization": "Bearer k-from-file"})
        assert r.status_code == 200 and json.loads(r.text)["choices"]
    finally:
        live.stop()


# ---- validation of limits and sampling fields ------------------------------------------------

checked = live_server_fixture("--family", "qwen3", "--token-rate", "0", "--max-model-len", "1000")
HI = [{"role": "user", "content": "hi"}]
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses"}
BASE = {"openai": {"messages": HI}, "anthropic": {"messages": HI, "max_tokens": 5}, "responses": {"input": "hi"}}


def _error(api: str, r: httpx.Response) -> tuple[str, str]:
    error = r.json()["error"]
    return error["type"], error.get("param") or error["message"]


@pytest.mark.parametrize("api, fields, param", [
    ("openai", {"max_tokens": 10**12}, "max_tokens"),
    ("openai", {"max_completion_tokens": 1001}, "max_completion_tokens"),
    ("anthropic", {"max_tokens": 5000}, "max_tokens"),
    ("responses", {"max_output_tokens": 1001}, "max_output_tokens"),
    ("openai", {"temperature": "hot"}, "temperature"),
    ("openai", {"temperature": 2.5}, "temperature"),
    ("openai", {"top_p": -0.1}, "top_p"),
    ("openai", {"presence_penalty": 3}, "presence_penalty"),
    ("openai", {"frequency_penalty": True}, "frequency_penalty"),
    ("openai", {"seed": "42"}, "seed"),
    ("anthropic", {"temperature": 1.5}, "temperature"),
    ("anthropic", {"top_p": "all"}, "top_p"),
    ("anthropic", {"top_k": -1}, "top_k"),
    ("responses", {"temperature": 9}, "temperature"),
    ("responses", {"top_p": [1]}, "top_p"),
    ("openai", {"user": 12345}, "user"),
    ("responses", {"user": 12345}, "user"),
    ("responses", {"truncation": 12345}, "truncation"),
    ("responses", {"truncation": "sometimes"}, "truncation"),
])
def test_out_of_range_fields_are_a_400_naming_them(checked, api, fields, param):
    r = httpx.post(checked.url + PATHS[api], json={**BASE[api], **fields}, timeout=10)
    assert r.status_code == 400, r.text
    kind, named = _error(api, r)
    assert kind == "invalid_request_error" and param in named


@pytest.mark.parametrize("api, fields", [
    ("openai", {"max_tokens": 1000, "temperature": 0, "top_p": 1, "seed": -7, "presence_penalty": -2}),
    ("anthropic", {"max_tokens": 1000, "temperature": 1, "top_p": 0.9, "top_k": 0}),
    ("responses", {"max_output_tokens": 1000, "temperature": 2, "top_p": 0, "truncation": "auto", "user": "u1"}),
    ("openai", {"user": "user-1"}),
])
def test_fields_at_their_bounds_are_accepted(checked, api, fields):
    r = httpx.post(checked.url + PATHS[api], json={**BASE[api], **fields}, timeout=30)
    assert r.status_code == 200, r.text


# ---- Host allow-list and CORS ------------------------------------------------------------------


def test_a_loopback_server_answers_only_loopback_host_names(checked):
    for host in (f"127.0.0.1:{checked.port}", f"localhost:{checked.port}", "[::1]"):
        assert httpx.get(checked.url + "/health", headers={"host": host}, timeout=10).status_code == 200
    r = httpx.post(checked.url + "/v1/chat/completions", json={"messages": HI}, timeout=10,
                   headers={"host": f"rebound.example:{checked.port}"})
    assert r.status_code == 403 and r.json()["error"]["type"] == "permission_error"
    r = httpx.post(checked.url + "/v1/messages", json={**BASE["anthropic"]}, timeout=10,
                   headers={"host": "rebound.example"})
    assert r.status_code == 403 and r.json()["type"] == "error"
    assert "access-control-allow-origin" not in httpx.options(
        checked.url + "/v1/chat/completions", timeout=10,
        headers={"origin": "http://app.example", "access-control-request-method": "POST"}).headers


def test_allowed_hosts_and_cors_origins_open_what_they_name():
    live = LiveServer(["--family", "qwen3", "--token-rate", "0", "--allowed-hosts", "models.internal,127.0.0.1",
                       "--cors-origins", "http://app.example"])
    try:
        assert httpx.get(live.url + "/health", headers={"host": "models.internal"}, timeout=10).status_code == 200
        assert httpx.get(live.url + "/health", headers={"host": "localhost"}, timeout=10).status_code == 403
        r = httpx.options(live.url + "/v1/chat/completions", timeout=10, headers={
            "origin": "http://app.example", "access-control-request-method": "POST"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "http://app.example"
    finally:
        live.stop()


# ---- the event loop keeps serving while a big request is prepared ------------------------------


def _health_while(url: str, body: dict) -> tuple[float, float]:
    """The slowest /health answer while ``body`` is being served, and that request's own time."""
    took: dict[str, float] = {}

    def big() -> None:
        started = time.monotonic()
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=120)
        took["big"], took["status"] = time.monotonic() - started, r.status_code

    worker = threading.Thread(target=big)
    worker.start()
    worst = 0.0
    while worker.is_alive():
        started = time.monotonic()
        assert httpx.get(url + "/health", timeout=60).status_code == 200
        worst = max(worst, time.monotonic() - started)
        time.sleep(0.01)
    worker.join()
    assert took["status"] == 200
    return worst, took["big"]


def test_a_big_request_in_flight_does_not_stall_health(checked):
    """Decoding, validation, prompt rendering and counting run in the worker pool (and the
    tokenizer releases the GIL): /health answers while a 1.5 MB request of 30 000 messages
    is being prepared."""
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} with some words"}
                for i in range(30000)]
    worst, big = _health_while(checked.url, {"messages": messages, "max_tokens": 5})
    assert worst < 0.25 * big, (worst, big)


def test_a_4_mb_request_in_flight_does_not_stall_health():
    """4 MB for gpt-oss, whose tokenizer (openai-harmony) holds the GIL while it encodes: the
    prompt is encoded a piece at a time, so /health still answers in a fraction of its time."""
    live = LiveServer(["--family", "gpt-oss", "--token-rate", "0"])
    try:
        words = " ".join(f"w{i}" for i in range(500))
        messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: {words}"}
                    for i in range(1700)]
        assert len(json.dumps(messages)) > 4_000_000
        worst, big = _health_while(live.url, {"model": "gpt-oss", "messages": messages, "max_tokens": 5})
        assert worst < 0.25 * big, (worst, big)
    finally:
        live.stop()
