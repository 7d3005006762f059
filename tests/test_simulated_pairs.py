"""The simulated model's ``name=value`` reader: what it reads, and that long words cost linear work.

A word of a million letters without "=" used to be retried from each of its characters
(10 K characters took 0.4 s, 40 K 11 s).  The last test feeds 1 MB inputs of each shape
that made it backtrack; they must come back with the right answer, not time out CI.
"""

from __future__ import annotations

import pytest

pytest.importorskip("jinja2")

from lmparse.serve.engines.answer import user_pairs  # noqa: E402


@pytest.mark.parametrize("text, pairs", [
    ("city=Paris", [("city", "Paris")]),
    ('Call get_weather with city="New York", days=3', [("city", "New York"), ("days", "3")]),
    ("path='a b' mode=r;x=1", [("path", "a b"), ("mode", "r"), ("x", "1")]),
    ("a=b=c", [("a", "b=c")]),  # the value runs to whitespace, "," or ";"
    ("1st-name=Ann", [("st-name", "Ann")]),  # a name starts at the run's first letter
    ("éa=1 9=2 -x.y=3", [("a", "1"), ("x.y", "3")]),
    ('q="unclosed', [("q", '"unclosed')]),
    ("no pairs here = at all", []),
])
def test_pairs_are_read_as_written(text: str, pairs: list[tuple[str, str]]) -> None:
    assert user_pairs(text) == pairs


@pytest.mark.parametrize("unit", ["a", "a-", "1a", "é", "9", 'a="', "a='"])
def test_a_mebibyte_word_is_read_in_linear_work(unit: str) -> None:
    word = unit * ((1 << 20) // len(unit))
    pairs = user_pairs(word + " tail=end")
    assert pairs[-1] == ("tail", "end")
    assert all(len(value) <= len(word) for _, value in pairs)
