"""Suites that need something built first (agent clients, a llama-server): skipped unless it is named."""

from __future__ import annotations

import os
from typing import Any

import pytest


def skip_folder_unless(present: str | None, folder: str, reason: str, items: list[Any]) -> None:
    """Mark every collected test under ``tests/<folder>/`` skipped (``reason``) when ``present`` is empty."""
    if present:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if f"tests/{folder}/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)
