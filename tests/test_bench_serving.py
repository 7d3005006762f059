"""The serving benchmark's driver on tiny sizes: it runs, checks what it streams, and writes its
section and plot.  Never a timing assertion."""

from __future__ import annotations

import json

import orjson
import pytest

pytest.importorskip("uvicorn")

from bench.serving import inprocess, stream  # noqa: E402
from bench.serving.__main__ import main  # noqa: E402
from bench.serving.bare import split_events  # noqa: E402


def _fold_chat(sse: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for event in split_events(sse):
        data = event.strip().removeprefix(b"data: ")
        if data == b"[DONE]":
            continue
        for choice in orjson.loads(data)["choices"]:
            delta = choice["delta"]
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for call in delta.get("tool_calls") or ():
                slot = calls.setdefault(call["index"], ["", ""])
                slot[0] += call["function"].get("name") or ""
                slot[1] += call["function"].get("arguments") or ""
    return "".join(content), "".join(reasoning), [tuple(calls[i]) for i in sorted(calls)]


def test_replayed_stream_comes_out_of_chat_completions_as_reasoning_text_and_the_call():
    _, steps = stream.token_stream(4)
    seconds, tokens, sse = inprocess.run_once(inprocess.binding(steps), "chat.completions")
    content, reasoning, calls = _fold_chat(sse)
    said = "word0 word1 word2 word3"
    assert tokens == len(steps)
    assert reasoning.strip() == f"Let me think: {said}."
    assert content.strip() == f"Here is my answer: {said}."
    assert [(name, json.loads(args)) for name, args in calls] == [("write_note", {"text": said})]


@pytest.mark.parametrize("api", sorted(inprocess.APIS))
def test_every_api_streams_every_token_of_the_replay(api):
    _, steps = stream.token_stream(3)
    _, tokens, sse = inprocess.run_once(inprocess.binding(steps), api)
    assert tokens == len(steps)
    assert b"write_note" in sse and b"answer" in sse and b"think" in sse


def test_tiny_driver_writes_the_serving_section_its_plot_and_numbers(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\n<!-- bench:summary -->\nkept\n<!-- /bench:summary -->\n", encoding="utf-8")
    numbers = tmp_path / "serving.json"
    assert main(["--tiny", "--no-peers", "--clients", "2", "3", "--page", str(page), "--json", str(numbers)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "kept" in text  # another driver's section is left alone
    section = text.split("<!-- bench:serving -->")[1].split("<!-- /bench:serving -->")[0]
    for api in inprocess.APIS:
        assert f"| {api} |" in section
    assert "| 2 |" in section and "| 3 |" in section
    assert "img/serving-concurrency.png" in section
    assert (tmp_path / "img" / "serving-concurrency.png").stat().st_size > 0
    results = json.loads(numbers.read_text(encoding="utf-8"))
    for n in ("2", "3"):
        for server in ("lmparse", "bare"):
            runs = results["load"]["runs"][n]["detail"][server]
            assert runs and all(run["errors"] == 0 and run["events"] > 0 for run in runs)
    assert results["in_process"]["messages"]["tokens"] == results["stream"]["tokens"]


@pytest.mark.parametrize("flags, writes", [([], False), (["--write-docs"], True)])
def test_the_tracked_page_is_written_only_with_write_docs(monkeypatch, flags, writes):
    """``python -m bench.serving --tiny`` checks the driver; only ``--write-docs`` (make bench-serving)
    may rewrite docs/benchmarks.md and its plot, which git tracks."""
    import bench.serving.__main__ as driver

    written, plotted = [], []
    monkeypatch.setattr(driver, "run", lambda args: {"load": {}})
    monkeypatch.setattr(driver.report, "render", lambda results, commands, image: "section")
    monkeypatch.setattr(driver.report, "plot", lambda load, path: plotted.append(path) or True)
    monkeypatch.setattr(driver, "write_section", lambda name, markdown, page: written.append(page))
    assert main(["--tiny", "--no-peers", *flags]) == 0
    assert written == ([driver.PAGE] if writes else [])
    assert bool(plotted) == writes
