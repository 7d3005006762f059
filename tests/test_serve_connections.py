"""Connections and shutdown of a live ``lmparse serve``: head, body and keep-alive deadlines,
a graceful stop that ends streams cleanly, request ids, and ``/metrics`` behind the key.

The deadlines are a second here; each check allows several times that before it calls a
socket left open (the bound is on the server closing at all, not on how fast)."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time

import httpx
import pytest

from .support.server import LiveServer, live_server_fixture

KEY = "sk-connections-test"
WORDS = " ".join(f"word{i}" for i in range(400))  # the reply quotes it: many seconds at 40 tokens/s

timed = live_server_fixture("--family", "qwen3", "--token-rate", "0", "--timeout-headers", "1",
                            "--timeout-keep-alive", "1", "--timeout-body", "1")


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """True when the server closes ``sock`` (EOF or reset) within ``within`` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _connect(live: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", live.port), timeout=5)


def test_silent_connections_are_closed(timed):
    socks = [_connect(timed) for _ in range(20)]
    try:
        assert all(_closed_by_server(s, 6) for s in socks)
    finally:
        for s in socks:
            s.close()
    assert httpx.get(timed.url + "/health", timeout=5).status_code == 200


def test_a_request_head_trickled_byte_by_byte_is_cut_off(timed):
    sock = _connect(timed)
    try:
        head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        cut = False
        for byte in head:  # about 40 s in all, were the server to wait for it
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                cut = True
                break
            if _closed_by_server(sock, 0.2):
                cut = True
                break
        assert cut
    finally:
        sock.close()


def test_a_kept_alive_connection_that_starts_a_head_and_stalls_is_cut_off(timed):
    sock = _connect(timed)
    try:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /hea")  # a second request's head, never finished
        assert _closed_by_server(sock, 6)
    finally:
        sock.close()


def test_a_stalled_body_is_a_408(timed):
    sock = _connect(timed)
    try:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"messages\": ")
        sock.settimeout(8)
        answer = b""
        while b"\r\n\r\n" not in answer:
            part = sock.recv(65536)
            if not part:
                break
            answer += part
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    finally:
        sock.close()


def test_pipelined_requests_are_answered_in_order(timed):
    sock = _connect(timed)
    try:
        one = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        two = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        sock.sendall(one + two)
        sock.settimeout(5)
        data = b""
        while part := sock.recv(65536):
            data += part
        assert data.count(b"HTTP/1.1 200") == 2
        assert data.index(b'"status":"ok"') < data.index(b'"object":"list"')
    finally:
        sock.close()


@pytest.mark.parametrize("head, status", [
    (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 64 * 1024 + b"\r\n\r\n", 431),
    (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 1024 * 1024 + b"\r\n\r\n", 431),
    (b"GARBAGE\x00\xff\r\n\r\n", 400),
])
def test_an_unreadable_or_oversized_head_is_answered_in_json(timed, head, status):
    sock = _connect(timed)
    try:
        try:
            sock.sendall(head)
        except OSError:
            pass  # the server may answer and close before it read all of a 1 MB head
        sock.settimeout(5)
        data = b""
        while part := sock.recv(65536):
            data += part
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    assert data.startswith(b"HTTP/1.1 %d" % status), data[:200]
    body = json.loads(data.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"]
    assert httpx.get(timed.url + "/health", timeout=5).status_code == 200


def test_every_answer_carries_a_request_id(timed):
    ok = httpx.get(timed.url + "/health", timeout=5)
    missing = httpx.get(timed.url + "/nowhere", timeout=5)
    ids = {ok.headers["x-request-id"], missing.headers["x-request-id"]}
    assert len(ids) == 2 and all(i.startswith("req_") and len(i) > 20 for i in ids)


def _stream_lines(url: str, body: dict, out: list[str], started: threading.Event) -> None:
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=30) as r:
        for line in r.iter_lines():
            if line:
                out.append(line)
                started.set()


def test_a_stop_signal_lets_short_streams_finish_and_ends_long_ones_cleanly():
    live = LiveServer(["--family", "qwen3", "--token-rate", "40", "--shutdown-grace", "2"])
    try:
        long_lines: list[str] = []
        short_lines: list[str] = []
        long_started, short_started = threading.Event(), threading.Event()
        long = threading.Thread(target=_stream_lines, args=(
            live.url, {"stream": True, "messages": [{"role": "user", "content": WORDS}]}, long_lines, long_started))
        short = threading.Thread(target=_stream_lines, args=(
            live.url, {"stream": True, "max_tokens": 20, "messages": [{"role": "user", "content": "hello"}]},
            short_lines, short_started))
        long.start()
        short.start()
        assert long_started.wait(10) and short_started.wait(10)
        live.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)  # uvicorn looks at its exit flag every 0.1 s
        refused = None
        try:  # while draining, a new generation is refused (or the port is already closed)
            refused = httpx.post(live.url + "/v1/chat/completions", timeout=5,
                                 json={"messages": [{"role": "user", "content": "hi"}]}).status_code
        except httpx.TransportError:
            pass
        assert refused in (None, 503)
        # uvicorn re-raises the signal once it has shut down; without the grace it would wait
        # for the long stream (~20 s)
        assert live.proc.wait(timeout=20) in (0, -signal.SIGTERM)
        long.join(5)
        short.join(5)
    finally:
        live.stop()
    assert short_lines[-1] == "data: [DONE]"
    finishes = [json.loads(x[6:])["choices"][0]["finish_reason"] for x in short_lines[1:-1]]
    assert finishes[-1] == "length" and "error" not in "".join(short_lines)
    assert long_lines[-1] == "data: [DONE]"
    error = json.loads(long_lines[-2][6:])["error"]
    assert error["message"] == "the server is shutting down" and error["type"] == "server_error"


def test_metrics_can_be_put_behind_the_key(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    live = LiveServer(["--family", "qwen3", "--token-rate", "0", "--api-key-file", str(key_file), "--metrics-key"])
    try:
        assert httpx.get(live.url + "/metrics", timeout=5).status_code == 401
        r = httpx.get(live.url + "/metrics", headers={"authorization": f"Bearer {KEY}"}, timeout=5)
        assert r.status_code == 200 and "lmparse_requests_total" in r.text
        assert httpx.get(live.url + "/health", timeout=5).status_code == 200  # a probe needs no key
    finally:
        live.stop()


@pytest.mark.parametrize("option", ["--timeout-headers", "--timeout-body", "--timeout-keep-alive"])
def test_a_non_positive_timeout_is_refused(option):
    with pytest.raises(RuntimeError, match="must be positive"):
        LiveServer(["--family", "qwen3", option, "0"], timeout=20)
