"""Cline CLI (`cline`, pinned in package-lock.json) with `--yolo --json`, on `lmparse serve`'s
Chat Completions API (its `openai-compatible` provider) and Responses API (its `openai-native`
provider with a base URL): the model calls its run_commands tool, Cline runs it and sends the
output back, the answer quotes it, and the model then calls submit_and_exit, which the
`[SYSTEM]` notice Cline adds in yolo mode asks for.  That notice is a user turn: the simulated
model must not take it for the user's request (it would call submit_and_exit first)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


def cline_env(tmp_path: Path) -> dict[str, str]:
    settings = tmp_path / "home" / ".cline" / "data" / "settings"
    settings.mkdir(parents=True)
    (settings / "global-settings.json").write_text(json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}))
    # A local session backend: the default starts a hub daemon that outlives the run.
    return private_env(tmp_path / "home", CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1")


@pytest.mark.parametrize(("provider", "path"), [("openai-compatible", "/v1/chat/completions"),
                                                ("openai-native", "/v1/responses")])
def test_cline_runs_its_command_tool_then_submits(lmparse_server, tmp_path, provider, path):
    env, workdir = cline_env(tmp_path), tmp_path / "work"
    workdir.mkdir()
    cline = client_path("cline")
    subprocess.run([cline, "auth", "-p", provider, "-k", API_KEY, "-m", "qwen3", "-b", lmparse_server.url + "/v1"],
                   cwd=workdir, env=env, check=True, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    before = lmparse_server.log_text().count(f"POST {path} 200")
    done = subprocess.run([cline, "--yolo", "--json", "-t", str(TIMEOUT - 30),
                           'Use run_commands with commands="echo lmparse-agent-42"'],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    ended = [e["event"] for e in lines if e.get("type") == "agent_event" and e["event"]["type"] == "content_end"]
    tools = [e for e in ended if e["contentType"] == "tool"]
    assert [t["toolName"] for t in tools] == ["run_commands", "submit_and_exit"]
    assert tools[0]["output"][0]["query"] == "echo lmparse-agent-42"
    assert tools[0]["output"][0]["result"].strip() == "lmparse-agent-42" and tools[0]["output"][0]["success"]
    [answer] = [e["text"] for e in ended if e["contentType"] == "text"]
    assert "run_commands returned" in answer and "lmparse-agent-42" in answer
    result = lines[-1]
    assert result["type"] == "run_result" and result["finishReason"] == "completed", result
    log = lmparse_server.log_text()
    assert log.count(f"POST {path} 200") >= before + 3 and f"POST {path} 4" not in log
