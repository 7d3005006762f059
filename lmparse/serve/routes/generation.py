"""The flow every generating route shares: check, convert, start, then stream or fold.

Every request is validated, its prompt prepared and its parser built before the first
byte is sent, so a bad request is a clean 4xx and never half a stream.  A generation over
the concurrency limit is a 503 with ``Retry-After``; an upstream engine's failure before
it answers is a 502; a client that leaves first is logged as 499 and its generation stops.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..edge import CLIENT_LEFT, STOPPED, Edge, unless_client_leaves
from ..errors import RequestError
from ..inflight import SHUTTING_DOWN
from ..logs import request_log
from ..service import Parse
from ..transport import EventStream, closing_stream, json_response

__all__ = ["Generating"]

logger = logging.getLogger("lmparse.serve")

_IGNORED_TOOLS_HEADER = "x-lmparse-ignored-tools"
_TOOL_TYPE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _ignored_tools(api: str, kinds: list[str], warned: set[str]) -> dict[str, str]:
    """Hosted tools a request offered that no local model can run: a header, and a
    warning the first time each kind is seen.  Kinds are client text: only tool-type
    shaped names are repeated (a header never carries CR/LF), at most 16 per response,
    and the warned-about set stays small whatever clients invent."""
    shown = [k if _TOOL_TYPE.fullmatch(k) else "other" for k in dict.fromkeys(kinds)][:16]
    if not shown:
        return {}
    for kind in shown:
        if kind not in warned and len(warned) < 64:
            warned.add(kind)
            logger.warning("%s: tools of type %r are hosted tools no local model can run; they are not "
                           "offered to the model (header %s)", api, kind, _IGNORED_TOOLS_HEADER)
    return {_IGNORED_TOOLS_HEADER: ",".join(dict.fromkeys(shown))}


class Generating:
    """Serves a generating request of one API: ``await generating(request, api, module, parse)``,
    where ``module`` has the API's ``stream_response`` / ``complete_response`` and ``parse``
    converts its body."""

    def __init__(self, edge: Edge) -> None:
        self.edge = edge
        self.service = edge.service
        self._warned_tools: set[str] = set()

    async def __call__(self, request: Request, api: str, module: Any, parse: Parse) -> Response | EventStream:
        """At most ``max_concurrency`` generations at once; a request over it is a 503 with
        ``Retry-After`` in the API's error shape (a stream holds its slot until it closes)."""
        refused = self.service.admit()
        if refused is not None:
            return self.edge.failed(request, api, refused, headers={"Retry-After": "1"})
        response = None
        try:
            response = await self._start(request, api, module, parse)
            return response
        finally:
            if not isinstance(response, EventStream):
                self.service.release()  # a stream gives its slot back when it closes

    async def _start(self, request: Request, api: str, module: Any, parse: Parse) -> Response | EventStream:
        service, log = self.service, request_log(request.scope)
        try:
            body, binding = await self.edge.model_request(request)
            generation = await service.offload(service.prepare, api, parse, body, binding)
            stream = generation.stream
            # An upstream engine's failure is a 502 before any byte; a client that leaves while
            # the engine has not answered yet, or the end of a shutdown's grace, stops the wait.
            opened = await unless_client_leaves(request, stream.open(), service.in_flight.ended)
            if opened is CLIENT_LEFT or opened is STOPPED:
                await stream.aclose()
                if opened is STOPPED:
                    raise RequestError(SHUTTING_DOWN, status=503, kind="server_error")
                log.reason = "the client went away before the engine answered"
                return Response(status_code=499)
        except RequestError as exc:
            return self.edge.failed(request, api, exc)
        opts = generation.options
        headers = _ignored_tools(api, getattr(opts, "ignored_tools", []), self._warned_tools)
        runner = log.runner = service.run(generation, api, log.request_id)
        if opts.stream:
            return EventStream(closing_stream(module.stream_response(runner, opts), stream),
                               on_close=service.closed(runner), headers=headers)
        try:
            answer = await unless_client_leaves(request, module.complete_response(runner, opts))
            if answer is CLIENT_LEFT:
                log.reason = "the client went away; generation cancelled"
                return Response(status_code=499)  # nobody reads it: the code is for the access line
            return json_response(answer, headers=headers)
        except RequestError as exc:  # the engine failed, or the server is shutting down
            return self.edge.failed(request, api, exc)
        except Exception as exc:
            logger.exception("request %s: generation failed", log.request_id)
            return self.edge.failed(request, api, RequestError(f"generation failed: {exc}", status=500,
                                                               kind="server_error"))
        finally:
            service.finished(runner)
