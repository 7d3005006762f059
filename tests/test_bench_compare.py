"""bench.compare: the peer comparison driver works without any peer, checks before it times,
and reports a peer that cannot run or runs too long instead of stopping.  No timing is asserted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.compare.__main__ import main
from bench.compare.cases import COMPLETE, Case, check_deltas
from bench.compare.client import Worker
from bench.compare.formats import FORMATS, build_case
from bench.compare.measure import Bench
from bench.compare.run import Plan, run
from bench.page import read_section

CHUNKS = [1, 4, 16, 256, None, COMPLETE]


def test_driver_on_1kb_without_peers_gives_a_checked_row_per_configuration(tmp_path: Path) -> None:
    out, page, images = tmp_path / "rows.json", tmp_path / "benchmarks.md", tmp_path / "img"
    page.write_text("# Benchmarks\n\nintro\n\n<!-- bench:stack -->\nkept\n<!-- /bench:stack -->\n", encoding="utf-8")
    status = main(["--sizes", "1000", "--peers", "none", "--pairs", "1", "--min-sample", "0.001",
                   "--json", str(out), "--write-docs", "--page", str(page), "--images", str(images)])
    assert status == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    rows = result["rows"]
    assert {(r["format"], r["chunk"]) for r in rows} == {(f.label, c) for f in FORMATS for c in CHUNKS}
    assert all(r["peer"] == "lmparse" and r["status"] == "ok" and r["size"] == 1000 for r in rows)
    assert all(r["mb_per_s"] > 0 and r["pairs"] == 1 and r["ratio"] is None for r in rows)
    assert result["impls"] == {} and result["missing"] == {}
    summary, peers = read_section("summary", page), read_section("peers", page)
    assert summary is not None and peers is not None
    for fmt in FORMATS:
        assert f"| {fmt.label} | " in summary  # one summary line per format
        assert f"#### {fmt.label}" in peers
    assert read_section("stack", page) == "kept"  # another driver's section is left alone
    if "matplotlib" in sys.modules or _has_matplotlib():
        assert sorted(p.name for p in images.iterdir()) == ["peers-mbps-by-chunk.png", "peers-time-by-size.png"]
        assert "](img/peers-mbps-by-chunk.png)" in peers


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _case() -> Case:
    return build_case(FORMATS[0], 300, None)


def _delta(arguments: str) -> Any:
    call = SimpleNamespace(index=0, function=SimpleNamespace(name="write_file", arguments=arguments))
    return SimpleNamespace(content=_case().content, reasoning_content=None, tool_calls=[call])


def test_arguments_are_compared_as_json_and_a_difference_is_named() -> None:
    case = _case()
    arguments = case.calls[0][1]
    assert check_deltas([_delta(json.dumps(json.loads(arguments), indent=2))], case) is None
    error = check_deltas([_delta(arguments.replace("the", "THE", 1))], case)
    assert error is not None and "call 0 arguments differ" in error


class _SplitMarkerBreaks:
    """A fake implementation: right when its markers arrive whole, wrong when one is cut."""

    impl = "fake 0"

    def new_state(self, case: Case, parsers: dict) -> list:
        return []

    def prepare(self, case: Case, pieces: list[str]) -> list[str]:
        return pieces

    def stream(self, state: list, fed: list[str]) -> list:
        broken = not any("<tool_call>" in piece for piece in fed)
        arguments = _case().calls[0][1]
        return [_delta(arguments[1:] if broken else arguments)]

    def feed(self, state: list, fed: list[str]) -> None:
        state.append(len(fed))

    def complete(self, state: list, case: Case) -> list:
        return [_delta("{}")]


def test_wrong_output_is_reported_not_timed_and_a_cut_marker_is_retried_whole() -> None:
    bench = Bench(_SplitMarkerBreaks())
    bench.load("k", _case(), {})
    assert bench.check("k", COMPLETE)["status"] == "wrong"
    assert ("k", COMPLETE) not in bench.ready  # nothing to time
    streamed = bench.check("k", 4)
    assert streamed["status"] == "ok" and streamed["chunking"] == "markers whole"
    assert bench.time("k", 4, 0.0, 1.0)["loops"] == 1


def _fake_python(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{body}'\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_a_peer_past_the_limit_is_killed_and_its_larger_sizes_skipped(tmp_path: Path) -> None:
    # Answers hello and the case's load, then never answers again.
    python = _fake_python(tmp_path, "import json, sys, time; sys.stdin.readline(); "
                                    "print(json.dumps({\"impl\": \"slow 1\"}), flush=True); sys.stdin.readline(); "
                                    "print(json.dumps({\"loaded\": 1}), flush=True); sys.stdin.readline(); time.sleep(30)")
    worker = Worker("vllm", python)
    plan = Plan([FORMATS[0]], [200, 400], [16], pairs=1, limit=0.5, min_sample=0.001, tokenizers=None)
    try:
        rows = run(plan, Bench(__import__("bench.compare.ours", fromlist=["Adapter"]).Adapter()), [worker])
    finally:
        worker.stop()
    peer = {r["size"]: r for r in rows if r["peer"] == "vllm"}
    assert peer[200]["status"] == "timeout" and "ran past" in peer[200]["error"]
    assert peer[400]["status"] == "skipped" and "at 200 chars" in peer[400]["error"]
    assert [r["status"] for r in rows if r["peer"] == "lmparse"] == ["ok", "ok"]


def test_a_peer_that_cannot_start_yields_a_status_saying_why(tmp_path: Path) -> None:
    python = _fake_python(tmp_path, "import json; print(json.dumps({\"status\": \"error\", "
                                    "\"error\": \"ImportError: no vllm here\"}), flush=True)")
    worker = Worker("vllm", python)
    plan = Plan([FORMATS[0]], [200], [None], pairs=1, limit=5, min_sample=0.001, tokenizers=None)
    try:
        rows = run(plan, Bench(__import__("bench.compare.ours", fromlist=["Adapter"]).Adapter()), [worker])
    finally:
        worker.stop()
    (peer,) = [r for r in rows if r["peer"] == "vllm"]
    assert peer["status"] == "error" and "no vllm here" in peer["error"]


# The families every Python peer has; a later family lists only the peers that register it.
# SMG's Rust crate parses reasoning only: think alone (tests/test_bench_rust_peer.py).
SHARED_BY_ALL = {"qwen-json", "qwen3-coder", "glm-4.7", "deepseek-v3.2", "kimi-k2", "think"}


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.label)
def test_every_format_names_its_parser_in_each_peer_it_lists(fmt: Any) -> None:
    assert fmt.peers["pure"] == fmt.ours  # lmparse's pure core parses every format as the driver does
    python_peers = set(fmt.peers) - {"smg", "pure"}
    assert python_peers and python_peers <= {"vllm", "sglang", "lmdeploy"}
    if fmt.label in SHARED_BY_ALL:
        assert python_peers == {"vllm", "sglang", "lmdeploy"}
    assert all(names.get("tool") or names.get("reasoning") for names in fmt.peers.values())


def test_the_pure_core_worker_loads_the_pure_core_and_is_checked_and_timed_like_a_peer(tmp_path: Path) -> None:
    """``--peers pure``: this interpreter with LMPARSE_PURE=1 as a worker, whatever core the driver loaded;
    its rows are checked, then timed in pairs against the driver's, and the ratio is pure / driver time."""
    out = tmp_path / "rows.json"
    status = main(["--formats", "think,qwen-json", "--sizes", "1000", "--chunks", "1,whole", "--peers", "pure",
                   "--pairs", "1", "--min-sample", "0.001", "--json", str(out)])
    assert status == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["impls"]["pure"].endswith("(pure core)") and result["missing"] == {}
    pure = [r for r in result["rows"] if r["peer"] == "pure"]
    assert {(r["format"], r["chunk"]) for r in pure} == {(f, c) for f in ("think", "qwen-json") for c in (1, None)}
    assert all(r["status"] == "ok" and r["ratio"] > 0 and r["pairs"] == 1 for r in pure)


def test_a_pure_core_worker_that_got_the_compiled_core_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.compare.peer_pure as peer_pure

    monkeypatch.setattr(peer_pure, "core", lambda: "compiled (mypyc, 63 modules)")
    with pytest.raises(RuntimeError, match="LMPARSE_PURE=1"):
        peer_pure.Adapter()
