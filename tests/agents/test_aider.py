"""aider (`aider-chat`, pinned with hashes in aider-requirements.txt, in a venv of its own) on
`lmparse serve`'s Chat Completions API through LiteLLM's `openai/` provider.  aider calls no
tools: a one-shot `--message` run gets a reply it accepts, streamed and not, and shows the
model's reasoning in its THINKING section."""

from __future__ import annotations

import subprocess
import urllib.request

import pytest

from .conftest import API_KEY, client_path, private_env

TIMEOUT = 240


def requests_served(server, stream: bool) -> float:
    """lmparse_requests_total for Chat Completions with the given stream flag."""
    with urllib.request.urlopen(server.url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    wanted = f'lmparse_requests_total{{api="openai",stream="{str(stream).lower()}"}} '
    return sum(float(line[len(wanted):]) for line in text.splitlines() if line.startswith(wanted))


@pytest.mark.parametrize("stream", [True, False])
def test_aider_accepts_a_reply(lmparse_server, tmp_path, stream):
    home = tmp_path / "home"
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True)
    # aider fetches LiteLLM's model price table once a day into this cache: a fresh empty one
    # keeps the run off the network.
    (caches / "model_prices_and_context_window.json").write_text("{}")
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = private_env(home, OPENAI_API_BASE=lmparse_server.url + "/v1", OPENAI_API_KEY=API_KEY,
                      LITELLM_LOCAL_MODEL_COST_MAP="True")
    before = requests_served(lmparse_server, stream)
    done = subprocess.run([client_path("aider"), "--model", "openai/qwen3", "--no-git", "--analytics-disable",
                           "--no-check-update", "--no-show-release-notes", "--no-show-model-warnings", "--yes-always",
                           "--no-pretty", "--no-fancy-input", "--stream" if stream else "--no-stream",
                           "--message", "Say hello to lmparse-agent-42"],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    out = done.stdout
    assert "THINKING" in out and "No tool is needed here; I will answer directly." in out, out[-3000:]
    assert 'You said: "Say hello to lmparse-agent-42' in out and "simulated qwen3 model" in out, out[-3000:]
    assert "Tokens:" in out  # aider's usage line: the reply was taken as complete
    assert requests_served(lmparse_server, stream) == before + 1
