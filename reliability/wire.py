"""The three APIs on the wire: request bodies, answers reduced to what a client keeps
(content, reasoning, tool calls, finish), and a raw HTTP/1.1 exchange over asyncio streams."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["API_PATHS", "Answer", "body_for", "answer_of", "stream_answer", "RawResponse", "read_response",
           "raw_exchange", "WEATHER_TOOL"]

API_PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses"}
_WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "note": {"type": "string"}},
                   "required": ["city"]}
_TIME_SCHEMA = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
WEATHER_TOOL = ("get_weather", "Current weather for a city", _WEATHER_SCHEMA)
_TOOLS = [WEATHER_TOOL, ("get_time", "The time in a timezone", _TIME_SCHEMA)]


def _tools(api: str) -> list[dict]:
    if api == "openai":
        return [{"type": "function", "function": {"name": n, "description": d, "parameters": p}} for n, d, p in _TOOLS]
    if api == "anthropic":
        return [{"name": n, "description": d, "input_schema": p} for n, d, p in _TOOLS]
    return [{"type": "function", "name": n, "description": d, "parameters": p} for n, d, p in _TOOLS]


def body_for(api: str, model: str, text: str, stream: bool, tools: bool = True) -> dict:
    """A request of ``api`` asking ``model`` ``text`` (the simulated model answers from it)."""
    body: dict[str, Any] = {"model": model, "stream": stream}
    if api == "responses":
        body["input"] = text
    else:
        body["messages"] = [{"role": "user", "content": text}]
    if api == "anthropic":
        body["max_tokens"] = 1024
    if tools:
        body["tools"] = _tools(api)
    return body


@dataclass(frozen=True)
class Answer:
    """What a client keeps of a reply: ids and timestamps are left out, arguments parsed."""

    content: str
    reasoning: str
    calls: tuple[tuple[str, str], ...]  # (name, arguments as canonical JSON)
    finish: str
    complete: bool  # the API's terminal event or a whole body arrived

    def short(self) -> str:
        calls = ", ".join(f"{n}({a})" for n, a in self.calls)
        return (f"content {len(self.content)} chars, reasoning {len(self.reasoning)} chars, calls [{calls}], "
                f"finish {self.finish}")


def _canonical(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments else {}
        except ValueError:
            return "<invalid JSON> " + arguments
    return json.dumps(arguments, sort_keys=True)


def answer_of(api: str, body: dict) -> Answer:
    """The answer in a non-streaming body."""
    content, reasoning, calls = [], [], []
    if api == "openai":
        choice = body["choices"][0]
        msg = choice["message"]
        content.append(msg.get("content") or "")
        reasoning.append(msg.get("reasoning_content") or msg.get("reasoning") or "")
        calls = [(c["function"]["name"], _canonical(c["function"]["arguments"])) for c in msg.get("tool_calls") or ()]
        finish = choice["finish_reason"]
    elif api == "anthropic":
        for block in body["content"]:
            if block["type"] == "text":
                content.append(block["text"])
            elif block["type"] == "thinking":
                reasoning.append(block["thinking"])
            elif block["type"] == "tool_use":
                calls.append((block["name"], _canonical(block["input"])))
        finish = body["stop_reason"]
    else:
        for item in body["output"]:
            if item["type"] == "message":
                content += [part.get("text", "") for part in item["content"]]
            elif item["type"] == "reasoning":
                reasoning += [part.get("text", "") for part in item.get("content") or ()]
            elif item["type"] == "function_call":
                calls.append((item["name"], _canonical(item["arguments"])))
        finish = body["status"]
    return Answer("".join(content), "".join(reasoning), tuple(calls), str(finish), True)


def sse_events(text: str) -> list[tuple[str | None, Any]]:
    """``(event name, parsed data)`` per SSE event (``[DONE]`` stays a string)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data:
            joined = "\n".join(data)
            events.append((name, joined if joined == "[DONE]" else json.loads(joined)))
    return events


def stream_answer(api: str, text: str) -> Answer:
    """The answer a client accumulates from a whole SSE body."""
    events = sse_events(text)
    if api == "openai":
        return _openai_stream(events)
    if api == "anthropic":
        return _anthropic_stream(events)
    return _responses_stream(events)


def _openai_stream(events: list[tuple[str | None, Any]]) -> Answer:
    content, reasoning, finish, complete = [], [], "", False
    calls: dict[int, list[str]] = {}
    for _, data in events:
        if data == "[DONE]":
            complete = True
            continue
        if "error" in data:
            finish = "error: " + str(data["error"].get("message"))
            continue
        for choice in data.get("choices") or ():
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            for call in delta.get("tool_calls") or ():
                entry = calls.setdefault(call["index"], ["", ""])
                entry[0] += (call.get("function") or {}).get("name") or ""
                entry[1] += (call.get("function") or {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    ordered = tuple((n, _canonical(a)) for _, (n, a) in sorted(calls.items()))
    return Answer("".join(content), "".join(reasoning), ordered, finish, complete)


def _anthropic_stream(events: list[tuple[str | None, Any]]) -> Answer:
    content, reasoning, finish, complete = [], [], "", False
    blocks: dict[int, list[str]] = {}
    for name, data in events:
        if name == "content_block_start" and data["content_block"]["type"] == "tool_use":
            blocks[data["index"]] = [data["content_block"]["name"], ""]
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                content.append(delta["text"])
            elif delta["type"] == "thinking_delta":
                reasoning.append(delta["thinking"])
            elif delta["type"] == "input_json_delta":
                blocks[data["index"]][1] += delta["partial_json"]
        elif name == "message_delta":
            finish = data["delta"].get("stop_reason") or finish
        elif name == "message_stop":
            complete = True
        elif name == "error":
            finish = "error: " + str(data["error"].get("message"))
    calls = tuple((n, _canonical(a)) for _, (n, a) in sorted(blocks.items()))
    return Answer("".join(content), "".join(reasoning), calls, finish, complete)


def _responses_stream(events: list[tuple[str | None, Any]]) -> Answer:
    content, reasoning, calls, finish, complete = [], [], [], "", False
    for name, data in events:
        if name == "response.output_text.delta":
            content.append(data["delta"])
        elif name == "response.reasoning_text.delta":
            reasoning.append(data["delta"])
        elif name == "response.output_item.done" and data["item"]["type"] == "function_call":
            calls.append((data["item"]["name"], _canonical(data["item"]["arguments"])))
        elif name in ("response.completed", "response.incomplete", "response.failed"):
            finish, complete = data["response"]["status"], True
        elif name == "error":
            finish = "error: " + str(data.get("message"))
    return Answer("".join(content), "".join(reasoning), tuple(calls), finish, complete)


# ---- raw HTTP/1.1 --------------------------------------------------------------------------


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def read_response(reader: asyncio.StreamReader) -> RawResponse | None:
    """One response off ``reader`` (Content-Length, chunked, or to EOF); None if the
    connection closed before a status line."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while size := int((await reader.readline()).split(b";")[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readline()
        await reader.readline()
        body = b"".join(parts)
    else:
        body = await reader.read()
    return RawResponse(status, headers, body)


def request_bytes(method: str, path: str, port: int, body: bytes = b"", headers: dict[str, str] | None = None,
                  close: bool = True) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    fields = {"Content-Type": "application/json", **(headers or {})}
    if body or method == "POST":
        fields["Content-Length"] = str(len(body))
    if close:
        fields["Connection"] = "close"
    lines += [f"{k}: {v}" for k, v in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def raw_exchange(port: int, data: bytes, responses: int = 1, timeout: float = 30.0) -> list[RawResponse | None]:
    """Write ``data`` in one piece and read ``responses`` responses (None where the server
    closed instead)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**24)
    try:
        writer.write(data)
        await writer.drain()
        out: list[RawResponse | None] = []
        for _ in range(responses):
            out.append(await asyncio.wait_for(read_response(reader), timeout))
        return out
    finally:
        writer.close()
