"""MarkerSet.search finds markers by their first character with str.find: it must answer exactly
what one regex search of the alternation answers (leftmost, then longest), for any text."""

from __future__ import annotations

import random
import re

import pytest

from lmparse.markers import MarkerSet

MARKER_SETS = [
    ("<tool_call>", "\n<tool_call>", "\n\n<tool_call>", "</think>", "<think>"),
    ("<a", "<abc", " <abcd"),  # one marker a prefix of another: a window must not cut the longer short
    ("[TOOL_CALLS]", " [TOOL_CALLS]"),
    ("</parameter>", "</function>", "\n</parameter>", "\n</function>"),  # the anchor is "</"
    ("<|tool_call>", "<|\"|>", "[x]"),  # two first characters: the regex alone
    ("<|", "<|x|>"),  # a marker is the anchor itself: every hit goes to the regex
]


def _reference(markers: tuple[str, ...], text: str, pos: int) -> tuple[int, int, str] | None:
    alternation = re.compile("|".join(map(re.escape, sorted(markers, key=len, reverse=True))))
    found = alternation.search(text, pos)
    return (found.start(), found.end(), found.group()) if found else None


@pytest.mark.parametrize("markers", MARKER_SETS, ids=lambda m: m[0])
def test_search_answers_what_one_regex_search_answers(markers: tuple[str, ...]) -> None:
    rng = random.Random(14)
    # ("<=", "<b": an anchor hit that no marker continues, passed over without the regex)
    pieces = ["a", "\n", " ", "<", "[", "</", "<=", "<b", "<t", *markers, *(m[: len(m) // 2] for m in markers)]
    marker_set = MarkerSet(markers)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        pos = rng.randint(0, len(text))
        found = marker_set.search(text, pos)
        assert (found and (found.start(), found.end(), found.group())) == _reference(markers, text, pos), (text, pos)


def test_plain_run_is_false_when_the_text_could_end_in_a_marker_lead() -> None:
    marker_set = MarkerSet(("<tool_call>", "\n<tool_call>"))
    assert marker_set.plain_run("plain words")
    assert not marker_set.plain_run("words\n")  # may be the lead of "\n<tool_call>"
    assert marker_set.plain_run("a < b")  # the anchor is the whole "<tool_call>"
    assert not marker_set.plain_run("a <tool")
    assert not marker_set.plain_run("")


@pytest.mark.parametrize("markers", MARKER_SETS, ids=lambda m: m[0])
def test_plain_run_never_passes_a_text_holding_or_ending_in_part_of_a_marker(markers: tuple[str, ...]) -> None:
    rng = random.Random(15)
    pieces = ["a", "\n", " ", "<", "[", "</", "x<y", *markers, *(m[: len(m) // 2] for m in markers)]
    marker_set = MarkerSet(markers)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if marker_set.plain_run(text):
            assert marker_set.search(text, 0) is None and marker_set.held_start(text) == len(text), text


def test_plain_run_passes_a_value_with_markup_that_no_close_tag_starts() -> None:
    value_end = MarkerSet(("</parameter>", "</function>", "\n</parameter>"))
    assert value_end.plain_run("if a <= b and List<str> ends: ")
    assert not value_end.plain_run("a </b")
    assert not value_end.plain_run("ends with <")
    assert not value_end.plain_run("ends with a newline\n")
