"""A Hugging Face model directory (``lmparse serve --model DIR``): the tokenizer, chat
template and end-of-turn tokens of the model an engine serves.

Read as transformers reads them: ``tokenizer.json`` (the ``tokenizers`` package),
``chat_template.jinja`` over ``tokenizer_config.json``'s ``chat_template`` (a string,
or named templates: ``default``, and ``tool_use`` for requests with tools), the
``bos_token`` / ``eos_token`` the template writes, and ``generation_config.json``'s
``eos_token_id`` (one id or a list): the tokens that end a turn; and
``tokenizer_config.json``'s ``response_template``, when the model ships one (served by the
``response-template`` parser when no dialect is named).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .templates import ChatTemplate, load_model_template, read_json_file, token_text
from .tokenizer import RealTokenizer, load_model_tokenizer

__all__ = ["ModelFiles", "load_model_dir"]


@dataclass(frozen=True)
class ModelFiles:
    path: Path
    tokenizer: RealTokenizer
    template: ChatTemplate | None  # None: the directory has no chat template
    bos: str  # the BOS and EOS texts tokenizer_config.json names ("" when none)
    eos: str
    stop_token_ids: tuple[int, ...]  # generation_config.json's eos_token_id, else the EOS token's id
    stop_texts: tuple[str, ...]  # those tokens' texts
    response_template: dict[str, Any] | None = None  # tokenizer_config.json's response_template
    # tokenizer_config.json's added tokens, for parsers that read markers off the vocabulary
    # (Hunyuan's tag suffix: ``create_parser(tokenizer=...)``).
    vocabulary: AddedTokens | None = None


class AddedTokens:
    """The ``get_vocab()`` of a model's added tokens (``added_tokens_decoder``): text -> id."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self._vocab = vocab

    def get_vocab(self) -> dict[str, int]:
        return self._vocab


def _added_tokens(config: dict[str, Any]) -> AddedTokens | None:
    decoder = config.get("added_tokens_decoder")
    if not isinstance(decoder, dict):
        return None
    vocab = {entry["content"]: int(i) for i, entry in decoder.items()
             if isinstance(entry, dict) and isinstance(entry.get("content"), str) and str(i).isdigit()}
    return AddedTokens(vocab) if vocab else None


def _ids(value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
    return ()


def load_model_dir(path: str | Path) -> ModelFiles:
    """The model files in ``path``; a ``ValueError`` names what is missing."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ValueError(f"--model {path} is not a directory (a Hugging Face model directory is expected)")
    tokenizer = load_model_tokenizer(root)
    config = read_json_file(root / "tokenizer_config.json")
    bos, eos = token_text(config.get("bos_token")), token_text(config.get("eos_token"))
    ids = _ids(read_json_file(root / "generation_config.json").get("eos_token_id"))
    if not ids and eos:
        steps = tokenizer.steps(eos)
        ids = (steps[0][1],) if len(steps) == 1 else ()
    texts = tuple(t for t in (tokenizer.decode_one(i) for i in ids) if t)
    declared = config.get("response_template")
    return ModelFiles(root, tokenizer, load_model_template(root), bos, eos, ids, texts,
                      declared if isinstance(declared, dict) else None, _added_tokens(config))
