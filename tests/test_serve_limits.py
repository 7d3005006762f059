"""Server limits: concurrent generations (503 + Retry-After past the limit) and the key from a file."""

from __future__ import annotations

import json
import threading

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from .support.server import LiveServer, live_server_fixture  # noqa: E402

# Two generations at once, each slow enough (2 tokens/s) to still be running when more arrive.
narrow = live_server_fixture("--family", "qwen3", "--token-rate", "2", "--max-concurrency", "2")
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
                                                             "max_tokens": 3}, timeout=30)
    assert r.status_code == 200, r.text


def test_failed_requests_give_their_slot_back(narrow):
    for _ in range(5):  # more than the limit: each 4xx must release what it took
        r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": "not a list"}, timeout=10)
        assert r.status_code == 400
    r = httpx.post(narrow.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}],
                                                             "max_tokens": 3}, timeout=30)
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
