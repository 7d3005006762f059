"""A real llama.cpp ``llama-server`` behind ``lmparse serve --engine llamacpp``: run by
``make test-engines``, which builds the binary once (scripts/setup_llamacpp.sh) and names it
in $LMPARSE_LLAMA_SERVER.  Under a plain ``pytest`` these tests skip; under
``make test-engines`` a missing binary fails.

The model is a tiny random-weight GGUF with the real Qwen3 vocabulary and chat template
(``gguf_model``); each scenario's llama-server is started with the reply forced by a default
grammar (``--grammar-file``, see ``forcing``) and ``<|im_end|>`` favoured to end it, so the
gateway needs no request field of its own to make the model say something definite.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ..support.model_dir import shared_qwen3_model_dir
from ..support.server import LiveServer, free_port, stop_process
from ..support.suites import skip_folder_unless
from ..support.tokenizers import testdata_dir
from .forcing import Forced, force, qwen3_tokenizer
from .gguf_model import IM_END_ID, write_qwen3_gguf

LLAMA_SERVER = os.environ.get("LMPARSE_LLAMA_SERVER")
SLOT_CONTEXT = 1024  # per slot: -c 2048 -np 2
TOOL_MARKERS = frozenset({"<tool_call>", "</tool_call>", "<think>", "</think>"})


def pytest_collection_modifyitems(config, items):
    skip_folder_unless(LLAMA_SERVER, "engines", "llama-server runs under `make test-engines` ($LMPARSE_LLAMA_SERVER unset)",
                       items)


def _get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def post_json(url: str, body: dict, timeout: float = 60.0) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


class LiveLlamaServer:
    """``llama-server`` on a loopback port serving ``model``; ``url`` once ``/health`` is 200.
    ``forced``: the reply every request gets unless it names a grammar of its own."""

    def __init__(self, model: Path, forced: Forced | None = None, extra: Sequence[str] = (),
                 timeout: float = 60.0) -> None:
        if not LLAMA_SERVER or not os.access(LLAMA_SERVER, os.X_OK):
            pytest.fail(f"$LMPARSE_LLAMA_SERVER ({LLAMA_SERVER}) is not an executable; run scripts/setup_llamacpp.sh")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.forced = forced
        self._dir = tempfile.TemporaryDirectory(prefix="llama-server-")
        cmd = [LLAMA_SERVER, "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port),
               "-c", str(2 * SLOT_CONTEXT), "-np", "2", "--no-kv-unified", "-t", "1", "--jinja",
               "--slots", "--metrics", "--no-warmup", *extra]
        if forced is not None:
            grammar = Path(self._dir.name) / "reply.gbnf"
            grammar.write_text(forced.grammar)
            # greedy: the literal runs come out in the same tokenization every time
            cmd += ["--grammar-file", str(grammar), "--logit-bias", f"{IM_END_ID}+100", "--temp", "0"]
        self._log = open(Path(self._dir.name) / "log", "w+")  # a file: a chatty server never blocks
        env = {**os.environ, "LLAMA_SERVER_SLOTS_DEBUG": "1"}  # /slots then shows each slot's prompt
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while _get_status(self.url + "/health") != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama-server did not start: {self.log_text()[-3000:]}")
            time.sleep(0.1)

    def log_text(self) -> str:
        return (Path(self._dir.name) / "log").read_text(errors="replace")

    def slots(self) -> list[dict]:
        return json.loads(_get(self.url + "/slots")[1])

    def metric(self, name: str) -> float:
        for line in _get(self.url + "/metrics")[1].decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise KeyError(name)

    def stop(self) -> None:
        stop_process(self.proc)
        self._log.close()
        self._dir.cleanup()


def _get_status(url: str) -> int:
    try:
        return _get(url, timeout=1)[0]
    except OSError:
        return 0


class Stack:
    """One llama-server and the ``lmparse serve`` in front of it."""

    def __init__(self, llama: LiveLlamaServer, gateway: LiveServer) -> None:
        self.llama, self.gateway = llama, gateway
        self.forced = llama.forced

    def stop(self) -> None:
        self.gateway.stop()
        self.llama.stop()


def gateway_for(llama: LiveLlamaServer, *args: str) -> LiveServer:
    """``lmparse serve`` in front of ``llama``: the template and tokenizer from ``--model``
    unless ``args`` say otherwise (``--template-from-engine``)."""
    source = list(args) if "--template-from-engine" in args else ["--model", str(shared_qwen3_model_dir()), *args]
    return LiveServer(["--engine", "llamacpp", "--upstream", llama.url, "--family", "qwen3", *source])


@pytest.fixture(scope="session")
def testdata() -> Path:
    """The tokenizer test data, found as every other test finds it: ``$LMPARSE_TESTDATA`` if
    set, else the cache ``make testdata`` fills."""
    root = testdata_dir()
    if root is None or not (root / "qwen3" / "tokenizer.json.gz").is_file():
        where = f"{root} holds" if root is not None else "there is"
        pytest.fail(f"{where} no qwen3 tokenizer test data; run `make testdata` or set $LMPARSE_TESTDATA")
    return root


@pytest.fixture(scope="session")
def qwen3_gguf(tmp_path_factory, testdata) -> Path:
    """Qwen3 as its GGUFs type its tokens: the tool and think markers USER_DEFINED."""
    return write_qwen3_gguf(tmp_path_factory.mktemp("gguf") / "qwen3-random.gguf", testdata)


@pytest.fixture(scope="session")
def qwen3_control_gguf(tmp_path_factory, testdata) -> Path:
    """The same model with its tool and think markers CONTROL, as Llama 3's ``<|python_tag|>``,
    DeepSeek's or Mistral's ``[TOOL_CALLS]`` are in theirs: llama-server hides their text
    unless the request lists them in ``preserved_tokens``."""
    return write_qwen3_gguf(tmp_path_factory.mktemp("gguf") / "qwen3-control.gguf", testdata, TOOL_MARKERS)


@pytest.fixture(scope="session")
def tokenizer(testdata):
    return qwen3_tokenizer(testdata)


@pytest.fixture(scope="session")
def stacks(qwen3_gguf, tokenizer) -> Iterator[dict]:
    """``stack(reply, model=None, special=False)``: a started llama-server forced to say
    ``reply`` with a gateway in front, shared by every test that asks for the same one."""
    started: dict[tuple, Stack] = {}

    def stack(reply: str | None, model: Path | None = None, special: bool = False,
              gateway_args: tuple[str, ...] = ()) -> Stack:
        key = (reply, model, special, gateway_args)
        if key not in started:
            forced = None if reply is None else force(tokenizer, reply)
            llama = LiveLlamaServer(model or qwen3_gguf, forced, ["--special"] if special else [])
            try:
                started[key] = Stack(llama, gateway_for(llama, *gateway_args))
            except Exception:
                llama.stop()
                raise
        return started[key]

    yield stack
    for s in started.values():
        s.stop()
