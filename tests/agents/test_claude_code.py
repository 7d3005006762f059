"""Claude Code (`@anthropic-ai/claude-code`, pinned in package-lock.json) in its default setup,
non-interactive (`-p`, `--output-format stream-json`), on `lmparse serve`'s Anthropic API:
it makes the model call its Bash tool, runs it, sends the result back, and the final answer
quotes it; a Read of a PNG completes the same loop.  Claude Code refuses
--dangerously-skip-permissions as root, so each run allows just the tool it needs."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


def run_claude(server, tmp_path: Path, prompt: str, allowed: str) -> list[dict]:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    env = private_env(tmp_path / "home", ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=API_KEY,
                      DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", DISABLE_AUTOUPDATER="1",
                      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY="1")
    done = subprocess.run([client_path("claude"), "-p", prompt, "--output-format", "stream-json", "--verbose",
                           "--allowedTools", allowed], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events and events[-1]["type"] == "result", (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    return events


def blocks(events: list[dict], role: str) -> list[dict]:
    return [b for e in events if e["type"] == role for b in e["message"]["content"] if isinstance(b, dict)]


def check_clean_run(server, events: list[dict]) -> str:
    result = events[-1]
    assert result["subtype"] == "success" and not result["is_error"], result
    assert "POST /v1/messages 200" in server.log_text()
    return result["result"]


def test_claude_code_runs_bash_and_quotes_the_output(lmparse_server, tmp_path):
    events = run_claude(lmparse_server, tmp_path, 'Use the Bash tool with command="echo lmparse-agent-42" and tell '
                        "me what it printed", "Bash")
    calls = [b for b in blocks(events, "assistant") if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [("Bash", {"command": "echo lmparse-agent-42"})]
    results = [b for b in blocks(events, "user") if b.get("type") == "tool_result"]
    assert len(results) == 1 and not results[0].get("is_error") and "lmparse-agent-42" in str(results[0]["content"])
    assert results[0]["tool_use_id"] == calls[0]["id"]
    assert [b["type"] for b in blocks(events, "assistant")][0] == "thinking"  # Qwen3 thinks by default
    answer = check_clean_run(lmparse_server, events)
    assert "Bash returned" in answer and "lmparse-agent-42" in answer


def png(width: int, height: int) -> bytes:
    """A real RGB PNG (gradient), written here: no image data is committed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\0" + bytes((x * 4 + y) % 256 for x in range(width) for _ in range(3)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_claude_code_reads_a_png(lmparse_server, tmp_path):
    picture = tmp_path / "work" / "chart.png"
    picture.parent.mkdir(parents=True)
    picture.write_bytes(png(320, 200))
    events = run_claude(lmparse_server, tmp_path, f"Use the Read tool with file_path={picture} and describe it", "Read")
    calls = [b for b in blocks(events, "assistant") if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [("Read", {"file_path": str(picture)})]
    results = [b for b in blocks(events, "user") if b.get("type") == "tool_result"]
    assert len(results) == 1 and not results[0].get("is_error")
    assert any(part.get("type") == "image" for part in results[0]["content"])  # Claude Code sent the image
    answer = check_clean_run(lmparse_server, events)
    assert "Read returned" in answer and "[image: image/png" in answer  # its placeholder reached the model
