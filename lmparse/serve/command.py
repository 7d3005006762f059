"""``lmparse serve``: build the model bindings from the command line and run uvicorn."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from .app import (DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_MODEL_LEN,
                  create_app, simulated_binding, upstream_binding)
from .connections import (DEFAULT_MAX_HEADER_BYTES, DEFAULT_SHUTDOWN_GRACE, DEFAULT_TIMEOUT_HEADERS,
                          DEFAULT_TIMEOUT_KEEP_ALIVE, GracefulServer, head_timeout_protocol)
from .families import (DEFAULT_FAMILY, FAMILIES, GET_DATA, get_family, missing_data, missing_parsers,
                       needs_model_template)
from .tokenizer import testdata_dir
from .guards import default_allowed_hosts
from .logs import LOG_FORMATS
from .logs import configure as configure_logging
from .responses import DEFAULT_STORE_BYTES

__all__ = ["add_arguments", "run"]

_EXAMPLE_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--family", action="append", metavar="NAME",
                   help="model family preset (repeatable; default qwen3; `all` serves every registered one)")
    p.add_argument("--list-families", action="store_true", help="list the family presets and exit")
    p.add_argument("--tool-call-parser", help="override the family's tool parser ('' for none)")
    p.add_argument("--reasoning-parser", help="override the family's reasoning parser ('' for none)")
    p.add_argument("--response-parser", help="override the family's response parser")
    p.add_argument("--served-model-name", "--model-name", nargs="+", action="extend", metavar="NAME",
                   dest="served_model_name",
                   help="names the model answers to: exact names and glob patterns ('claude-*'); with several "
                        "--family, write FAMILY=NAME (default: the family name; one model answers to any name)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for every interface)")
    p.add_argument("--allowed-hosts", metavar="NAMES",
                   help="Host header names to answer, comma-separated ('*': any); default: loopback names when "
                        "bound to loopback (against DNS rebinding), else any")
    p.add_argument("--cors-origins", metavar="ORIGINS",
                   help="origins a browser may call from, comma-separated (default: none, CORS off)")
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default 8000)")
    p.add_argument("--api-key", default=os.environ.get("LMPARSE_API_KEY"),
                   help="require this key (Authorization: Bearer or x-api-key); default $LMPARSE_API_KEY")
    p.add_argument("--api-key-file", metavar="FILE",
                   help="read the key from FILE (its first line), so it is in no process list or shell history")
    p.add_argument("--token-rate", type=float, default=30.0,
                   help="simulated tokens per second per request (0: as fast as possible; default 30)")
    p.add_argument("--engine", default="simulated", choices=("simulated", "vllm", "sglang", "lmdeploy", "llamacpp"),
                   help="what generates: the simulated model (default) or a real engine at --upstream")
    p.add_argument("--upstream", metavar="URL",
                   help="base URL of the real engine (e.g. http://127.0.0.1:8001); needs --engine")
    p.add_argument("--upstream-model", metavar="NAME", help="model name sent to the engine (vLLM: its served name)")
    p.add_argument("--model", metavar="DIR",
                   help="the served model's Hugging Face directory (tokenizer.json, tokenizer_config.json, "
                        "chat_template.jinja, generation_config.json): its chat template renders the engine's "
                        "prompts and its tokenizer counts them")
    p.add_argument("--chat-template", metavar="FILE",
                   help="jinja chat template for the engine's prompts (wins over --model's)")
    p.add_argument("--template-from-engine", action="store_true",
                   help="the engine renders each prompt with its own template (llama-server's /apply-template)")
    p.add_argument("--upstream-max-tokens", type=int, metavar="N",
                   help="max tokens asked of the engine when a request sets none (default 4096)")
    p.add_argument("--reasoning-field", default="reasoning_content", choices=("reasoning_content", "reasoning", "both"),
                   help="Chat Completions field for reasoning in replies (default reasoning_content; both "
                        "names are read on input; docs/agents.md has which clients read which)")
    _add_limits(p)
    p.add_argument("--signing-key", default=os.environ.get("LMPARSE_SIGNING_KEY"),
                   help="key for thinking signatures and reasoning blobs (default $LMPARSE_SIGNING_KEY, else random "
                        "per process: replayed reasoning then survives no restart)")
    p.add_argument("--response-store-mb", type=float, default=DEFAULT_STORE_BYTES / 2**20, metavar="MB",
                   help="memory for stored Responses (previous_response_id); 0 stores none (default 64)")
    p.add_argument("--responses-dialect", default="openai", choices=("openai", "openresponses"),
                   help="how /v1/responses streams name reasoning events and end: OpenAI's (default) or the Open "
                        "Responses specification's; a request's x-lmparse-responses-dialect header overrides it")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="least severe log lines written to stderr (default info: startup, access lines)")
    p.add_argument("--log-format", default="text", choices=LOG_FORMATS,
                   help="text lines or one JSON object per line, the startup announcement included (access lines "
                        "carry their fields as keys; default text)")
    p.add_argument("--quiet", action="store_true", help="do not print the usage examples at startup")


def _add_limits(p: argparse.ArgumentParser) -> None:
    """Sizes, limits, deadlines and the shutdown grace."""
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
                   help=f"request body size limit in bytes; more is a 413 (default {DEFAULT_MAX_BODY_BYTES})")
    p.add_argument("--max-header-bytes", type=int, default=DEFAULT_MAX_HEADER_BYTES, metavar="N",
                   help=f"request line and headers size limit; more is a 431 (default {DEFAULT_MAX_HEADER_BYTES})")
    p.add_argument("--max-model-len", type=int, default=DEFAULT_MAX_MODEL_LEN, metavar="TOKENS",
                   help=f"the model's context length: a larger max_tokens is a 400 (default {DEFAULT_MAX_MODEL_LEN})")
    p.add_argument("--max-concurrency", type=int, default=DEFAULT_MAX_CONCURRENCY, metavar="N",
                   help=f"generations at once (a stream counts until it closes); more get a 503 with Retry-After "
                        f"(default {DEFAULT_MAX_CONCURRENCY})")
    p.add_argument("--metrics-key", action="store_true",
                   help="put /metrics behind the API key too (default: open, for a Prometheus scraper)")
    p.add_argument("--timeout-headers", type=float, default=DEFAULT_TIMEOUT_HEADERS, metavar="S",
                   help=f"close a connection whose request head is not complete after S seconds "
                        f"(default {DEFAULT_TIMEOUT_HEADERS:g})")
    p.add_argument("--timeout-body", type=float, default=DEFAULT_BODY_TIMEOUT, metavar="S",
                   help=f"a 408 when a request body pauses longer than S seconds (default {DEFAULT_BODY_TIMEOUT:g})")
    p.add_argument("--timeout-keep-alive", type=float, default=DEFAULT_TIMEOUT_KEEP_ALIVE, metavar="S",
                   help=f"close a kept-alive connection silent for S seconds (default {DEFAULT_TIMEOUT_KEEP_ALIVE:g})")
    p.add_argument("--shutdown-grace", type=float, default=DEFAULT_SHUTDOWN_GRACE, metavar="S",
                   help="on SIGTERM / Ctrl-C, let generations in flight run S seconds more, then end them cleanly "
                        f"(default {DEFAULT_SHUTDOWN_GRACE:g})")


def _families(args: argparse.Namespace) -> list:
    names = args.family or [DEFAULT_FAMILY]
    if "all" in names:
        return [f for f in FAMILIES.values() if not missing_parsers(f) and not needs_model_template(f)]
    families = [get_family(n) for n in names]
    overrides = (args.tool_call_parser, args.reasoning_parser, args.response_parser)
    if any(o is not None for o in overrides):
        if len(families) != 1:
            raise ValueError("parser overrides apply to exactly one --family")
        families = [families[0].with_parsers(*overrides)]
    return families


def _dialect_named(args: argparse.Namespace) -> bool:
    """Whether the command line chose the parsers (else a model's own response_template may)."""
    return bool(args.family) or any(o is not None for o in (args.tool_call_parser, args.reasoning_parser,
                                                           args.response_parser))


def _names(args: argparse.Namespace, families: list) -> list[list[str] | None]:
    """Each family's ``--served-model-name`` values (None: its own name)."""
    given = args.served_model_name or []
    per: dict[str, list[str]] = {}
    for value in given:
        family, sep, names = value.partition("=")
        if not sep:
            if len(families) != 1:
                raise ValueError(f"--served-model-name {value!r}: with several --family, write FAMILY=NAME")
            family, names = families[0].name, value
        if family not in {f.name for f in families}:
            raise ValueError(f"--served-model-name {value!r}: {family!r} is not a served --family")
        per.setdefault(family, []).extend(n for n in names.split(",") if n)
    return [per.get(f.name) for f in families]


def banner(url: str, model: str, key: str | None) -> str:
    """The ready-to-paste examples printed at startup (flush left: the heredoc must run as is).

    The key itself is never printed (a terminal's scrollback and a process log are not
    secret stores): with a key, the examples read it from ``$LMPARSE_API_KEY``."""
    key_text = 'os.environ["LMPARSE_API_KEY"]' if key else '"unused"'
    shell_key = "$LMPARSE_API_KEY" if key else "unused"
    auth = ' -H "Authorization: Bearer $LMPARSE_API_KEY"' if key else ""
    key_note = ("\nThe API key is not printed: the examples read it from $LMPARSE_API_KEY (export it where you "
                "paste them).\n" if key else "")
    body = {"model": model, "stream": True, "tools": _EXAMPLE_TOOLS,
            "messages": [{"role": "user", "content": "Call get_weather with city=Paris"}]}
    return f"""\
lmparse is serving {model} on {url}  (OpenAI /v1/chat/completions and /v1/responses, Anthropic /v1/messages)
{key_note}
Try it with curl:

curl -N {url}/v1/chat/completions -H 'Content-Type: application/json'{auth} -d '{json.dumps(body)}'

or with the openai SDK (pip install openai):

python - <<'EOF'
import os
from openai import OpenAI
client = OpenAI(base_url="{url}/v1", api_key={key_text})
tools = {json.dumps(_EXAMPLE_TOOLS)}
with client.chat.completions.stream(model="{model}", tools=tools, messages=[
        {{"role": "user", "content": "Call get_weather with city=Paris"}}]) as stream:
    for event in stream:
        if event.type == "tool_calls.function.arguments.done":
            print("tool call:", event.name, event.arguments)
EOF

Agent clients (docs/agents.md):
  Claude Code:  ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY={shell_key} claude
  Codex:        a model provider with base_url = "{url}/v1" and wire_api = "responses"
"""


def _split(names: str | None) -> list[str] | None:
    return [n.strip() for n in names.split(",") if n.strip()] if names else None


def read_key_file(path: str) -> str:
    """The key in ``path``: its first line, without surrounding whitespace."""
    with open(path, encoding="utf-8") as fh:
        key = fh.readline().strip()
    if not key:
        raise ValueError(f"--api-key-file {path} holds no key on its first line")
    return key


def run(args: argparse.Namespace) -> int:
    if args.list_families:
        root = testdata_dir()
        for f in FAMILIES.values():
            missing, lacking = missing_parsers(f), missing_data(f, root)
            state = "ready"
            if missing:
                state = "waiting for " + ", ".join(missing)
            elif lacking:
                state = "not ready: no " + ", no ".join(lacking) + " in the test data"
            print(f"{f.name:14} {f.description}  [{state}]")
        if any(missing_data(f, root) for f in FAMILIES.values()):
            print(f"\nA family that is not ready serves ChatML prompts or pseudo-tokens on the simulated engine: "
                  f"{GET_DATA} (test data: {root or 'none found'}).")
        return 0
    import uvicorn

    configure_logging(args.log_level, args.log_format)
    if args.api_key_file:
        args.api_key = read_key_file(args.api_key_file)
    if min(args.max_concurrency, args.max_model_len, args.max_header_bytes) < 1:
        raise ValueError("--max-concurrency, --max-model-len and --max-header-bytes must be at least 1")
    if min(args.timeout_headers, args.timeout_body, args.timeout_keep_alive) <= 0 or args.shutdown_grace < 0:
        raise ValueError("the --timeout-* options must be positive and --shutdown-grace not negative")
    families = _families(args)
    names = _names(args, families)
    engine = getattr(args, "engine", "simulated")
    if engine == "simulated":
        given = [flag for flag, value in (("--upstream", args.upstream), ("--model", args.model),
                                          ("--template-from-engine", args.template_from_engine)) if value]
        if given:
            raise ValueError(f"{' and '.join(given)} need --engine vllm|sglang|lmdeploy|llamacpp")
        bindings = [simulated_binding(f, args.token_rate, args.reasoning_field, n)
                    for f, n in zip(families, names, strict=True)]
    else:
        if not args.upstream:
            raise ValueError(f"--engine {engine} needs --upstream URL")
        if len(families) != 1:
            raise ValueError(f"--engine {engine} serves exactly one --family")
        bindings = [upstream_binding(families[0], engine, args.upstream, args.upstream_model, args.reasoning_field,
                                     names[0], args.chat_template, args.upstream_max_tokens,
                                     model_dir=args.model, template_from_engine=args.template_from_engine,
                                     dialect_named=_dialect_named(args))]
    url = f"http://{args.host}:{args.port}"

    def ready() -> None:
        """Once the port is bound (a taken port fails before anything is announced): the examples
        as text, or with --log-format json one JSON record, so every stderr line parses."""
        if args.log_format == "json":
            logging.getLogger("lmparse.serve").info("ready", extra={"access": {
                "message": f"lmparse is serving {bindings[0].name} on {url}", "event": "ready", "url": url,
                "models": [b.name for b in bindings]}})
        elif not args.quiet:
            print(banner(url, bindings[0].name, args.api_key), file=sys.stderr, flush=True)

    app = create_app(bindings, api_key=args.api_key, max_body_bytes=args.max_body_bytes,
                     max_concurrency=args.max_concurrency, max_model_len=args.max_model_len,
                     allowed_hosts=_split(args.allowed_hosts) or default_allowed_hosts(args.host),
                     cors_origins=_split(args.cors_origins), metrics_key=args.metrics_key,
                     body_timeout=args.timeout_body,
                     signing_key=args.signing_key, response_store_bytes=int(args.response_store_mb * 2**20),
                     responses_dialect=args.responses_dialect)
    # lmparse writes the access lines (logs.AccessLog); uvicorn's loggers go to the same root handler.
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False,
                            log_config=None, http=head_timeout_protocol(args.timeout_headers, args.max_header_bytes),
                            h11_max_incomplete_event_size=args.max_header_bytes,
                            ws_max_size=args.max_body_bytes,  # a Responses turn over a WebSocket is a body too
                            timeout_keep_alive=args.timeout_keep_alive,
                            # a backstop: the app itself ends its generations after the grace
                            timeout_graceful_shutdown=int(args.shutdown_grace) + 5)
    GracefulServer(config, args.shutdown_grace, on_ready=ready).run()
    return 0
