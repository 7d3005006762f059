"""Clients that speak Chat Completions (`/v1/chat/completions`), pinned like the others:
Qwen Code (`qwen -p`), opencode (`opencode run`), Kilo CLI (`kilo run`) and Simon Willison's
`llm` (a Python function as a tool).  Each makes the model call a tool, runs it, sends the result back, and
the final answer quotes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


def run(cmd: list[str], workdir: Path, env: dict[str, str]) -> str:
    workdir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def served_chat(server) -> int:
    return server.log_text().count("POST /v1/chat/completions 200")


def test_qwen_code_runs_its_shell_tool(lmparse_server, tmp_path):
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False}}))
    env = private_env(home, OPENAI_BASE_URL=lmparse_server.url + "/v1", OPENAI_API_KEY=API_KEY, OPENAI_MODEL="qwen3",
                      QWEN_TELEMETRY_ENABLED="false", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    before = served_chat(lmparse_server)
    out = run([client_path("qwen"), "-p", 'Use run_shell_command with command="echo lmparse-agent-42"', "--yolo",
               "--auth-type", "openai", "--output-format", "json"], tmp_path / "work", env)
    events = json.loads(out)
    calls = [b for e in events if e.get("type") == "assistant" for b in e["message"]["content"]
             if b.get("type") == "tool_use"]
    assert [(c["name"], c["input"].get("command")) for c in calls] == [("run_shell_command", "echo lmparse-agent-42")]
    results = [b for e in events if e.get("type") == "user" for b in e["message"]["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert len(results) == 1 and "lmparse-agent-42" in str(results[0]["content"])
    result = events[-1]
    assert result["type"] == "result" and not result["is_error"]
    assert "run_shell_command returned" in result["result"] and "lmparse-agent-42" in result["result"]
    assert served_chat(lmparse_server) >= before + 2


def run_opencode_like(server, tmp_path: Path, binary: str, config: str, schema: str, env: dict[str, str],
                      *flags: str) -> tuple[list[dict], str]:
    """opencode and its fork Kilo: the same config shape (``config`` in the work directory, the
    server as an OpenAI-compatible provider) and ``run --format json`` events.  Returns the
    tool parts and the answer's text, after checking that the tool loop took two requests at least."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / config).write_text(json.dumps({
        "$schema": schema, "model": "lmparse/qwen3", "autoupdate": False,
        "share": "disabled", "provider": {"lmparse": {
            "npm": "@ai-sdk/openai-compatible", "name": "lmparse",
            "options": {"baseURL": server.url + "/v1", "apiKey": API_KEY},
            "models": {"qwen3": {"name": "qwen3", "tool_call": True}}}}}))
    before = served_chat(server)
    # opencode escapes double quotes in the prompt it forwards: single quotes keep the command whole.
    out = run([client_path(binary), "run", "--format", "json", *flags, "Use bash with command='echo lmparse-agent-42'"],
              workdir, env)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    tools = [e["part"] for e in events if e.get("type") == "tool_use"]
    answer = "".join(e["part"]["text"] for e in events if e.get("type") == "text")
    assert served_chat(server) >= before + 2
    return tools, answer


def test_opencode_runs_its_bash_tool(lmparse_server, tmp_path):
    env = private_env(tmp_path / "home", OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                      OPENCODE_DISABLE_SHARE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1")
    tools, answer = run_opencode_like(lmparse_server, tmp_path, "opencode", "opencode.json",
                                      "https://opencode.ai/config.json", env)
    assert [(t["tool"], t["state"]["input"]["command"], t["state"]["status"]) for t in tools] == [
        ("bash", "echo lmparse-agent-42", "completed")]
    assert "lmparse-agent-42" in tools[0]["state"]["output"]
    assert "bash returned" in answer and "lmparse-agent-42" in answer


def test_kilo_runs_its_bash_tool(lmparse_server, tmp_path):
    # Kilo sends telemetry only when KILO_TELEMETRY_LEVEL is "all" (or its settings say so).
    env = private_env(tmp_path / "home", KILO_TELEMETRY_LEVEL="off", KILO_DISABLE_AUTOUPDATE="1",
                      KILO_DISABLE_MODELS_FETCH="1", KILO_DISABLE_SHARE="1", KILO_DISABLE_LSP_DOWNLOAD="1")
    tools, answer = run_opencode_like(lmparse_server, tmp_path, "kilo", "kilo.json", "https://app.kilo.ai/config.json",
                                      env, "--auto")
    assert [(t["tool"], t["state"]["input"]["command"], t["state"]["status"]) for t in tools] == [
        ("bash", "echo lmparse-agent-42", "completed")]
    assert tools[0]["state"]["output"].strip() == "lmparse-agent-42"
    assert "bash returned" in answer and "lmparse-agent-42" in answer


def test_llm_runs_a_python_function_tool(lmparse_server, tmp_path):
    user = tmp_path / "llm"
    user.mkdir()
    (user / "extra-openai-models.yaml").write_text(
        f'- model_id: lmparse-qwen3\n  model_name: qwen3\n  api_base: "{lmparse_server.url}/v1"\n'
        "  supports_tools: true\n  api_key_name: lmparse\n")  # without a key name llm sends no key to api_base
    env = private_env(tmp_path / "home", LLM_USER_PATH=str(user))
    function = ('def get_weather(city: str) -> str:\n    "Current weather for a city."\n'
                '    return f"lmparse-agent-42: 21 C and sunny in {city}"\n')
    out = run([client_path("llm"), "-m", "lmparse-qwen3", "--key", API_KEY, "--functions", function,
               "Call get_weather city=Paris"],
              tmp_path / "work", env)
    assert "get_weather returned" in out and "lmparse-agent-42: 21 C and sunny in Paris" in out
