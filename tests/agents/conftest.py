"""Real agent clients against `lmparse serve`: run by `make test-agents`, which installs the
pinned CLIs (scripts/setup_agents.sh) and names their directory in $LMPARSE_AGENTS_BIN.
Under a plain `pytest` these tests skip; under `make test-agents` a missing client fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..support.server import LiveServer
from ..support.suites import skip_folder_unless

AGENTS_BIN = os.environ.get("LMPARSE_AGENTS_BIN")
API_KEY = "agent-test-key"


def pytest_collection_modifyitems(config, items):
    skip_folder_unless(AGENTS_BIN, "agents", "agent clients run under `make test-agents` ($LMPARSE_AGENTS_BIN unset)", items)


def client_path(name: str) -> str:
    path = Path(AGENTS_BIN or "") / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"{name} is not installed in $LMPARSE_AGENTS_BIN ({AGENTS_BIN}); run scripts/setup_agents.sh")
    return str(path)


@pytest.fixture(scope="session")
def lmparse_server():
    """The simulated Qwen3 behind an API key, streaming at a model-like pace."""
    live = LiveServer(["--family", "qwen3", "--token-rate", "400", "--api-key", API_KEY, "--log-level", "info"])
    yield live
    live.stop()


def private_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: a private HOME, no proxy or key of the machine's, telemetry off."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb",
           "NO_COLOR": "1", "TMPDIR": str(home)}
    env.update(extra)
    return env
