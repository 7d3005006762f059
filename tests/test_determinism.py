"""``make test`` runs the same examples on every machine and every run: the property-based tests
under the derandomized "repeatable" profile (tests/conftest.py), every other random choice in the
suite from a seeded ``random.Random`` or numpy generator.  ``make fuzz`` (LMPARSE_HYPOTHESIS_PROFILE
=explore) is where fresh examples come from, with its seed printed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

TESTS = Path(__file__).parent
EXPLORING = os.environ.get("LMPARSE_HYPOTHESIS_PROFILE") == "explore"
pytestmark = pytest.mark.skipif(EXPLORING, reason="make fuzz explores: fresh examples on purpose")


def test_the_active_profile_is_derandomized_and_reads_no_example_database():
    assert settings.default.derandomize is True
    assert settings.default.database is None  # a local .hypothesis/ cannot change what runs


def test_a_property_draws_the_same_examples_twice():
    """What derandomize promises, checked on a real @given test: two runs, one sequence."""
    def run() -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []

        @settings(max_examples=40)
        @given(st.text(max_size=20), st.integers())
        def prop(text: str, number: int) -> None:
            seen.append((text, number))

        prop()
        return seen

    first, second = run(), run()
    assert len(first) >= 20 and first == second


def test_decorated_settings_inherit_the_profile():
    """``@settings(max_examples=...)`` on a test keeps the profile's derandomize."""
    assert settings(max_examples=5, deadline=None).derandomize is True


# Sources of randomness a test may not use: an unseeded generator, the module-level one, or a
# per-test override of the profile.
UNSEEDED = [
    (re.compile(r"\brandom\.Random\(\s*\)"), "random.Random() without a seed"),
    (re.compile(r"\bdefault_rng\(\s*\)"), "numpy default_rng() without a seed"),
    (re.compile(r"\bnp\.random\.(?!default_rng\b)\w+\("), "numpy's global generator"),
    (re.compile(r"(?<![\w.])random\.(?:random|randint|randrange|choice|choices|shuffle|sample|uniform|getrandbits|seed)\("),
     "the random module's global generator"),
    (re.compile(r"derandomize\s*=\s*False"), "a test that turns derandomize off"),
    (re.compile(r"@seed\("), "a hypothesis @seed of its own"),
]


def test_every_random_choice_in_the_suite_is_seeded():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("conftest.py", Path(__file__).name) and path.parent == TESTS:
            continue  # the profiles themselves, and this list
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(TESTS)}:{number}: {why}" for pattern, why in UNSEEDED if pattern.search(line)]
    assert not found, "\n".join(found)
