"""Run the Open Responses compliance suite against ``lmparse serve`` on the simulated model.

The suite (a TypeScript runner, ``bin/compliance-test.ts`` of the Open Responses
repository) is not published on any registry, so it is run from the copy of that
repository next to the checkout (``../shared/conformance/openresponses``, or
``$LMPARSE_OPENRESPONSES``): copied into ``~/.cache/lmparse/conformance/runner`` with its
dependencies installed there from its lockfile by bun (itself from npm, pinned, in the
same cache).  Nothing of it enters this repository.

The server runs the qwen3 family (it reasons, so reasoning events are exercised) with
``--responses-dialect openresponses``.  The run fails when a test fails that is not in
``EXPECTED_FAILURES``: tests that need a trained model (docs/responses-api.md says why).
Without the runner's copy it says so and exits 0 (nothing to run), or 1 with ``--require``.

    python scripts/openresponses_conformance.py [--require] [--table] [--filter ID,ID] [--dialect openai]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("LMPARSE_CONFORMANCE_CACHE", Path.home() / ".cache" / "lmparse" / "conformance"))
BUN_VERSION = "1.4.5"
FAMILY = "qwen3"
API_KEY = "sk-conformance"

# Test id -> why it may fail here without lmparse being at fault.
EXPECTED_FAILURES = {
    "tool-calling": "needs a trained model: the prompt never names the tool (\"What's the weather like in San "
                    "Francisco?\"); the simulated model calls only tools the user names",
}


def _log(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr, flush=True)


def runner_source() -> Path | None:
    configured = os.environ.get("LMPARSE_OPENRESPONSES")
    path = Path(configured) if configured else ROOT.parent / "shared" / "conformance" / "openresponses"
    return path if (path / "bin" / "compliance-test.ts").is_file() else None


def bun() -> Path:
    """bun from npm, pinned, installed once under the cache (npm from Debian where Node.js is missing)."""
    prefix = CACHE / f"bun-{BUN_VERSION}"
    exe = prefix / "node_modules" / ".bin" / "bun"
    if exe.exists():
        return exe
    if shutil.which("npm") is None:
        subprocess.run(["apt-get", "update", "-qq"], check=True, stdout=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-qq", "nodejs", "npm"], check=True, stdout=sys.stderr,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    _log(f"installing bun {BUN_VERSION} from npm into {prefix}")
    partial = prefix.with_name(prefix.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(partial),
                    f"bun@{BUN_VERSION}"], check=True, stdout=sys.stderr)
    partial.rename(prefix)
    return exe


def prepare_runner(source: Path, bun_exe: Path) -> Path:
    """The runner's source copied into the cache (fresh every run), its node_modules kept
    while its lockfile is unchanged."""
    runner = CACHE / "runner"
    lock = (source / "bun.lock").read_bytes()
    stamp = runner / "node_modules" / ".lmparse-lock-sha256"
    digest = hashlib.sha256(lock).hexdigest()
    runner.mkdir(parents=True, exist_ok=True)
    for entry in runner.iterdir():
        if entry.name == "node_modules":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for entry in source.iterdir():
        if entry.name in ("node_modules", ".git"):
            continue
        target = runner / entry.name
        if entry.is_dir():
            shutil.copytree(entry, target, symlinks=True)
        else:
            shutil.copy2(entry, target)
    for entry in runner.iterdir():  # shared/ is read-only in CI; the copies must be writable
        if entry.name != "node_modules":
            for path in [entry, *(entry.rglob("*") if entry.is_dir() else ())]:
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode | 0o200)
    if not stamp.exists() or stamp.read_text() != digest:
        _log("installing the runner's dependencies from its lockfile (bun install --frozen-lockfile)")
        env = {**os.environ, "BUN_INSTALL_CACHE_DIR": str(CACHE / "bun-install-cache")}
        subprocess.run([str(bun_exe), "install", "--frozen-lockfile", "--ignore-scripts"], cwd=runner, env=env,
                       check=True, stdout=sys.stderr)
        stamp.write_text(digest)
    return runner


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log: tempfile._TemporaryFileWrapper, dialect: str) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "lmparse.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--quiet",
           "--log-level", "warning", "--family", FAMILY, "--token-rate", "0", "--api-key", API_KEY,
           "--responses-dialect", dialect]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"conformance: lmparse serve exited {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("conformance: lmparse serve did not become healthy in 60 s")


def run_suite(bun_exe: Path, runner: Path, url: str, only: str | None) -> dict:
    cmd = [str(bun_exe), "run", "bin/compliance-test.ts", "--base-url", url + "/v1", "--api-key", API_KEY,
           "--model", FAMILY, "--json"] + (["--filter", only] if only else [])
    done = subprocess.run(cmd, cwd=runner, capture_output=True, text=True, timeout=300)
    try:
        return json.loads(done.stdout)
    except ValueError:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"conformance: the runner exited {done.returncode} without its JSON report") from None


def judge(report: dict) -> tuple[list[tuple[str, str, str, str]], list[str]]:
    """Rows ``(id, name, result, note)`` and the unexpected failures."""
    rows, unexpected = [], []
    for result in sorted(report["results"], key=lambda r: r["id"]):
        test, status = result["id"], result["status"]
        note = ""
        if status == "failed":
            if test in EXPECTED_FAILURES:
                note = EXPECTED_FAILURES[test]
            else:
                unexpected.append(test)
                note = "; ".join(result.get("errors") or [])[:300]
        elif status == "passed" and test in EXPECTED_FAILURES:
            note = "(listed as expected to fail: it passed)"
        rows.append((test, result["name"], status, note))
    return rows, unexpected


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--require", action="store_true", help="fail (not skip) when the runner's copy is absent")
    ap.add_argument("--table", action="store_true", help="print the result table as Markdown")
    ap.add_argument("--filter", help="only these test ids (comma-separated)")
    ap.add_argument("--dialect", default="openresponses", choices=("openresponses", "openai"),
                    help="the server's --responses-dialect (openai: to see what OpenAI's event names fail)")
    args = ap.parse_args()
    source = runner_source()
    if source is None:
        _log("SKIPPED: the Open Responses repository is not at ../shared/conformance/openresponses "
             "(set LMPARSE_OPENRESPONSES to a copy of it); no compliance test ran")
        return 1 if args.require else 0
    bun_exe = bun()
    runner = prepare_runner(source, bun_exe)
    with tempfile.TemporaryFile(mode="w+") as log:
        proc, url = start_server(log, args.dialect)
        try:
            report = run_suite(bun_exe, runner, url, args.filter)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    rows, unexpected = judge(report)
    if args.table:
        print("| test | result | why, where it fails |")
        print("|---|---|---|")
        for test, name, status, note in rows:
            print(f"| `{test}` ({name}) | {status} | {note} |")
    else:
        for test, _, status, note in rows:
            print(f"{status:7} {test}" + (f"  -- {note}" if note else ""))
    passed = sum(1 for r in rows if r[2] == "passed")
    failed = sum(1 for r in rows if r[2] == "failed")
    expected = failed - len(unexpected)
    print(f"conformance: {passed} passed; {expected} expected failures (model-dependent); "
          f"{len(unexpected)} unexpected", file=sys.stderr)
    if unexpected:
        print(f"conformance: FAILED, unexpected failures: {', '.join(unexpected)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
