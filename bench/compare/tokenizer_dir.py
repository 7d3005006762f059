"""A model directory an engine's tokenizer loader accepts, made from the tokenizer test data (peer side).

The test data keeps ``tokenizer.json`` gzipped; engines want it plain, beside
``tokenizer_config.json`` and a ``config.json`` naming a model type.  Built once per
process in a temporary directory, removed at exit; nothing is written to the checkout.
"""

from __future__ import annotations

import atexit
import gzip
import json
import shutil
import tempfile
from pathlib import Path

__all__ = ["model_dir"]

_MADE: dict[str, Path] = {}


def model_dir(source: str) -> Path:
    if source in _MADE:
        return _MADE[source]
    src = Path(source)
    dest = Path(tempfile.mkdtemp(prefix="lmparse-compare-"))
    atexit.register(shutil.rmtree, dest, True)
    with gzip.open(src / "tokenizer.json.gz", "rb") as packed, open(dest / "tokenizer.json", "wb") as plain:
        shutil.copyfileobj(packed, plain)
    config = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    config.pop("auto_map", None)  # no remote code
    if config.get("tokenizer_class") == "LlamaTokenizerFast":
        # transformers 5 rebuilds a Llama tokenizer's pre-tokenizer (DeepSeek's spaces get lost):
        # read tokenizer.json as it is.
        config["tokenizer_class"] = "PreTrainedTokenizerFast"
    (dest / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    (dest / "config.json").write_text(json.dumps({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}),
                                      encoding="utf-8")
    _MADE[source] = dest
    return dest
