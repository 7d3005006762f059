"""Request guards in front of the routes: the Host allow-list (DNS rebinding) and CORS.

A server bound to loopback answers only requests whose Host header names loopback: a web page
on a rebinding domain (evil.example resolving to 127.0.0.1) reaches the port but names its own
host, and gets a 403 in the API's error shape.  ``--allowed-hosts`` widens or lifts the list.
CORS is off unless ``--cors-origins`` names the origins a browser may call from.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from .errors import RequestError
from .transport import anthropic_path, error_response

__all__ = ["HostCheck", "LOOPBACK_HOSTS", "default_allowed_hosts", "with_guards"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def default_allowed_hosts(bind_host: str) -> tuple[str, ...] | None:
    """The loopback names when the server is bound to loopback; None (any Host) otherwise."""
    return LOOPBACK_HOSTS if bind_host.strip("[]") in LOOPBACK_HOSTS else None


def host_name(header: str) -> str:
    """A Host header's name without its port, lowercased (``[::1]:8000`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostCheck:
    """ASGI middleware: an HTTP request whose Host is not allowed is refused before any route;
    a WebSocket handshake is closed (code 1008) before it is accepted."""

    def __init__(self, app: Any, allowed: Collection[str]) -> None:
        self.app = app
        self.allowed = frozenset(h.lower().strip("[]") for h in allowed)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
            host = host_name(headers.get("host", ""))
            if host not in self.allowed:
                error = RequestError(f"Host {host or '(none)'!r} is not allowed here (--allowed-hosts)", None,
                                     status=403, kind="permission_error")
                await error_response(error, anthropic_path(scope.get("path", ""), headers))(scope, receive, send)
                return
        elif scope["type"] == "websocket":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
            if host_name(headers.get("host", "")) not in self.allowed:
                await send({"type": "websocket.close", "code": 1008})
                return
        await self.app(scope, receive, send)


def with_guards(app: Any, allowed_hosts: Collection[str] | None, cors_origins: Sequence[str] | None) -> Any:
    """``app`` behind CORS (when origins are given) and the Host check (when a list is given)."""
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app = CORSMiddleware(app, allow_origins=list(cors_origins), allow_methods=["GET", "POST", "DELETE"],
                             allow_headers=["*"], expose_headers=["*"])
    if allowed_hosts is not None and "*" not in allowed_hosts:
        app = HostCheck(app, allowed_hosts)
    return app
