"""lmparse's parsers inside LMDeploy 0.18: ``lmparse-<name>`` tool and reasoning parsers.

LMDeploy has no plugin hook, so importing this package registers them (``register()``,
idempotent) and ``python -m lmparse.integrations.lmdeploy serve api_server ...`` runs
LMDeploy's own CLI with them registered. See ``_parsers`` for how a request reaches lmparse.
"""

from __future__ import annotations

from ._parsers import PREFIX, DefaultResponseParser, LmparseResponseParser, register, registered_names

__all__ = ["PREFIX", "DefaultResponseParser", "LmparseResponseParser", "register", "registered_names"]

register()
