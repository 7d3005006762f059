"""lmparse's parsers inside LMDeploy 0.18: ``lmparse-<name>`` tool and reasoning parsers.

LMDeploy has no plugin hook, so importing this package registers them (``register()``,
idempotent) and ``python -m lmparse.integrations.lmdeploy serve api_server ...`` runs
LMDeploy's own CLI with them registered. See ``_parsers`` for how a request reaches lmparse,
and ``_harmony`` for gpt-oss (``lmparse-gpt-oss``, when openai-harmony is installed).
"""

from __future__ import annotations

from ._parsers import PREFIX, DefaultResponseParser, LmparseResponseParser, registered_names
from ._parsers import register as _register_parsers

__all__ = ["PREFIX", "DefaultResponseParser", "LmparseResponseParser", "register", "registered_names"]


def register() -> None:
    """Register every ``lmparse-<name>`` into LMDeploy's registries; safe to call again."""
    _register_parsers()
    try:
        from . import _harmony
    except ImportError:  # no openai-harmony: LMDeploy registers no gpt-oss parser either
        return
    _harmony.register()


register()
