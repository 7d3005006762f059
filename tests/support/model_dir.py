"""Tiny Hugging Face model directories built at run time from the tokenizer test data
(nothing is committed): the real Qwen3 ``tokenizer.json``, a ``tokenizer_config.json``
holding a chat template, and a ``generation_config.json`` with the end-of-turn ids."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lmparse.serve.tokenizer import testdata_dir

QWEN3_TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
QWEN3_EOS_IDS = [151645, 151643]  # <|im_end|>, <|endoftext|>: Qwen3's generation_config.json


def data_file(relative: str) -> Path:
    """A file of the tokenizer test data (the test is skipped without it)."""
    root = testdata_dir()
    if root is None or not (root / relative).is_file():
        pytest.skip(f"{relative} not in the tokenizer test data (run `make testdata`)")
    return root / relative


def qwen3_model_dir(dest: Path, chat_template: Any = None, jinja: str | None = None,
                    eos_token_id: Any = QWEN3_EOS_IDS) -> Path:
    """A Qwen3 model directory in ``dest``: ``chat_template`` goes into tokenizer_config.json
    (default: the Qwen3 template of the test data), ``jinja`` into chat_template.jinja."""
    tokenizer = data_file("qwen3/tokenizer.json.gz")
    dest.mkdir(parents=True, exist_ok=True)
    with gzip.open(tokenizer, "rb") as src, open(dest / "tokenizer.json", "wb") as out:
        shutil.copyfileobj(src, out)
    if chat_template is None:
        chat_template = data_file(f"templates/{QWEN3_TEMPLATE}").read_text(encoding="utf-8")
    config = {"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": "<|im_end|>",
              "pad_token": "<|endoftext|>", "chat_template": chat_template}
    (dest / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    (dest / "generation_config.json").write_text(json.dumps({"eos_token_id": eos_token_id}), encoding="utf-8")
    if jinja is not None:
        (dest / "chat_template.jinja").write_text(jinja, encoding="utf-8")
    return dest


_SHARED: list[Path] = []


def shared_qwen3_model_dir() -> Path:
    """One Qwen3 model directory for the whole test process (made on first use, in a temp dir)."""
    if not _SHARED:
        import tempfile

        _SHARED.append(qwen3_model_dir(Path(tempfile.mkdtemp(prefix="lmparse-model-")) / "Qwen3"))
    return _SHARED[0]
