"""The machine a run measured on: CPU model, cores, Python, the checkout's commit."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

__all__ = ["machine"]

ROOT = Path(__file__).resolve().parents[2]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "?"
    return done.stdout.strip() or "?"


def machine() -> dict:
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform(),
            "commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M %z")}
