"""A chat request's sampling options, whichever API it came through: checked, as one ``Sampling``.

Each API's own fields (OpenAI's temperature, top_p, penalties, seed, logit_bias;
Anthropic's temperature, top_p, top_k) are read with the fields engines add that the
SDKs send through ``extra_body`` at the top level of the body (top_k, min_p,
repetition_penalty, stop_token_ids, seed).  ``extra_fields`` keeps the engine-specific
ones that some engine's allow-list names (``bodies.EXTRA_FIELDS``); the rest of what a
client adds is ignored, as OpenAI's newer fields are.  A wrong type or range is a 400
naming the field.
"""

from __future__ import annotations

from typing import Any

from .engines.base import Sampling
from .engines.bodies import EXTRA_FIELDS
from .validate import optional_int, optional_number, require

__all__ = ["parse_sampling", "extra_fields"]

_ALLOWED_EXTRAS = frozenset(field for fields in EXTRA_FIELDS.values() for field in fields)

# Ranges the engines share (the API's own checks, e.g. Anthropic's temperature up to 1, ran before).
_NUMBERS = (("temperature", 0, 2), ("top_p", 0, 1), ("min_p", 0, 1), ("presence_penalty", -2, 2),
            ("frequency_penalty", -2, 2), ("repetition_penalty", 0, 2))


def _logit_bias(raw: Any) -> dict[int, float]:
    """OpenAI's ``logit_bias``: token ids (as strings) to a bias between -100 and 100."""
    if raw is None:
        return {}
    require(isinstance(raw, dict), "logit_bias must be an object mapping token ids to biases", "logit_bias")
    bias: dict[int, float] = {}
    for key, value in raw.items():
        ok = isinstance(key, str) and key.isdigit()
        ok = ok and isinstance(value, (int, float)) and not isinstance(value, bool) and -100 <= value <= 100
        require(ok, f"logit_bias must map token ids to numbers between -100 and 100, got {key!r}: {value!r}",
                "logit_bias")
        bias[int(key)] = value
    return bias


def _token_ids(raw: Any, field: str) -> list[int]:
    if raw is None:
        return []
    ok = isinstance(raw, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in raw)
    require(ok, f"{field} must be a list of token ids (integers >= 0)", field)
    return list(raw)


def parse_sampling(body: dict[str, Any]) -> Sampling:
    """The sampling options of a request body (None where the client set none)."""
    numbers = {field: optional_number(body, field, low, high) for field, low, high in _NUMBERS}
    return Sampling(top_k=optional_int(body, "top_k", minimum=-1),
                    seed=optional_int(body, "seed", minimum=-(2**63), maximum=2**63 - 1),
                    logit_bias=_logit_bias(body.get("logit_bias")),
                    stop_token_ids=_token_ids(body.get("stop_token_ids"), "stop_token_ids"), **numbers)


def extra_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The top-level fields some engine's allow-list takes, as the client sent them."""
    return {field: value for field, value in body.items() if field in _ALLOWED_EXTRAS}
