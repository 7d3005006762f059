"""`python -m bench` keeps working: tiny inputs, every output checked, no timing asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.dialects import select_dialects
from bench.timing import Settings
from bench.tokens import cut, group_cuts, token_cuts
from lmparse.serve.tokenizer import testdata_dir as tokenizer_data
from bench.versus import CHAR_CHUNKINGS, CHUNKINGS, VersusMode, dialect_cases, measure_cases, stack_cases

ROOT = Path(__file__).resolve().parent.parent
ONCE = Settings(repeats=1, min_sample=0.0, budget=0.0)
TINY = VersusMode(size=1_000, small=100, per_character_size=1_000, pairs=1, settings=ONCE)
HAS_TOKENIZERS = tokenizer_data() is not None and (tokenizer_data() / "qwen3" / "tokenizer.json.gz").is_file()


def test_group_cuts_take_every_cut_that_ends_a_group_of_two_to_sixteen_tokens() -> None:
    cuts = list(range(1, 1001))
    grouped = group_cuts(cuts)
    gaps = [b - a for a, b in zip([0, *grouped], grouped, strict=False)]
    assert set(grouped) <= set(cuts) and grouped == sorted(grouped)
    assert min(gaps) >= 2 and max(gaps) <= 16 and len(set(gaps)) > 5
    assert group_cuts(cuts) == grouped  # a fixed seed


def test_cut_rebuilds_the_text_from_its_pieces() -> None:
    assert cut("abcdef", [2, 3]) == ["ab", "c", "def"]
    assert cut("abc", []) == ["abc"]


def test_every_character_chunking_of_the_stack_and_a_dialect_is_checked_without_the_peer() -> None:
    cases = stack_cases() + dialect_cases(select_dialects("qwen3coder"), {"qwen3coder": "Qwen3CoderToolParser"})
    rows = measure_cases(cases, TINY, None, CHAR_CHUNKINGS)
    assert [(r["case"], r["chunking"]) for r in rows] == [(c.label, k) for c in cases for k in CHAR_CHUNKINGS]
    by_key = {(r["case"], r["chunking"]): r for r in rows}
    assert by_key[("qwen3coder", "16")]["chunks"] == -(-by_key[("qwen3coder", "16")]["chars"] // 16)
    assert all(r["ratio"] is None and r["peer_error"] == "not run" for r in rows)
    assert all(r["ours_mbs"] > 0 and r["linearity"] > 0 for r in rows)
    assert all((r["slowest_call_s"] is None) == (r["chunking"] == "complete") for r in rows)


@pytest.mark.skipif(not HAS_TOKENIZERS, reason="no qwen3 tokenizer test data (LMPARSE_TESTDATA)")
def test_real_token_chunkings_keep_the_markers_whole_and_rebuild_the_reply() -> None:
    pytest.importorskip("tokenizers")
    [think] = [c for c in stack_cases() if c.label == "<think> reasoning"]
    text = think.build(1_000).text
    cuts = token_cuts(text, "qwen3")
    pieces = cut(text, cuts)
    assert "".join(pieces) == text
    assert {"<think>", "</think>", "<tool_call>", "</tool_call>"} <= set(pieces)
    rows = measure_cases([think], TINY, None, CHUNKINGS[len(CHAR_CHUNKINGS):])
    assert [r["chunking"] for r in rows] == ["tokens-1", "tokens-2-16"]
    assert rows[0]["chunks"] == len(pieces) and rows[1]["chunks"] < rows[0]["chunks"] / 2


def test_import_lmparse_loads_no_third_party_module() -> None:
    probe = ("import sys; before = set(sys.modules); import lmparse; "
             "print('\\n'.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    stdlib = sys.stdlib_module_names
    third_party = [m for m in loaded if m.split(".")[0] not in stdlib and m.split(".")[0] != "lmparse"]
    assert third_party == []
    # Nor the standard library's heavy modules (``inspect`` alone was a fifth of the import,
    # pulled in by pkgutil.iter_modules and dataclasses): ``import lmparse`` stays under 50 ms.
    assert {"inspect", "dataclasses", "asyncio", "email", "http"} & {m.split(".")[0] for m in loaded} == set()


def test_ab_reads_every_lmparse_configuration_and_reports_the_geomean():
    from bench.ab import _rows, report

    run = {"results": [{"impl": "lmparse", "section": "stack", "fixture": "long-string", "size": 10, "chunk": 1,
                        "mb_per_s": 2.0},
                       {"impl": "pass-through", "section": "passthrough", "fixture": "long-string", "size": 10,
                        "chunk": 1, "mb_per_s": 9.0}],
           "dialects": [{"impl": "lmparse", "section": "dialect", "dialect": "qwen", "fixture": "string-arg",
                         "size": 10, "chunk": None, "mb_per_s": 4.0}],
           "versus": [{"case": "qwen JSON", "chunking": "4", "size": 10, "ours_mbs": 1.0}]}
    keys = dict(_rows(run))
    assert set(keys) == {("stack", "", "long-string", 10, "1"), ("dialect", "qwen", "string-arg", 10, "None"),
                         ("versus", "qwen JSON", "4", 10, "")}
    text = report({key: ratio for key, ratio in zip(sorted(keys), (0.5, 2.0, 1.0), strict=True)})
    assert text.startswith("configurations 3; geomean this/base 1.000; min 0.500; max 2.000")
