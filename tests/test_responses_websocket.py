"""The Responses API over a WebSocket at ``/v1/responses`` (the Open Responses transport),
against a live ``lmparse serve`` on the simulated model, driven by the ``websockets`` client:
turns one after another on a socket, the same events as HTTP streaming, the
connection-local state that lets ``store: false`` chains continue on the same socket (and
only there), failures as error envelopes that leave the connection open, the eviction of a
failed continuation's response, and the handshake's checks (API key, Origin, Host).
"""

from __future__ import annotations

import json
import socket

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
ws_client = pytest.importorskip("websockets.sync.client")
ws_exceptions = pytest.importorskip("websockets.exceptions")

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.server import LiveServer  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")

KEY = "sk-ws-test"
TERMINAL = ("response.completed", "response.incomplete", "response.failed")


@pytest.fixture(scope="module")
def server():
    live = LiveServer(["--family", "qwen3", "--token-rate", "0", "--api-key", KEY, "--log-level", "info"])
    yield live
    live.stop()


def connect(server, headers: dict | None = None, origin: str | None = None):
    return ws_client.connect(server.url.replace("http://", "ws://") + "/v1/responses", origin=origin,
                             additional_headers={"Authorization": f"Bearer {KEY}", **(headers or {})},
                             open_timeout=10, proxy=None)


def turn(ws, **body) -> list[dict]:
    """One turn's messages, up to its terminal event or error envelope."""
    ws.send(json.dumps({"type": "response.create", "model": "qwen3", **body}))
    messages = []
    while True:
        message = json.loads(ws.recv(timeout=30))
        messages.append(message)
        if message["type"] in TERMINAL or message["type"] == "error":
            return messages


def final(messages: list[dict]) -> dict:
    assert messages[-1]["type"] == "response.completed", messages[-1]
    return messages[-1]["response"]


def error(messages: list[dict]) -> dict:
    assert [m["type"] for m in messages] == ["error"], messages
    return messages[0]


def test_a_turn_streams_the_http_events(server):
    with connect(server) as ws:
        messages = turn(ws, input="hello")
    kinds = [m["type"] for m in messages]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [m["sequence_number"] for m in messages] == list(range(len(messages)))
    assert "response.reasoning_text.delta" in kinds  # OpenAI's names unless asked otherwise
    text = "".join(m["delta"] for m in messages if m["type"] == "response.output_text.delta")
    assert text and final(messages)["output"][-1]["content"][0]["text"] == text


def test_turns_run_one_after_another_on_one_socket(server):
    with connect(server) as ws:
        first = final(turn(ws, input="first", store=False))
        second = final(turn(ws, input="second", store=False))
    assert first["id"] != second["id"]
    assert '"first"' in first["output"][-1]["content"][0]["text"]
    assert '"second"' in second["output"][-1]["content"][0]["text"]


def test_store_false_chain_continues_on_its_socket(server):
    with connect(server) as ws:
        first = final(turn(ws, input="Remember the code word: cobalt.", store=False))
        fresh = final(turn(ws, input="What is the code word?", store=False))
        second = final(turn(ws, input="What is the code word?", store=False, previous_response_id=fresh["id"]))
    assert second["previous_response_id"] == fresh["id"]
    # the continued turn's prompt holds the turn it continues
    assert second["usage"]["input_tokens"] > fresh["usage"]["input_tokens"] + fresh["usage"]["output_tokens"] // 2
    assert httpx.get(f"{server.url}/v1/responses/{first['id']}",
                     headers={"Authorization": f"Bearer {KEY}"}).status_code == 404  # never stored


def test_only_the_latest_response_is_kept_on_the_socket(server):
    with connect(server) as ws:
        first = final(turn(ws, input="one", store=False))
        final(turn(ws, input="two", store=False))
        envelope = error(turn(ws, input="three", store=False, previous_response_id=first["id"]))
    assert envelope["error"]["code"] == "previous_response_not_found"


def test_store_false_response_is_not_found_on_a_new_socket(server):
    with connect(server) as ws:
        first = final(turn(ws, input="Remember: copper.", store=False))
    with connect(server) as ws:
        envelope = error(turn(ws, input="again", store=False, previous_response_id=first["id"]))
        assert envelope["status"] == 400
        assert envelope["error"]["code"] == "previous_response_not_found"
        assert envelope["error"]["param"] == "previous_response_id"
        final(turn(ws, input="recovered", store=False))  # the connection stays usable


def test_a_stored_response_continues_over_the_socket(server):
    stored = httpx.post(server.url + "/v1/responses", json={"model": "qwen3", "input": "hello"},
                        headers={"Authorization": f"Bearer {KEY}"}, timeout=30).json()
    with connect(server) as ws:
        second = final(turn(ws, input="again", previous_response_id=stored["id"]))
    assert second["previous_response_id"] == stored["id"]


def test_failed_continuation_evicts_the_response_it_continued(server):
    with connect(server) as ws:
        first = final(turn(ws, input="Remember: ember.", store=False))
        failed = error(turn(ws, store=False, previous_response_id=first["id"], input=[
            {"type": "function_call_output", "call_id": "call_missing", "output": "no such call"}]))
        assert failed["status"] == 400 and failed["error"]["param"] == "input[0].call_id"
        retry = error(turn(ws, input="again", store=False, previous_response_id=first["id"]))
    assert retry["error"]["code"] == "previous_response_not_found"


@pytest.mark.parametrize("message, param", [
    ("not json", None), ('["response.create"]', None), ('{"type": "response.cancel"}', "type"),
    ('{"type": "response.create", "input": 5}', "input"),
])
def test_a_malformed_message_is_an_envelope_and_the_socket_stays_open(server, message, param):
    with connect(server) as ws:
        ws.send(message)
        envelope = json.loads(ws.recv(timeout=30))
        assert envelope["type"] == "error" and envelope["status"] == 400
        assert envelope["error"]["param"] == param and envelope["error"]["type"] == "invalid_request_error"
        final(turn(ws, input="still here"))


def test_tool_call_turn_and_its_output_on_the_same_socket(server):
    weather = {"type": "function", "name": "get_weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    with connect(server) as ws:
        first = final(turn(ws, input="Call get_weather city=Oslo", tools=[weather], store=False))
        [call] = [item for item in first["output"] if item["type"] == "function_call"]
        second = final(turn(ws, store=False, previous_response_id=first["id"], tools=[weather], input=[
            {"type": "function_call_output", "call_id": call["call_id"], "output": "12 C and clear"}]))
    assert "12 C and clear" in second["output"][-1]["content"][0]["text"]


def test_dialect_header_on_the_handshake(server):
    with connect(server, headers={"x-lmparse-responses-dialect": "openresponses"}) as ws:
        kinds = {m["type"] for m in turn(ws, input="hello")}
    assert "response.reasoning.delta" in kinds and "response.reasoning_text.delta" not in kinds


def test_missing_api_key_is_an_envelope_then_close(server):
    url = server.url.replace("http://", "ws://") + "/v1/responses"
    with ws_client.connect(url, open_timeout=10, proxy=None) as ws:
        envelope = json.loads(ws.recv(timeout=10))
        assert envelope["status"] == 401 and envelope["error"]["type"] == "authentication_error"
        with pytest.raises(ws_exceptions.ConnectionClosed):
            ws.recv(timeout=10)


def test_a_browser_origin_not_allowed_is_refused(server):
    with pytest.raises(ws_exceptions.InvalidStatus) as info:
        connect(server, origin="http://evil.example")
    assert info.value.response.status_code == 403


def test_a_host_not_allowed_is_refused_before_the_handshake(server):
    request = (f"GET /v1/responses HTTP/1.1\r\nHost: rebind.example:{server.port}\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               f"Authorization: Bearer {KEY}\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(request.encode())
        status_line = s.recv(4096).split(b"\r\n", 1)[0]
    assert b" 403 " in status_line


def test_http_output_without_its_call_is_a_400_naming_it(server):
    r = httpx.post(server.url + "/v1/responses", headers={"Authorization": f"Bearer {KEY}"}, timeout=30, json={
        "model": "qwen3", "input": [{"type": "function_call_output", "call_id": "call_x", "output": "?"}]})
    assert r.status_code == 400 and r.json()["error"]["param"] == "input[0].call_id"


def test_each_turn_gets_an_access_line(server):
    with connect(server) as ws:
        final(turn(ws, input="logged turn"))
        error(turn(ws, input="x", previous_response_id="resp_gone"))
    log = server.log_text()
    assert "WS /v1/responses 200 " in log and "prompt_tokens=" in log.split("WS /v1/responses 200 ", 1)[1]
    assert "WS /v1/responses 400 " in log and "not found" in log.split("WS /v1/responses 400 ", 1)[1]


def test_a_connection_ends_at_its_time_limit(monkeypatch):
    """In process (the limit is an hour): with the limit at 0.3 s, a socket left idle gets the
    spec's websocket_connection_limit_reached envelope, then is closed."""
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from lmparse.serve.app import create_app, simulated_binding
    from lmparse.serve.routes import responses_ws

    monkeypatch.setattr(responses_ws, "CONNECTION_SECONDS", 0.3)
    app = create_app([simulated_binding(get_family("qwen3"))])
    with TestClient(app) as client, client.websocket_connect("/v1/responses") as ws:
        ws.send_text(json.dumps({"type": "response.create", "model": "qwen3", "input": "hello"}))
        while ws.receive_json()["type"] != "response.completed":
            pass
        envelope = ws.receive_json()
        assert envelope["type"] == "error" and envelope["error"]["code"] == "websocket_connection_limit_reached"
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()
