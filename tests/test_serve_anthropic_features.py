"""What agent clients put in Anthropic Messages requests, through the official `anthropic`
SDK against a live `lmparse serve` (simulated Qwen3): system turns anywhere, images and
documents (in user turns and tool results), cache_control, beta headers and paths,
context_management, output_config, thinking modes, thinking signatures that round-trip,
Anthropic's own tool types, deferred tools, and count_tokens."""

from __future__ import annotations

import base64
import json

import pytest

anthropic = pytest.importorskip("anthropic")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402

from .support.server import live_server_fixture  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")

BASH = {"name": "Bash", "description": "Run a shell command", "input_schema": {
    "type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
    "required": ["command"], "additionalProperties": False}, "cache_control": {"type": "ephemeral"}}
READ = {"name": "Read", "description": "Read a file", "input_schema": {
    "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(48 * 1024)).decode()
REMINDER = "<system-reminder>\nThe tools Bash, Read and Write are available. Use Bash for shell.\n</system-reminder>\n"


server = live_server_fixture("--family", "qwen3", "--token-rate", "0")


@pytest.fixture(scope="module")
def client(server):
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)


def text_of(message) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


def blocks(message) -> list:
    return [(b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in message.content]


def test_system_turns_anywhere_including_last(client):
    message = client.messages.create(model="claude-opus-5-5", max_tokens=1024, system="You are a test.", messages=[
        {"role": "user", "content": "hello there"},
        {"role": "system", "content": [{"type": "text", "text": "# Environment\ncwd: /tmp",
                                        "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "how are you"},
        {"role": "system", "content": "Answer briefly."},
    ])
    assert text_of(message).startswith('You said: "how are you"')


def test_the_claude_code_request_shape_is_served(client):
    """Beta path and headers, adaptive thinking, context_management, output_config, metadata,
    cache_control on system blocks and tools, <system-reminder> text, a deferred tool."""
    deferred = {"name": "WebFetch", "description": "Fetch a URL", "defer_loading": True,
                "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}}
    with client.beta.messages.stream(
            model="claude-opus-5-5", max_tokens=128000,
            betas=["claude-code-20250219", "interleaved-thinking-2025-05-14", "context-management-2025-06-27"],
            system=[{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1"},
                    {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
            tools=[BASH, READ, deferred], thinking={"type": "adaptive"},
            context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
            output_config={"effort": "medium"}, metadata={"user_id": '{"session_id": "s1"}'},
            messages=[{"role": "user", "content": [{"type": "text", "text": REMINDER},
                                                   {"type": "text", "text": 'Use Bash with command="echo hi"'}]}],
    ) as stream:
        message = stream.get_final_message()
    assert [(t, n) for t, n, _ in blocks(message)] == [("thinking", None), ("tool_use", "Bash")]
    assert message.content[1].input == {"command": "echo hi"}  # not Read or Write: the reminder is not the user
    assert message.stop_reason == "tool_use"


def test_a_deferred_tool_is_not_offered(client):
    deferred = {"name": "WebFetch", "description": "Fetch a URL", "defer_loading": True,
                "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}}
    message = client.messages.create(model="m", max_tokens=1024, tools=[BASH, deferred], messages=[
        {"role": "user", "content": "Call WebFetch url=https://example.com"}])
    assert not [b for b in message.content if b.type == "tool_use"]


def test_images_and_documents_become_placeholders(client):
    message = client.messages.create(model="m", max_tokens=1024, thinking={"type": "disabled"}, messages=[
        {"role": "user", "content": [
            {"type": "text", "text": "look:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG},
             "cache_control": {"type": "ephemeral"}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
            {"type": "document", "title": "spec.pdf",
             "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x" * 100}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain notes"}},
        ]}])
    said = text_of(message)
    for part in ("[image: image/png, 48 KB]", "[image: https://example.com/cat.jpg]",
                 "[document: spec.pdf, application/pdf, 600 B]", "plain notes"):
        assert part in said


def test_an_image_in_a_tool_result_completes_the_loop(client):
    message = client.messages.create(model="m", max_tokens=1024, tools=[READ], messages=[
        {"role": "user", "content": "Use Read with file_path=/tmp/pic.png"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                           "input": {"file_path": "/tmp/pic.png"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]},
            {"type": "text", "text": REMINDER}]},  # Claude Code adds reminders after results: still a result turn
    ])
    assert "[image: image/png, 48 KB]" in text_of(message)
    assert not [b for b in message.content if b.type == "tool_use"]


def test_output_config_format_gives_json_for_the_schema(client):
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "rank": {"type": "integer"}},
              "required": ["city", "rank"], "additionalProperties": False}
    message = client.messages.create(model="m", max_tokens=1024, thinking={"type": "disabled"},
                                     output_config={"format": {"type": "json_schema", "schema": schema}},
                                     messages=[{"role": "user", "content": "best city: city=Lyon rank=1"}])
    assert json.loads(text_of(message)) == {"city": "Lyon", "rank": 1}


@pytest.mark.parametrize("thinking, thinks", [({"type": "enabled", "budget_tokens": 2048}, True),
                                              ({"type": "adaptive"}, True), ({"type": "disabled"}, False)])
def test_thinking_modes(client, thinking, thinks):
    message = client.messages.create(model="m", max_tokens=1024, thinking=thinking,
                                     messages=[{"role": "user", "content": "hello"}])
    assert (message.content[0].type == "thinking") == thinks


def tool_loop(thinking_block: dict) -> list:
    return [{"role": "user", "content": "Use Bash with command=ls"},
            {"role": "assistant", "content": [thinking_block, {"type": "tool_use", "id": "toolu_9", "name": "Bash",
                                                               "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "a.txt"}]}]


def test_thinking_signatures_round_trip_and_foreign_ones_are_ignored(client):
    first = client.messages.create(model="m", max_tokens=1024, tools=[BASH],
                                   messages=[{"role": "user", "content": "Use Bash with command=ls"}])
    thinking = first.content[0]
    assert thinking.type == "thinking" and thinking.signature.startswith("lmparse1.")
    ours = {"type": "thinking", "thinking": thinking.thinking, "signature": thinking.signature}
    foreign = {**ours, "signature": "EqQBCkYIBxgCKkDp-from-another-provider"}
    counted = {}
    for name, block in (("ours", ours), ("foreign", foreign),
                        ("redacted", {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"})):
        reply = client.messages.create(model="m", max_tokens=1024, tools=[BASH], messages=tool_loop(block))
        assert "a.txt" in text_of(reply)
        counted[name] = client.messages.count_tokens(model="m", tools=[BASH], messages=tool_loop(block)).input_tokens
    # Qwen3's template renders this turn's reasoning: only the block lmparse signed is in the prompt.
    assert counted["ours"] > counted["foreign"] == counted["redacted"]


def test_count_tokens_matches_the_prompt_a_reply_counts(client):
    kw = dict(model="m", system="You are a test.", tools=[BASH],
              messages=[{"role": "user", "content": "Use Bash with command=pwd"}])
    counted = client.messages.count_tokens(**kw).input_tokens
    assert counted > 0
    assert client.messages.create(max_tokens=1024, **kw).usage.input_tokens == counted
    assert client.beta.messages.count_tokens(betas=["token-counting-2024-11-01"], **kw).input_tokens == counted


def test_anthropic_tool_types_are_accepted_and_not_offered(server):
    body = {"model": "m", "max_tokens": 1024, "messages": [{"role": "user", "content": "Use Bash with command=ls"}],
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
                      {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}, BASH]}
    r = httpx.post(server.url + "/v1/messages?beta=true", json=body, timeout=30,
                   headers={"anthropic-version": "2023-06-01", "anthropic-beta": "web-search-2025-03-05"})
    assert r.status_code == 200, r.text
    assert r.headers["x-lmparse-ignored-tools"] == "web_search_20250305,text_editor_20250728"
    assert [b["name"] for b in r.json()["content"] if b["type"] == "tool_use"] == ["Bash"]


def test_server_tool_blocks_in_a_replayed_turn_are_left_out(client):
    reply = client.messages.create(model="m", max_tokens=1024, thinking={"type": "disabled"}, messages=[
        {"role": "user", "content": "search it"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found nothing."}]},
        {"role": "user", "content": "ok, thanks"}])
    assert text_of(reply).startswith('You said: "ok, thanks"')


def test_a_call_cut_by_max_tokens_has_the_same_input_streamed_and_not(client):
    partial = []
    for limit in range(12, 36):  # cut at every token of the call
        kw = dict(model="m", max_tokens=limit, tools=[BASH], thinking={"type": "disabled"},
                  messages=[{"role": "user", "content": 'Use Bash with command=ls timeout=5000'}])
        whole = client.messages.create(**kw)
        with client.messages.stream(**kw) as stream:
            streamed = stream.get_final_message()
        calls = [(b.name, b.input) for b in whole.content if b.type == "tool_use"]
        assert calls == [(b.name, b.input) for b in streamed.content if b.type == "tool_use"], limit
        if whole.stop_reason == "max_tokens" and calls and calls[0][1]:
            partial.append(calls[0][1])
    assert {"command": "ls"} in partial  # cut after the first argument: kept in both
