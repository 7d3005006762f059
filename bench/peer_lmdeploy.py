"""Peer runner: LMDeploy's parser package (Qwen tool parser + default response parser).

Runs inside ``bench/.peers/lmdeploy`` (made by ``scripts/setup_bench_peers.sh``),
never in the benchmark's own process: ``python -m bench.peer_lmdeploy`` reads a
JSON job on stdin and prints JSON results on stdout.  ``--check`` only imports.

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
import signal
import sys
import time
import types
from typing import Any, Iterator

from .fixtures import QWEN_SPECIAL_TOKENS, TOOLS, build_reply, split_chunks, split_chunks_keeping
from .timing import Settings, best_of, record
from .verify import ReconstructionError, check_reconstruction

# The peer's registry names for the configuration lmparse runs as tool_parser="qwen",
# reasoning_parser="qwen3" (LMDeploy folds the Qwen3 reasoning parser into "default").
TOOL_PARSER = "qwen3"
REASONING_PARSER = "default"


def _import_parsers() -> tuple[Any, Any, str]:
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

    return ResponseParserManager, ChatCompletionRequest, version("lmdeploy")


def _parser_factory() -> tuple[Any, str]:
    manager, request_cls, version = _import_parsers()
    cls = manager.get("default")
    cls.set_parsers(reasoning_parser_name=REASONING_PARSER, tool_parser_name=TOOL_PARSER)
    request = request_cls(model="bench", messages=[{"role": "user", "content": "write a.txt"}], tools=TOOLS)
    return (lambda: cls(request)), f"lmdeploy {version}"


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


def _measure(make_parser, impl: str, section: str, reply, size: int, chunk, settings: Settings, where: str) -> dict:
    """Check, then time.  If plain character chunks give wrong output, the row is measured on
    chunks that keep Qwen's special tokens whole (what a real engine sends) and says so."""
    chunking, plain_error = "chars", None
    chunks = split_chunks(reply.text, chunk)
    start = time.perf_counter()
    try:
        check_reconstruction(_stream_deltas(make_parser(), chunks[:-1], chunks[-1]), reply, where)
    except ReconstructionError as exc:
        plain_error = str(exc)
        chunking = "special-tokens-whole"
        chunks = split_chunks_keeping(reply.text, chunk, QWEN_SPECIAL_TOKENS)
        start = time.perf_counter()
        check_reconstruction(
            _stream_deltas(make_parser(), chunks[:-1], chunks[-1]), reply, where + " (special tokens whole)"
        )
    estimate = time.perf_counter() - start
    body, last = chunks[:-1], chunks[-1]
    timing = best_of(make_parser, lambda p: _feed_all(p, body, last), settings, estimate)
    row = record(section, impl, reply.kind, size, chunk, len(reply.text), len(chunks), timing)
    row["chunking"] = chunking
    row["plain_chunking_error"] = plain_error
    return row


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def run_job(job: dict) -> dict:
    make_parser, impl = _parser_factory()
    settings = Settings(*job["settings"])
    limit = int(job.get("config_timeout", 120))
    signal.signal(signal.SIGALRM, _on_alarm)
    records: list[dict] = []
    errors: list[dict] = []
    replies: dict[tuple[str, int], Any] = {}
    for section, kind, size, chunk in job["configs"]:
        reply = replies.get((kind, size))
        if reply is None:
            reply = replies[(kind, size)] = build_reply(kind, size)
        config = {"section": section, "fixture": kind, "size": size, "chunk": chunk}
        where = f"{impl}, {kind} {size} chars, chunk {chunk or 'whole'}"
        signal.alarm(limit)
        try:
            row = _measure(make_parser, impl, section, reply, size, chunk, settings, where)
        except ReconstructionError as exc:
            errors.append({**config, "error": str(exc)})
        except _Timeout:
            errors.append({**config, "error": f"timed out after {limit} s"})
        except Exception as exc:  # the peer misbehaving must not hide the other rows
            errors.append({**config, "error": f"{type(exc).__name__}: {exc}"})
        else:
            records.append(row)
        finally:
            signal.alarm(0)
    return {"impl": impl, "records": records, "errors": errors, "torch_imported": "torch" in sys.modules}


def main() -> int:
    if "--check" in sys.argv[1:]:
        _, impl = _parser_factory()
        print(f"{impl}: parser package imports; torch imported: {'torch' in sys.modules}")
        return 0
    json.dump(run_job(json.load(sys.stdin)), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
