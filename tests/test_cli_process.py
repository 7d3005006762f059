"""The ``lmparse`` command as a person meets it in a terminal, each case in a real process:
``--version``, a pipe closed early (``lmparse list | head``), Ctrl-C at startup and while
serving, a taken port, ``--log-format json``, ``--model`` on a directory holding
``tokenizer.json.gz``, and help text on every option."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lmparse
from lmparse import cli

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    # This checkout's package, whatever the venv has installed.
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _default_sigint() -> None:
    # A shell's background job starts with SIGINT ignored, and Python keeps an ignored SIGINT:
    # give the child the disposition a terminal's foreground command has.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lmparse(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lmparse", *args], env=_env(), preexec_fn=_default_sigint,
                            stdin=subprocess.DEVNULL, **kw)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(*args: str) -> subprocess.Popen:
    return _lmparse("serve", "--port", str(_free_port()), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True)


def _read_until(proc: subprocess.Popen, needle: str, timeout: float = 60.0) -> list[str]:
    """stderr lines up to and including the first holding ``needle`` (fails if the process ends first)."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            proc.wait(5)
            pytest.fail(f"lmparse serve ended (status {proc.returncode}) before {needle!r}:\n{''.join(lines)}")
        lines.append(line)
        if needle in line:
            return lines
    proc.kill()
    pytest.fail(f"no {needle!r} within {timeout} s:\n{''.join(lines)}")


def _interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err


def test_version_names_the_release_and_the_core():
    done = subprocess.run([sys.executable, "-m", "lmparse", "--version"], env=_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"lmparse {lmparse.__version__}, {lmparse.core()} core"
    assert lmparse.__version__.count(".") == 2 and all(p.isdigit() for p in lmparse.__version__.split("."))


@pytest.mark.parametrize("command", [["list"], ["parsers"], ["families", "--json"], ["demo"]])
def test_a_reader_that_leaves_early_is_no_error(command):
    """``lmparse list | head``: the reader closes the pipe; no traceback, no message, status 141
    (as a command killed by SIGPIPE reports)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE
    try:
        proc = _lmparse(*command, stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    _, err = proc.communicate(timeout=60)
    assert err == ""
    assert proc.returncode == 141


def test_ctrl_c_while_serving_stops_cleanly_without_a_traceback():
    pytest.importorskip("uvicorn")
    proc = _serve("--quiet", "--token-rate", "0")
    _read_until(proc, "Uvicorn running on")
    status, err = _interrupt(proc)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "Shutting down" in err
    assert status == 130


def test_ctrl_c_during_startup_prints_no_traceback():
    pytest.importorskip("uvicorn")
    proc = _serve("--quiet")
    _read_until(proc, "Started server process")  # the app is starting; the port is not bound yet
    status, err = _interrupt(proc)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert status == 130


def test_a_taken_port_fails_before_announcing_anything():
    pytest.importorskip("uvicorn")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _lmparse("serve", "--port", str(port), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "address already in use" in err
    assert "lmparse is serving" not in err + out and "curl" not in err + out, err
    assert "Traceback" not in err


def test_json_log_format_writes_only_json_lines_the_announcement_included():
    pytest.importorskip("uvicorn")
    proc = _serve("--log-format", "json")
    lines = _read_until(proc, '"event": "ready"')
    status, err = _interrupt(proc)
    lines += err.splitlines(keepends=True)
    records = [json.loads(line) for line in lines if line.strip()]  # a text line fails here
    (ready,) = [r for r in records if r.get("event") == "ready"]
    assert ready["models"] == ["qwen3"] and ready["url"].startswith("http://127.0.0.1:")
    assert ready["message"].startswith("lmparse is serving qwen3 on http://127.0.0.1:")
    assert status == 130


def test_model_dir_with_a_gzipped_tokenizer_serves(tmp_path):
    """The test data's own layout (``tokenizer.json.gz`` beside ``tokenizer_config.json``), which
    ``lmparse check-tokenizer --tokenizer DIR`` takes, is a model directory for ``--model`` too."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("tokenizers")
    from lmparse.serve.model_dir import load_model_dir
    from lmparse.serve.tokenizer import testdata_dir

    root = testdata_dir()
    if root is None or not (root / "qwen3" / "tokenizer.json.gz").is_file():
        pytest.skip("qwen3/tokenizer.json.gz not in the tokenizer test data (run `make testdata`)")
    model = root / "qwen3"
    assert not (model / "tokenizer.json").exists()
    files = load_model_dir(model)
    assert [step[1] for step in files.tokenizer.steps("<|im_end|>")] == [151645]
    assert files.stop_token_ids == (151645,) and files.template is not None
    proc = _serve("--quiet", "--engine", "vllm", "--upstream", f"http://127.0.0.1:{_free_port()}",
                  "--family", "qwen3", "--model", str(model))
    _read_until(proc, "Uvicorn running on")
    status, err = _interrupt(proc)
    assert status == 130 and "Traceback" not in err


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_option_of_every_command_has_help(monkeypatch):
    pytest.importorskip("uvicorn")
    built: list[argparse.ArgumentParser] = []
    real_parse = argparse.ArgumentParser.parse_args
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args",
                        lambda self, *a, **kw: built.append(self) or real_parse(self, *a, **kw))
    cli._parse_args(["list"])
    missing = [f"{name} {' / '.join(action.option_strings)}"
               for name, parser in _subcommands(built[0]).items()
               for action in parser._actions if action.option_strings and not action.help]
    assert not missing, missing


def test_serve_without_its_extra_says_how_to_install_it():
    """lmparse is on no index: the hint is a command that works (a checkout, or the built wheel)."""
    code = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None\n"
            "from lmparse.cli import main; sys.exit(main(['serve']))")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install -e '.[serve]'" in done.stderr
    assert f"dist/lmparse-{lmparse.__version__}-py3-none-any.whl[serve]" in done.stderr
    assert "pip install lmparse" not in done.stderr and "'lmparse[serve]'" not in done.stderr
