"""Continue CLI (`cn`, `@continuedev/cli` pinned in package-lock.json), headless (`-p --auto`)
with a config.yaml of one model, on `lmparse serve`'s Chat Completions API (provider
`openai`) and Anthropic Messages API (provider `anthropic`): the model calls its Bash tool,
Continue runs it and sends the output back, and the answer quotes it."""

from __future__ import annotations

import subprocess

import pytest

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


@pytest.mark.parametrize(("provider", "base", "path"), [("openai", "/v1", "/v1/chat/completions"),
                                                        ("anthropic", "/v1/", "/v1/messages")])
def test_continue_runs_its_bash_tool(lmparse_server, tmp_path, provider, base, path):
    config = tmp_path / "config.yaml"
    config.write_text(f"""\
name: lmparse
version: 0.0.1
schema: v1
models:
  - name: qwen3
    provider: {provider}
    model: qwen3
    apiBase: {lmparse_server.url}{base}
    apiKey: {API_KEY}
    roles: [chat]
    capabilities: [tool_use]
""")
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = private_env(tmp_path / "home", CONTINUE_CLI_ENABLE_TELEMETRY="0", CONTINUE_METRICS_ENABLED="0")
    before = lmparse_server.log_text().count(f"POST {path} 200")
    done = subprocess.run([client_path("cn"), "-p", "--auto", "--config", str(config),
                           'Use Bash with command="echo lmparse-agent-42"'], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    # "returned" comes only from the answer to a tool result; the output lacks the command's "echo".
    assert "Bash returned 'lmparse-agent-42" in done.stdout, done.stdout[-3000:]
    log = lmparse_server.log_text()
    assert log.count(f"POST {path} 200") >= before + 2 and f"POST {path} 4" not in log
