"""Shared pytest configuration.  Tests that put lmparse in front of an engine name its
template and tokenizer as a user must (``--model``, ``--chat-template``; tests/support/model_dir.py)."""
