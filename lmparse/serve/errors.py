"""RequestError: a client mistake, reported as a 4xx in the API's own error shape."""

from __future__ import annotations

import re

__all__ = ["RequestError", "field_of", "openai_error_body", "anthropic_error_body"]

_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]]*) (?:must|is|names|has|needs)\b")


class RequestError(ValueError):
    """``param`` names the offending field (``messages[2].tool_calls[0].function.arguments``)."""

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 kind: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param if param is not None else field_of(message)
        self.status = status
        self.kind = kind
        self.code = code


def field_of(message: str) -> str | None:
    """The field a validation message starts with (lmparse.request's messages do)."""
    m = _FIELD.match(message)
    return m.group(1) if m else None


def openai_error_body(message: str, param: str | None = None, kind: str = "invalid_request_error",
                      code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def anthropic_error_body(message: str, kind: str = "invalid_request_error") -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}
