"""setuptools' build backend, plus mypy (for mypyc) among the build requirements when the
compiled core is asked for: ``LMPARSE_COMPILE=1`` in the environment or ``-C compile=1`` to pip
or ``python -m build``.  Without it the wheel is the pure ``py3-none-any`` one and nothing more
is installed to build it."""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook this module does not change)

MYPYC = "mypy>=1.11"
_FLAG = "LMPARSE_COMPILE"


def _wanted(config_settings: dict[str, Any] | None) -> bool:
    asked = str((config_settings or {}).get("compile", "")).lower() in ("1", "true", "yes")
    return asked or os.environ.get(_FLAG) == "1"


def _setuptools_settings(config_settings: dict[str, Any] | None) -> dict[str, Any] | None:
    return {k: v for k, v in (config_settings or {}).items() if k != "compile"} or None


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    wanted = _wanted(config_settings)
    saved = os.environ.pop(_FLAG, None)  # (setuptools runs setup.py here, before mypy is installed)
    try:
        base = _setuptools.get_requires_for_build_wheel(_setuptools_settings(config_settings))
    finally:
        if saved is not None:
            os.environ[_FLAG] = saved
    return [*base, MYPYC] if wanted else base


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    if _wanted(config_settings):
        os.environ[_FLAG] = "1"
    return _setuptools.build_wheel(wheel_directory, _setuptools_settings(config_settings), metadata_directory)
