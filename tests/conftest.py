"""Shared pytest configuration.

Tests that put lmparse in front of an engine without naming a chat template (written before
``--engine`` required one) keep the family's template from the tokenizer test data: the
suite sets ``LMPARSE_TESTDATA_TEMPLATES_FOR_TESTS`` (inherited by the ``lmparse serve``
processes it starts).  New tests pass ``--model`` / ``--chat-template`` explicitly
(tests/support/model_dir.py); tests of the startup error unset it."""

import os

os.environ["LMPARSE_TESTDATA_TEMPLATES_FOR_TESTS"] = "1"
