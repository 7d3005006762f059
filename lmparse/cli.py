"""The ``lmparse`` command: parse a model transcript from a file, list parsers, run a demo."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .factory import create_parser
from .registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

_DEMO_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
_DEMO_TEXT = (
    "<think>\nThe user wants the weather in Paris; I should call the tool.\n</think>\n\n"
    "Let me check.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def serve_install_hint() -> str:
    """lmparse is on no package index yet: what installs the serve extra, from a checkout or a wheel."""
    from . import __version__

    return (f"from a lmparse checkout, pip install -e '.[serve]'; or a wheel built from it, "
            f"pip install 'dist/lmparse-{__version__}-py3-none-any.whl[serve]' (docs/install.md)")

_FAMILY_COLUMNS = ("family", "tool", "reasoning", "response", "tokenizer", "templates")


def _version() -> str:
    from . import __version__, core

    return f"lmparse {__version__}, {core()} core"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="lmparse", description=__doc__)
    ap.add_argument("--version", action="version", version=_version(),
                    help="the version, and which parser core is loaded (compiled or pure)")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="parse a transcript (a model's raw reply) into an OpenAI message")
    p.add_argument("file", help="transcript file, or - for standard input")
    p.add_argument("--tool-parser", help="tool parser name (see `lmparse list`)")
    p.add_argument("--reasoning-parser", help="reasoning parser name")
    p.add_argument("--response-parser", default="default", help="response parser name (default: default)")
    p.add_argument("--response-template", metavar="FILE|DIR",
                   help="parse with a Hugging Face response_template (a JSON file, or a model directory)")
    p.add_argument("--tools", help="JSON file with the request's tools list (OpenAI shape)")
    p.add_argument("--tool-choice", help='tool_choice: none, auto, required, or a tool name')
    p.add_argument("--thinking", choices=("on", "off"), help="the request's thinking switch")
    p.add_argument("--stream", action="store_true", help="print the streamed deltas as JSON lines")
    p.add_argument("--chunk-size", type=int, default=8, help="characters per chunk with --stream (default 8)")

    sub.add_parser("list", help="list registered parser names")
    ps = sub.add_parser("parsers", help="every registered parser: aliases, wire syntax, streaming, structural tag")
    ps.add_argument("--json", action="store_true", help="one JSON array of rows instead of a table")
    fs = sub.add_parser("families", help="every declared model family: its parsers, test data and peers' names")
    fs.add_argument("--json", action="store_true", help="one JSON array of rows instead of a table")
    fs.add_argument("--markdown", action="store_true", help="the Markdown table docs/families.md holds")
    sub.add_parser("demo", help="stream a built-in Qwen3 reply through the parser")

    ct = sub.add_parser("check-tokenizer", help="measure a dialect's markers against a real tokenizer "
                                                "(needs the tokenizers package)")
    ct.add_argument("--tokenizer", required=True, metavar="PATH|DIR", help="tokenizer.json(.gz) or its directory")
    ct.add_argument("--tool-parser", help="tool parser whose markers to check")
    ct.add_argument("--reasoning-parser", help="reasoning parser whose tags to check")
    ct.add_argument("--marker", action="append", default=[], help="another string to measure (repeatable)")
    ct.add_argument("--strict", action="store_true",
                    help="a declared prefix this tokenizer never produces is a mismatch too")
    ct.add_argument("--json", action="store_true", help="the reports as JSON")

    s = sub.add_parser("serve", help="OpenAI and Anthropic HTTP server, on the simulated model or a real engine "
                                     "(needs the serve extra: docs/install.md)")
    try:
        from .serve.command import add_arguments
    except ImportError as exc:  # the core CLI works without the serve extra
        s.set_defaults(serve_missing=str(exc))
        s.add_argument("rest", nargs=argparse.REMAINDER)
    else:
        add_arguments(s)
    return ap.parse_args(argv)


def _request(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.tools is None and args.tool_choice is None and args.thinking is None:
        return None
    request: dict[str, Any] = {}
    if args.tools is not None:
        with open(args.tools, encoding="utf-8") as fh:
            request["tools"] = json.load(fh)
    if args.tool_choice is not None:
        choice = args.tool_choice
        request["tool_choice"] = (
            choice if choice in ("none", "auto", "required") else {"type": "function", "function": {"name": choice}}
        )
    if args.thinking is not None:
        request["chat_template_kwargs"] = {"enable_thinking": args.thinking == "on"}
    return request


def _run_parse(text: str, args: argparse.Namespace, request: dict[str, Any] | None, out: TextIO) -> None:
    parser = create_parser(
        tool_parser=args.tool_parser,
        reasoning_parser=args.reasoning_parser,
        response_parser=args.response_parser,
        request=request,
        response_template=getattr(args, "response_template", None),
    )
    if not args.stream:
        json.dump(parser.parse_complete(text).to_dict(), out, ensure_ascii=False, indent=2)
        out.write("\n")
        return
    size = max(1, args.chunk_size)
    starts = range(0, len(text), size) if text else [0]
    for start in starts:
        final = start + size >= len(text)
        for delta, _ in parser.stream_chunk(text[start : start + size], final=final):
            out.write(json.dumps(delta.to_dict(), ensure_ascii=False) + "\n")
    for dropped in parser.dropped:
        sys.stderr.write(f"dropped call {dropped.name!r}: {dropped.reason}\n")


def _check_tokenizer(args: argparse.Namespace) -> int:
    """Exit 0 when every declared prefix tuple covers what the tokenizer produces, 1 on a mismatch."""
    from dataclasses import asdict

    from .tokencheck import check_tokenizer, format_reports, load_hf_tokenizer

    reports, ok = check_tokenizer(load_hf_tokenizer(args.tokenizer), args.tool_parser, args.reasoning_parser,
                                  tuple(args.marker), args.strict)
    if args.json:
        print(json.dumps({"ok": ok, "markers": [asdict(r) | {"single_token": r.single_token, "special": r.special}
                                                    for r in reports]},
                         ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(format_reports(reports) + ("all declared prefixes hold\n" if ok else "MISMATCH\n"))
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """The command's exit status: 0, 1 for a tokenizer mismatch, 2 for an error, 130 after Ctrl-C
    (no traceback: at startup, or uvicorn re-raising it once the server has stopped cleanly), and
    141 when the reader of standard output went away (``lmparse list | head``), silently."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output still buffered would fail again when Python flushes at exit: send it nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141


def _main(argv: Sequence[str] | None) -> int:
    args = _parse_args(argv)
    try:
        if args.command == "list":
            for title, registry in (
                ("tool parsers", ToolParserManager),
                ("reasoning parsers", ReasoningParserManager),
                ("response parsers", ResponseParserManager),
            ):
                print(f"{title}: {', '.join(registry.names())}")
            return 0
        if args.command == "check-tokenizer":
            return _check_tokenizer(args)
        if args.command == "parsers":
            from .catalog import format_rows, parser_rows

            rows = parser_rows()
            if not args.json:
                print(f"# {_version()}")
            sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n" if args.json else format_rows(rows))
            return 0
        if args.command == "families":
            from .catalog import family_rows, format_family_markdown, format_rows

            frows = family_rows()
            if args.json:
                sys.stdout.write(json.dumps(frows, ensure_ascii=False, indent=2) + "\n")
            elif args.markdown:
                sys.stdout.write(format_family_markdown(frows))
            else:
                sys.stdout.write(format_rows(frows, _FAMILY_COLUMNS))
            return 0
        if args.command == "serve":
            if getattr(args, "serve_missing", None):
                print(f"lmparse: serve needs the serve extra ({args.serve_missing}): {serve_install_hint()}",
                      file=sys.stderr)
                return 2
            from .serve.command import run

            return run(args)
        if args.command == "demo":
            demo = argparse.Namespace(
                tool_parser="qwen", reasoning_parser="qwen3", response_parser="default", stream=True, chunk_size=4
            )
            print(f"# input (Qwen3 wire text):\n{_DEMO_TEXT}\n# streamed OpenAI deltas:")
            _run_parse(_DEMO_TEXT, demo, {"tools": _DEMO_TOOLS}, sys.stdout)
            return 0
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
        _run_parse(text, args, _request(args), sys.stdout)
        return 0
    except BrokenPipeError:
        raise
    except (ValueError, OSError, ImportError) as exc:  # ImportError: a parser's optional extra is missing
        print(f"lmparse: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
