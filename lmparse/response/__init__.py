"""Response parsers: the top-level router of one response."""

from . import harmony  # noqa: F401  (registers gpt-oss; openai-harmony is imported only when one is created)
from . import template  # noqa: F401  (registers response-template)
from .base import BaseResponseParser, ResponseParser, fold_deltas

__all__ = ["ResponseParser", "BaseResponseParser", "fold_deltas"]
