"""Peer runner: LMDeploy's parser package (its default response parser with one of its tool parsers).

Runs inside ``bench/.peers/lmdeploy`` (made by ``scripts/setup_bench_peers.sh``),
never in the benchmark's own process: ``python -m bench.peer_lmdeploy --serve`` answers
the driver's requests one JSON line at a time (see the ``--serve`` section).  ``--check``
only imports; ``--names`` prints the tool parser names LMDeploy registers.

LMDeploy is installed with ``--no-deps``, so no torch.  Its parser modules are
pure Python, but three package modules on their import path pull in the engines;
they are bypassed without touching any file of the peer:

- ``lmdeploy/__init__.py`` (pipeline, engines: torch, transformers) and
  ``lmdeploy/serve/__init__.py`` (AsyncEngine): replaced by empty package
  modules whose ``__path__`` points at the real directories, so submodules
  import from the installed wheel unchanged;
- ``lmdeploy/utils.py`` imports torch and transformers at module level; the
  parser package only calls ``get_logger`` from it, replaced by
  ``logging.getLogger``.

Everything the hot path runs (response_parser.py, tool_parser/*.py,
reasoning_parser/*.py, openai/protocol.py) is LMDeploy's own code.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import time
import types
from typing import Any
from collections.abc import Iterator

from .fixtures import (
    TOOLS,
    CallReply,
    Reply,
    split_chunks,
    split_chunks_keeping,
)
from .timing import Settings, best_of
from .tokens import cut
from .verify import ReconstructionError, check_call, check_reconstruction

# The peer's registry names for the configuration lmparse runs as tool_parser="qwen",
# reasoning_parser="qwen3" (LMDeploy folds the Qwen3 reasoning parser into "default").
TOOL_PARSER = "qwen3"
REASONING_PARSER = "default"


_IMPORTED: tuple[Any, Any, Any, str] | None = None


def _import_parsers() -> tuple[Any, Any, Any, str]:
    """(ResponseParserManager, ToolParserManager, ChatCompletionRequest, version), imported once."""
    global _IMPORTED
    if _IMPORTED is not None:
        return _IMPORTED
    spec = importlib.util.find_spec("lmdeploy")
    if spec is None or spec.origin is None:
        raise ImportError("lmdeploy is not installed in this virtualenv")
    root = os.path.dirname(spec.origin)
    for name, path in (("lmdeploy", root), ("lmdeploy.serve", os.path.join(root, "serve"))):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules[name] = package
    utils = types.ModuleType("lmdeploy.utils")
    utils.get_logger = lambda name="lmdeploy", *args, **kwargs: logging.getLogger(name)
    sys.modules["lmdeploy.utils"] = utils

    from importlib.metadata import version

    from lmdeploy.serve.openai.protocol import ChatCompletionRequest
    from lmdeploy.serve.parsers import ResponseParserManager
    from lmdeploy.serve.parsers.tool_parser import ToolParserManager

    _IMPORTED = ResponseParserManager, ToolParserManager, ChatCompletionRequest, f"lmdeploy {version('lmdeploy')}"
    return _IMPORTED


def _parser_factory(tool_parser: str, reasoning_parser: str | None, tools: list) -> tuple[Any, str]:
    """A fresh-parser factory and the implementation's name.  The parser names are class
    attributes of the response parser, so each configuration gets its own subclass."""
    responses, _tools, request_cls, impl = _import_parsers()
    base = responses.get("default")
    unset = {"reasoning_parser_cls": None, "tool_parser_cls": None}
    cls = type(f"Bench_{tool_parser}_{reasoning_parser}", (base,), unset)
    cls.set_parsers(reasoning_parser_name=reasoning_parser, tool_parser_name=tool_parser)
    request = request_cls(model="bench", messages=[{"role": "user", "content": "go"}], tools=tools)
    return (lambda: cls(request)), impl


def tool_parser_names() -> list[str]:
    return sorted(_import_parsers()[1].module_dict)


def _feed_all(parser: Any, body: list[str], last: str) -> None:
    stream = parser.stream_chunk
    for piece in body:
        stream(piece, [])
    stream(last, [], final=True)


def _stream_deltas(parser: Any, body: list[str], last: str) -> Iterator:
    """Every delta of the stream, one at a time: checked by folding, never all kept alive."""
    stream = parser.stream_chunk
    for piece in body:
        yield from stream(piece, [])
    yield from stream(last, [], final=True)


# ---- --serve: one long-lived runner that the driver alternates with its own timings ----

class _Prepared:
    """A checked configuration kept between the driver's requests, so a timing request
    only times (the parser factory, the chunks and the calibration are reused)."""

    __slots__ = ("make_parser", "body", "last", "text", "estimate", "complete", "row")

    def __init__(self, make_parser: Any, chunks: list[str], text: str, estimate: float, complete: bool,
                 row: dict) -> None:
        self.make_parser = make_parser
        self.body, self.last = chunks[:-1], chunks[-1]
        self.text = text
        self.estimate = estimate
        self.complete = complete
        self.row = row


def _prepare(request: dict) -> _Prepared:
    """Build the parser factory, check its output on the requested chunking, calibrate."""
    reply = request["reply"]
    if request["family"] == "stack":
        reply = Reply(**reply)
        make_parser, impl = _parser_factory(TOOL_PARSER, REASONING_PARSER, TOOLS)
        check = check_reconstruction
    else:
        reply = CallReply(**reply)
        registered = set(tool_parser_names())
        parser_name = next((name for name in request["names"] if name in registered), None)
        if parser_name is None:
            raise LookupError(f"no LMDeploy tool parser for {request['names']}")
        make_parser, impl = _parser_factory(parser_name, None, reply.tools)
        check = check_call
    text, chunk = reply.text, request.get("chunk")
    where = f"{impl}, {request['label']}"
    keep = tuple(request.get("special_tokens", ()))
    if request.get("cuts") is not None:
        chunks = cut(text, request["cuts"])
        start = time.perf_counter()
        check(_stream_deltas(make_parser(), chunks[:-1], chunks[-1]), reply, where)
        chunking = "tokens"
    else:
        chunks, chunking, start, _error = _checked_chunks(make_parser, text, chunk, keep,
                                                   lambda deltas, suffix: check(deltas, reply, where + suffix))
    estimate = time.perf_counter() - start
    row = {"impl": impl, "chunking": chunking, "chunks": len(chunks), "chars": len(text)}
    return _Prepared(make_parser, chunks, text, estimate, bool(request.get("complete")), row)


def _checked_chunks(make_parser, text: str, chunk, keep: tuple[str, ...],
                    check) -> tuple[list[str], str, float, str | None]:
    """Plain character chunks, or (when those give wrong output) chunks keeping ``keep`` whole:
    the chunks, which chunking, when the checked run started, and the plain chunks' error."""
    chunks = split_chunks(text, chunk)
    start = time.perf_counter()
    try:
        check(_stream_deltas(make_parser(), chunks[:-1], chunks[-1]), "")
        return chunks, "chars", start, None
    except ReconstructionError as exc:
        if not keep:
            raise
        plain_error = str(exc)
    chunks = split_chunks_keeping(text, chunk, keep)
    start = time.perf_counter()
    check(_stream_deltas(make_parser(), chunks[:-1], chunks[-1]), " (special tokens whole)")
    return chunks, "special-tokens-whole", start, plain_error


def _time_prepared(prepared: _Prepared, settings: Settings) -> dict:
    if prepared.complete:
        text = prepared.text
        timing = best_of(prepared.make_parser, lambda p: p.parse_complete(text), settings, prepared.estimate)
    else:
        body, last = prepared.body, prepared.last
        timing = best_of(prepared.make_parser, lambda p: _feed_all(p, body, last), settings, prepared.estimate)
    return {**prepared.row, "wall_s": timing.wall, "cpu_s": timing.cpu}


def serve() -> int:
    """Answer one JSON request per stdin line with one JSON line: ``prepare`` (check a
    configuration, keep it under ``id``), ``time`` (one best-of timing of it), ``forget``,
    ``names`` (the tool parser names LMDeploy registers, each with its class's name)."""
    prepared: dict[int, _Prepared] = {}
    for line in sys.stdin:
        request = json.loads(line)
        op, key = request["op"], request.get("id")
        try:
            if op == "prepare":
                prepared[key] = _prepare(request)
                answer: dict = {"ok": True, **prepared[key].row}
            elif op == "names":
                registry = _import_parsers()[1]
                classes = {name: registry.get(name).__name__ for name in tool_parser_names()}
                answer = {"ok": True, "names": classes, "impl": _import_parsers()[3]}
            elif op == "time":
                answer = {"ok": True, **_time_prepared(prepared[key], Settings(*request["settings"]))}
            else:
                prepared.pop(key, None)
                answer = {"ok": True}
        except Exception as exc:  # a wrong or failing peer costs only this configuration
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


def main() -> int:
    if "--serve" in sys.argv[1:]:
        return serve()
    if "--check" in sys.argv[1:]:
        _, impl = _parser_factory(TOOL_PARSER, REASONING_PARSER, TOOLS)
        print(f"{impl}: parser package imports; torch imported: {'torch' in sys.modules}")
        return 0
    if "--names" in sys.argv[1:]:
        json.dump(tool_parser_names(), sys.stdout)
        return 0
    print("usage: python -m bench.peer_lmdeploy --serve | --check | --names", file=sys.stderr)
    return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
