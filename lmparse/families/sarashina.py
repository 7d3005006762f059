"""SoftBank Sarashina: ``<|tool_calls|>[{'name': .., 'arguments': {..}}]`` Python literals, no reasoning markers."""

from __future__ import annotations

from ..tools.dialects.sarashina import SarashinaToolParser
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "sarashina", "Sarashina: <|tool_calls|>[{'name': .., 'arguments': {..}}] Python literals (or a leading bare list)",
    tool=Parser("sarashina", SarashinaToolParser),
    peers=Peers(smg=("sarashina",)),
    verified="no Sarashina template or vocabulary here: SMG's sarashina parser and its unit tests (PROTOCOLS.md)",
)
