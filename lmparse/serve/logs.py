"""Logging for ``lmparse serve``: one access line per request, as text or JSON.

``AccessLog`` is ASGI middleware: it times each HTTP request and, once its response has
ended (a stream included), logs method, path, status, duration and what the handler
noted in the request's ``RequestLog`` (model, family, token counts, the reason of a
4xx).  ``configure`` sets up the root logger once for lmparse's and uvicorn's records:
``text`` (``LEVEL: logger: message``) or ``json`` (one object per line, the access
fields as keys).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["AccessLog", "RequestLog", "configure", "request_log", "new_request_id", "access_line", "LOG_FORMATS"]

LOG_FORMATS = ("text", "json")
access_logger = logging.getLogger("lmparse.access")
_SCOPE_KEY = "lmparse.request_log"


class RequestLog:
    """What a handler knows about its request, for the access line."""

    __slots__ = ("request_id", "model", "family", "runner", "reason", "prompt_tokens")

    def __init__(self, request_id: str = "") -> None:
        self.request_id = request_id  # sent as x-request-id; a 5xx body names it, the log line has the detail
        self.model: str | None = None
        self.family: str | None = None
        self.runner: Any = None  # its usage gives the token counts once the response ends
        self.reason: str | None = None
        self.prompt_tokens: int | None = None  # count_tokens has no runner


def request_log(scope: MutableMapping[str, Any]) -> RequestLog:
    """The request's log record (made on first use outside the middleware, e.g. in tests)."""
    record = scope.get(_SCOPE_KEY)
    if record is None:
        record = scope[_SCOPE_KEY] = RequestLog(new_request_id())
    return record


class AccessLog:
    """The outermost middleware; ``shut_down(grace)``, when the app set one, begins the
    app's graceful shutdown (``create_app`` sets it, the server command calls it)."""

    shut_down: Callable[[float], None] | None = None

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record = scope[_SCOPE_KEY] = RequestLog(new_request_id())
        status = 500
        started = time.perf_counter()
        id_header = (b"x-request-id", record.request_id.encode())

        async def send_status(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            _log(scope, record, status, time.perf_counter() - started)


def new_request_id() -> str:
    """A request's id: random, so it tells nothing about the server or other requests."""
    return "req_" + secrets.token_hex(12)


def access_line(method: str, path: str, record: RequestLog, status: int, seconds: float) -> None:
    """An access line for what is not an HTTP request (a WebSocket turn: method ``WS``)."""
    _log({"method": method, "path": path}, record, status, seconds)


def _log(scope: dict, record: RequestLog, status: int, seconds: float) -> None:
    fields: dict[str, Any] = {"method": scope.get("method"), "path": scope.get("path"), "status": status,
                              "duration_ms": round(seconds * 1000, 1), "request_id": record.request_id}
    if record.model is not None:
        fields["model"] = record.model
    if record.family is not None:
        fields["family"] = record.family
    usage = getattr(record.runner, "usage", None)
    if usage is not None:
        fields["prompt_tokens"] = usage.prompt_tokens
        fields["completion_tokens"] = usage.completion_tokens
        if not record.runner.completed and status < 400:
            fields["cancelled"] = True  # the client left (or the engine failed) before the end
    elif record.prompt_tokens is not None:
        fields["prompt_tokens"] = record.prompt_tokens
    if record.reason is not None:
        fields["reason"] = record.reason
    text = " ".join(f"{k}={_quoted(v)}" for k, v in fields.items() if k not in ("method", "path", "status",
                                                                                  "duration_ms"))
    line = f'{fields["method"]} {_quoted(fields["path"])} {status} {fields["duration_ms"]}ms {text}'.rstrip()
    access_logger.log(logging.WARNING if status >= 500 else logging.INFO, line, extra={"access": fields})


_PLAIN = re.compile(r"[\w.:/@+,*-]+")


def _quoted(value: Any) -> str:
    """A field as is when it is plain, else as a JSON string: client text (a model name,
    a path with %0A in it) never breaks the line or fakes a field."""
    text = str(value)
    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=False)


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                               + f".{int(record.msecs):03d}Z", "level": record.levelname.lower(),
                               "logger": record.name}
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            out.update(access)
        else:
            out["message"] = record.getMessage()
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure(level: str = "info", fmt: str = "text") -> None:
    """Root logging for the server process (uvicorn's loggers propagate to it)."""
    if fmt not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonFormatter() if fmt == "json" else
                         logging.Formatter("%(levelname)s: %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
