"""Shared pytest configuration.  Tests that put lmparse in front of an engine name its
template and tokenizer as a user must (``--model``, ``--chat-template``; tests/support/model_dir.py).

Property-based tests run derandomized (the same examples every run, so ``make test`` and CI are
reproducible); ``make fuzz`` runs them with fresh random examples each time, and its
finds become plain regression cases (``FOUND`` in tests/test_fuzz_all_parsers.py)."""

import os

try:
    from hypothesis import settings
except ImportError:  # the engine venvs (tests/integrations) run without the dev extra
    settings = None

# "repeatable" also reads no example database: a local .hypothesis/ left by `make fuzz` would
# otherwise replay its finds first, and two machines would run different examples.
HYPOTHESIS_PROFILES = ("repeatable", "explore")
HYPOTHESIS_PROFILE = os.environ.get("LMPARSE_HYPOTHESIS_PROFILE", "repeatable")
if HYPOTHESIS_PROFILE not in HYPOTHESIS_PROFILES:
    raise RuntimeError(f"LMPARSE_HYPOTHESIS_PROFILE={HYPOTHESIS_PROFILE!r}: use one of {', '.join(HYPOTHESIS_PROFILES)}")
if settings is not None:
    settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False, print_blob=True)
    settings.load_profile(HYPOTHESIS_PROFILE)

# ``make test`` runs the suite twice: every test on the pure core (LMPARSE_PURE=1, the
# reference), then the parser suites on the compiled one (LMPARSE_CORE_EXPECTED=compiled), where
# a test that passes on one core and fails on the other is a difference between them.  The
# server, benchmark and engine suites run once: what they add is not the parser core's.
EXPECTED_CORE = os.environ.get("LMPARSE_CORE_EXPECTED", "")
if EXPECTED_CORE:
    collect_ignore_glob = ["test_serve*", "test_bench*", "test_upstream*", "agents/*", "engines/*", "integrations/*",
                           "test_cli_process*", "test_wheel*"]  # (processes and the pure wheel: no core to compare)


def pytest_report_header(config):  # noqa: ARG001
    if settings is None:
        return None
    if settings.default.derandomize:
        return (f"lmparse: hypothesis profile {HYPOTHESIS_PROFILE} (derandomized: the same examples every run; "
                "`make fuzz` explores)")
    return f"lmparse: hypothesis profile {HYPOTHESIS_PROFILE} (fresh random examples; --hypothesis-seed to replay a run)"


def pytest_configure(config):
    config.addinivalue_line("markers", "pure_only(reason): a test of the pure core's internals (it patches a "
                            "module's globals or an instance's methods, or reads a docstring), skipped on the compiled one")
    if EXPECTED_CORE:
        import lmparse

        loaded = lmparse.core()
        if not loaded.startswith(EXPECTED_CORE):
            raise RuntimeError(f"LMPARSE_CORE_EXPECTED={EXPECTED_CORE}, but the {loaded} core is loaded "
                               "(make compiled builds the compiled one)")


def pytest_collection_modifyitems(config, items):  # noqa: ARG001
    if EXPECTED_CORE != "compiled":
        return
    import pytest

    for item in items:
        marker = item.get_closest_marker("pure_only")
        if marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"pure core only: {marker.args[0] if marker.args else ''}"))
