"""RequestError: a client mistake, reported as a 4xx in the API's own error shape.

A server-side failure is a ``RequestError`` with a 5xx status too, but its message (an
exception's text, an upstream engine's URL or error) is for the log only: ``public``
gives what the client sees, "internal error" and the request id the log line carries."""

from __future__ import annotations

import re

__all__ = ["RequestError", "field_of", "openai_error_body", "anthropic_error_body", "public", "internal_message"]

_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]]*) (?:must|is|names|has|needs)\b")


class RequestError(ValueError):
    """``param`` names the offending field (``messages[2].tool_calls[0].function.arguments``).
    ``public_message``: a 5xx whose message is for the client too (see ``public``)."""

    public_message = False

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


def internal_message(request_id: str) -> str:
    """What a client is told about a failure on the server's side."""
    return f"internal error (request id {request_id})"


def public(exc: RequestError, request_id: str) -> RequestError:
    """``exc`` as the client may see it: a 5xx says only "internal error" and the request
    id (503, the server being busy, is the client's business and says so)."""
    if exc.status < 500 or exc.status == 503 or exc.public_message:
        return exc
    return RequestError(internal_message(request_id), None, exc.status, exc.kind, exc.code)
