"""Codex (`@openai/codex`, pinned in package-lock.json) on `lmparse serve`'s Responses API:
`codex exec --json` with a custom model provider in a private CODEX_HOME makes the model call
its shell tool (exec_command), runs it, sends the output back as a function_call_output
(with the reasoning replayed as an encrypted_content blob: Codex stores nothing server
side), and the final answer quotes the output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


def codex_home(path: Path, url: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.toml").write_text(f'''\
model = "qwen3"
model_provider = "lmparse"
check_for_update_on_startup = false

[model_providers.lmparse]
name = "lmparse"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "LMPARSE_API_KEY"

[analytics]
enabled = false

[feedback]
enabled = false
''')
    return path


def test_codex_runs_its_shell_tool_and_quotes_the_output(lmparse_server, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = private_env(tmp_path / "home", CODEX_HOME=str(codex_home(tmp_path / "codex", lmparse_server.url)),
                      LMPARSE_API_KEY=API_KEY)
    prompt = 'Use exec_command with cmd="echo lmparse-agent-42" and tell me what it printed'
    done = subprocess.run([client_path("codex"), "exec", "--json", "--skip-git-repo-check", prompt], cwd=workdir,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    items = [e["item"] for e in events if e["type"] == "item.completed"]
    commands = [i for i in items if i["type"] == "command_execution"]
    assert len(commands) == 1 and "echo lmparse-agent-42" in commands[0]["command"]
    assert commands[0]["exit_code"] == 0 and commands[0]["aggregated_output"].strip() == "lmparse-agent-42"
    assert [i["type"] for i in items if i["type"] == "reasoning"] == ["reasoning", "reasoning"]
    [answer] = [i["text"] for i in items if i["type"] == "agent_message"]
    assert "exec_command returned" in answer and "lmparse-agent-42" in answer
    assert events[-1]["type"] == "turn.completed"
    log = lmparse_server.log_text()
    assert log.count("POST /v1/responses 200") >= 2 and "POST /v1/responses 4" not in log
