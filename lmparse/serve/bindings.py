"""Model bindings: a family's parsers, the engine that generates for it, the names it answers to.

``simulated_binding`` serves a family with the simulated model (its real tokenizer and
chat template when the test data is at hand); ``upstream_binding`` puts a real engine
(vLLM, SGLang, LMDeploy, llama.cpp) behind it.  ``names`` are the model names requests
may use: exact names and glob patterns (``claude-*``); the family's name by default.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..factory import create_parser
from ..request import ParserRequest
from ..response.base import ResponseParser
from .engines.base import Engine
from .engines.simulated import SimulatedEngine
from .engines.special import family_markers as _family_markers
from .families import Family, missing_parsers
from .models import is_pattern
from .openai import REASONING_FIELDS
from .templates import load_template
from .tokenizer import load_tokenizer, testdata_dir

__all__ = ["ModelBinding", "simulated_binding", "upstream_binding"]

logger = logging.getLogger("lmparse.serve")

class ModelBinding:
    """One served model: a family's parsers, its engine, and the names it answers to."""

    def __init__(self, names: str | Sequence[str], family: Family, engine: Engine,
                 reasoning_field: str = "reasoning_content") -> None:
        if reasoning_field not in REASONING_FIELDS:
            raise ValueError(f"reasoning field must be one of {', '.join(REASONING_FIELDS)}")
        _require_parsers(family)
        self.names = [names] if isinstance(names, str) else list(names) or [family.name]
        # The id it is listed under: its first exact name, or the family's.
        self.name = next((n for n in self.names if not is_pattern(n)), family.name)
        if self.name not in self.names:
            self.names.insert(0, self.name)
        self.family = family
        self.engine = engine
        self.reasoning_field = reasoning_field
        # One parser now, so what parsers load once per process (Harmony's encoding: 0.2 s
        # with the GIL held) loads at startup, not under the first request.
        self.new_parser(ParserRequest.accept_all())

    def new_parser(self, request: ParserRequest) -> ResponseParser:
        f = self.family
        return create_parser(tool_parser=f.tool_parser, reasoning_parser=f.reasoning_parser,
                             response_parser=f.response_parser, request=request)


def _require_parsers(family: Family) -> None:
    """Refuse a family with unregistered parsers."""
    missing = missing_parsers(family)
    if missing:
        raise ValueError(f"family {family.name} needs {' and '.join(missing)}, which is not registered")


def simulated_binding(family: Family, token_rate: float = 0.0, reasoning_field: str = "reasoning_content",
                      names: Sequence[str] | None = None) -> ModelBinding:
    """A family served by the simulated engine, with its real tokenizer and template when present."""
    _require_parsers(family)
    tokenizer = load_tokenizer(family.tokenizer, family.name, _family_markers(family))
    template = load_template(testdata_dir(), family.template, family.tokenizer)
    engine = SimulatedEngine(family, tokenizer, template, token_rate)
    binding = ModelBinding(names or [family.name], family, engine, reasoning_field)
    logger.info("model %s: simulated %s, tokenizer %s, template %s", ", ".join(binding.names), family.name,
                tokenizer.name, template.name if template else "ChatML fallback")
    return binding


def upstream_binding(family: Family, engine: str, url: str, model: str | None = None,
                     reasoning_field: str = "reasoning_content", names: Sequence[str] | None = None,
                     chat_template: str | None = None, max_tokens: int | None = None,
                     transport: Any = None) -> ModelBinding:
    """A family served by a real engine at ``url`` (vllm, sglang, lmdeploy, llamacpp); lmparse
    renders the prompt with the family's chat template (or ``chat_template``, a jinja file)."""
    from .engines.upstream import DEFAULT_MAX_TOKENS, UpstreamEngine
    from .templates import ChatTemplate

    _require_parsers(family)
    tokenizer = load_tokenizer(family.tokenizer, family.name, _family_markers(family))
    template: ChatTemplate | None
    if chat_template:
        template = ChatTemplate(Path(chat_template).read_text(encoding="utf-8"), Path(chat_template).name)
    else:
        template = load_template(testdata_dir(), family.template, family.tokenizer)
    upstream = UpstreamEngine(engine, url, family, tokenizer, template, model, max_tokens or DEFAULT_MAX_TOKENS,
                              transport=transport)
    binding = ModelBinding(names or [family.name], family, upstream, reasoning_field)
    logger.info("model %s: %s at %s (%s), template %s", ", ".join(binding.names), engine, url, family.name,
                template.name if template else "ChatML fallback")
    return binding
