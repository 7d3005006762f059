"""bench.compare's smg peer (SMG's Rust reasoning parser behind bench/compare/rust/smg_driver.rs):
its protocol, its checks and its 'unavailable' work without cargo (a Python stand-in speaks the
driver's protocol); the real driver runs only when scripts/setup_rust_peer.sh has built it."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

from bench.compare.__main__ import main
from bench.compare.cases import COMPLETE, Case, chunks_for
from bench.compare.client import unavailable
from bench.compare.formats import FORMATS, build_case
from bench.compare.measure import Bench
from bench.compare.peer_smg import Adapter, DriverError, driver_path, encode_load, parse_answer
from bench.page import read_section

THINK = next(f for f in FORMATS if f.label == "think")

# The driver's protocol in Python: `reasoning` is what SMG's qwen3 parser gives when the stream is
# right; at chunk sizes in WRONG_AT it answers like SMG when `</think>` is cut (the end stays in reasoning).
STAND_IN = r'''
import struct, sys
WRONG_AT = {wrong_at!r}
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
pieces, text = [], ""
def parse(text):
    head, _, tail = text.partition("</think>")
    return tail, head.replace("<think>", "", 1)
while line := stdin.readline():
    words = line.split()
    if words[0] == b"hello":
        stdout.write(b"ok stand-in 0\n")
    elif words[0] == b"load":
        data, count = stdin.read(int(words[2])), int(words[3])
        lengths = struct.unpack(f"<{{count}}I", stdin.read(4 * count))
        text, pieces, at = data.decode(), [], 0
        for length in lengths:
            pieces.append(data[at:at + length].decode())
            at += length
        stdout.write(b"ok\n")
    elif words[0] in (b"stream", b"complete"):
        cut = words[0] == b"stream" and len(pieces[0]) in WRONG_AT and not any("</think>" in p for p in pieces)
        normal, reasoning = ("", text.replace("<think>", "", 1)) if cut else parse(text)
        normal, reasoning = normal.encode(), reasoning.encode()
        stdout.write(b"ok %d %d\n" % (len(normal), len(reasoning)) + normal + reasoning)
    elif words[0] == b"time":
        stdout.write(b"ok 2.5e-06 40\n")
    else:
        stdout.write(b"error unknown request\n")
    stdout.flush()
'''


def _stand_in(tmp_path: Path, wrong_at: tuple[int, ...] = ()) -> Path:
    script = tmp_path / "smg_driver"
    script.write_text(f"#!{sys.executable}\n" + STAND_IN.format(wrong_at=wrong_at), encoding="utf-8")
    script.chmod(0o755)
    return script


def _think(size: int = 200) -> Case:
    return build_case(THINK, size, None)


def test_load_sends_the_text_once_and_each_piece_as_its_utf8_byte_length() -> None:
    pieces = ["<think>é", "ab", "ç</think>x"]
    message = encode_load("qwen3", pieces)
    header, _, rest = message.partition(b"\n")
    text = "".join(pieces).encode()
    assert header == f"load qwen3 {len(text)} 3".encode()
    assert rest[:len(text)] == text
    assert struct.unpack("<3I", rest[len(text):]) == (9, 2, 11)


def test_an_ascii_stream_is_cut_at_the_same_characters_it_was_given() -> None:
    case = _think(500)
    pieces = chunks_for(case, 7, False)
    message = encode_load("qwen3", pieces)
    lengths = struct.unpack(f"<{len(pieces)}I", message[-4 * len(pieces):])
    assert list(lengths) == [len(p) for p in pieces]


def test_an_error_answer_or_a_closed_pipe_raises_with_the_drivers_words() -> None:
    assert parse_answer(b"ok 12 3\n") == ["12", "3"]
    with pytest.raises(DriverError, match="unknown parser"):
        parse_answer(b'error unknown parser "nope"\n')
    with pytest.raises(DriverError, match="exited"):
        parse_answer(b"")


def test_a_missing_driver_is_unavailable_with_the_script_that_builds_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMPARSE_BENCH_SMG_DRIVER", str(tmp_path / "absent"))
    reason = unavailable("smg")
    assert reason is not None and "scripts/setup_rust_peer.sh" in reason and str(tmp_path / "absent") in reason
    with pytest.raises(DriverError, match="unavailable"):
        Adapter()


def test_the_run_reports_a_missing_driver_as_a_status_and_goes_on(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMPARSE_BENCH_SMG_DRIVER", str(tmp_path / "absent"))
    out = tmp_path / "rows.json"
    assert main(["--formats", "think", "--sizes", "300", "--chunks", "16", "--peers", "smg", "--pairs", "1",
                 "--min-sample", "0.001", "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["missing"]["smg"].startswith("unavailable: no driver at")
    assert [r["peer"] for r in result["rows"]] == ["lmparse"]


def test_the_peer_is_listed_on_think_only() -> None:
    assert [f.label for f in FORMATS if "smg" in f.peers] == ["think"]
    assert THINK.peers["smg"] == {"tool": None, "reasoning": "qwen3"}


def test_checked_outputs_come_from_the_driver_and_its_own_loop_is_the_timing(tmp_path: Path) -> None:
    bench = Bench(Adapter(_stand_in(tmp_path)))
    assert bench.adapter.impl == "SMG stand-in 0"
    bench.load("k", _think(), THINK.peers["smg"])
    for chunk in (1, 16, None, COMPLETE):
        assert bench.check("k", chunk) == {"status": "ok", "chunking": "chars", "seconds": pytest.approx(0, abs=5)}
        assert bench.time("k", chunk, 0.1, 1.0) == {"wall": 2.5e-06, "cpu": None, "loops": 40}


def test_a_cut_end_marker_is_wrong_on_plain_cuts_and_the_plain_error_is_kept(tmp_path: Path) -> None:
    bench = Bench(Adapter(_stand_in(tmp_path, wrong_at=(7,))))
    case = _think()
    assert not any("</think>" in p for p in chunks_for(case, 7, False))  # 7-character cuts split the marker
    bench.load("k", case, THINK.peers["smg"])
    check = bench.check("k", 7)
    assert check["status"] == "ok" and check["chunking"] == "markers whole"
    assert "reasoning differs" in check["chars_error"]


@pytest.mark.skipif(not driver_path().exists(), reason="SMG's driver is not built (scripts/setup_rust_peer.sh)")
def test_the_real_driver_is_right_at_1_and_whole_and_wrong_at_7_as_its_readme_says() -> None:
    adapter = Adapter()
    assert adapter.impl.startswith("SMG reasoning-parser ")
    text = "<think>abc def ghi</think>The answer is 42."

    def outputs(size: int) -> tuple[str, str]:
        (delta,) = adapter.stream("qwen3", [text[i:i + size] for i in range(0, len(text), size)])
        return delta.content, delta.reasoning_content

    assert outputs(1) == outputs(len(text)) == ("The answer is 42.", "abc def ghi")
    assert outputs(7) == ("", "abc def ghi</think>The answer is 42.")
    timing = adapter.time_runs("qwen3", _think(), [text], 0.001)
    assert timing["wall"] > 0 and timing["loops"] >= 1


def test_a_run_of_its_own_writes_its_section_and_plots_and_leaves_the_full_runs_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMPARSE_BENCH_SMG_DRIVER", str(_stand_in(tmp_path, wrong_at=(7,))))
    page, images = tmp_path / "benchmarks.md", tmp_path / "img"
    page.write_text("<!-- bench:summary -->\nfull run\n<!-- /bench:summary -->\n", encoding="utf-8")
    assert main(["--formats", "think", "--sizes", "300", "--chunks", "1,7,whole", "--peers", "smg", "--pairs", "1",
                 "--min-sample", "0.001", "--write-docs", "--section", "peers-rust", "--page", str(page),
                 "--images", str(images)]) == 0
    section = read_section("peers-rust", page)
    assert section is not None and read_section("summary", page) == "full run"
    assert "| lmparse | SMG (Rust) |" in section and "| 300 chars | 7 | " in section
    assert "SMG (Rust) think 300 chars chunk 7: wrong on character cuts, right on markers whole" in section
    assert "SMG wrong on plain character cuts at chunk 7)" in section
    if images.exists():  # matplotlib installed
        assert sorted(p.name for p in images.iterdir()) == ["peers-rust-mbps-by-chunk.png",
                                                            "peers-rust-time-by-size.png"]
