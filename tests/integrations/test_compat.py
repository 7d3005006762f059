"""The compatibility-table plumbing the engine suites share (runs in the main venv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations import compat
from tests.integrations.compat import Row, verdict

WANT = ("Sure.", "thinking", (("get_weather", '{"city": "Paris"}'),))


def test_a_verdict_ignores_json_spacing_but_names_every_difference():
    assert verdict(("Sure.", "thinking", (("get_weather", '{"city":"Paris"}'),)), WANT) == "same"
    assert verdict(("", "thinking", ()), WANT) == "calls: 0 of 1; content '' (lmparse: 'Sure.')"
    assert verdict(("Sure.", "thinking", (("get_weather", '{"city": "Rome"}'),)), WANT) == "call arguments differ"
    assert verdict(("Sure.", "thinking", (("get_weather", '{"city": "Par'),)), WANT) == "call arguments differ"


def _page(tmp_path: Path, rows: str = "") -> Path:
    page = tmp_path / "plugins.md"
    page.write_text(f"# t\n\n{compat.BEGIN}\n{compat.HEADER}\n{rows}{compat.END}\n\nafter\n", encoding="utf-8")
    return page


def test_updating_one_engine_keeps_the_others_rows_and_the_engine_order(tmp_path, monkeypatch):
    page = _page(tmp_path)
    sglang = [Row("qwen", "SGLang 0.5.23", "non-stream", "same", "`qwen`", "calls: 1 of 2")]
    vllm = [Row("qwen", "vLLM 0.33.0", "stream, 1 token", "same", "`hermes`", "same"),
            Row("a|b", "vLLM 0.33.0", "non-stream", "same", "`hermes`", "same")]
    compat.update("SGLang 0.5.23", sglang, page)
    compat.update("vLLM 0.33.0", vllm, page)
    text = page.read_text(encoding="utf-8")
    assert text.index("vLLM 0.33.0") < text.index("SGLang 0.5.23") and text.endswith("\n\nafter\n")
    assert compat.documented("vLLM 0.33.0", page) == [row.markdown() for row in vllm]
    assert "a\\|b" in text
    monkeypatch.delenv("LMPARSE_UPDATE_DOCS", raising=False)
    compat.check_or_update("SGLang 0.5.23", sglang, page)
    with pytest.raises(AssertionError, match="LMPARSE_UPDATE_DOCS=1"):
        compat.check_or_update("SGLang 0.5.23", [*sglang, *sglang], page)


def test_the_page_keeps_its_markers():
    assert compat.BEGIN in compat.DOC.read_text(encoding="utf-8")
