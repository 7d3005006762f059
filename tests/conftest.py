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

if settings is not None:
    settings.register_profile("repeatable", derandomize=True, print_blob=True)
    settings.register_profile("explore", derandomize=False, print_blob=True)
    settings.load_profile(os.environ.get("LMPARSE_HYPOTHESIS_PROFILE", "repeatable"))
