"""The reduced reliability run (``python -m reliability --reduced``) against live servers:
every row passes and nothing is lost; ``make reliability`` runs the full set into
docs/reliability.md."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from lmparse.serve.families import get_family, missing_parsers  # noqa: E402
from reliability.__main__ import SECTIONS, run  # noqa: E402

pytestmark = pytest.mark.skipif(bool(missing_parsers(get_family("qwen3"))), reason="qwen3 parsers not registered")


@pytest.mark.parametrize("section", list(SECTIONS))
def test_reduced_reliability_section_loses_nothing(section, caplog):
    caplog.set_level("ERROR")
    (result,) = run([section], "reduced")
    # The harness's own servers (the scripted engine) raise nothing: a traceback from them in
    # `make reliability`'s output is a false alarm next to a green table.
    assert not [r.getMessage() for r in caplog.records if r.exc_info], "the harness logged a traceback"
    assert result.rows, "the section checked nothing"
    failed = [f"{r.case}: {r.observed}" for r in result.rows if not r.ok]
    assert not failed, "\n".join(failed)
    assert sum(r.lost for r in result.rows) == 0
