"""Response parsers: the top-level router of one response."""

from .base import BaseResponseParser, ResponseParser, fold_deltas

__all__ = ["ResponseParser", "BaseResponseParser", "fold_deltas"]
