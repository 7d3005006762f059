"""A tiny random-weight GGUF with a real vocabulary, written at test time for llama-server.

The weights are noise (qwen3 architecture, hidden 64, one layer, seeded), so what the model
says is forced by a grammar (see ``forcing``); what matters is that llama.cpp sees the real
Qwen3 vocabulary, merges, token types and chat template, written the way its own converter
(``convert_hf_to_gguf.py``) writes them: byte-level BPE (``gpt2``, pre-tokenizer ``qwen2``),
ids without a token padded with ``[PAD<id>]`` entries up to the embedding size, added
tokens the tokenizer calls special or that look like ``<|...|>`` typed CONTROL, the others
(``<tool_call>``, ``<think>`` and their closers, ``<tool_response>``) USER_DEFINED.  Whether a
token is CONTROL decides whether llama-server prints its text, which is why a second model
types the tool markers CONTROL, as Llama 3's ``<|python_tag|>`` or DeepSeek's markers are in
their GGUFs.  Nothing here is committed: the file goes to a pytest cache directory.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

QWEN3_VOCAB = 151_936  # the embedding rows of every Qwen3 size; the tokenizer names 151 669
QWEN3_TEMPLATE = "Qwen-Qwen3-0.6B.jinja"  # what lmparse's qwen3 family renders with
PAD_ID, IM_START_ID, IM_END_ID = 151_643, 151_644, 151_645
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 64, 4, 2, 16, 128
CONTEXT = 4096

# llama.cpp's token types (gguf.TokenType)
NORMAL, CONTROL, USER_DEFINED, UNUSED = 1, 3, 4, 5


def _looks_special(text: str) -> bool:
    """The converter's ``does_token_look_special`` for ``<|...|>`` tokens."""
    return text.startswith("<|") and text.endswith("|>")


def qwen3_vocabulary(testdata: Path, control: frozenset[str] = frozenset()) -> tuple[list[str], list[int], list[str]]:
    """Tokens by id, their types and the merges (``"left right"``) of the real Qwen3
    tokenizer; the added tokens named in ``control`` are CONTROL whatever the tokenizer says."""
    spec = json.loads(gzip.decompress((testdata / "qwen3" / "tokenizer.json.gz").read_bytes()))
    by_id: dict[int, tuple[str, int]] = {i: (t, NORMAL) for t, i in spec["model"]["vocab"].items()}
    for added in spec["added_tokens"]:
        text = added["content"]
        special = added["special"] or _looks_special(text) or text in control
        by_id[added["id"]] = (text, CONTROL if special else USER_DEFINED)
    tokens, types = [], []
    for i in range(QWEN3_VOCAB):
        text, kind = by_id.get(i, (f"[PAD{i}]", UNUSED))
        tokens.append(text)
        types.append(kind)
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    return tokens, types, merges


def _weights(seed: int) -> dict[str, np.ndarray]:
    """Tensor name -> array (numpy order: the ggml shape reversed).  The output layer is
    tied to the embedding, as in Qwen3-0.6B."""
    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)

    ones = np.ones  # RMSNorm gains
    blk = "blk.0."
    return {
        "token_embd.weight": matrix(QWEN3_VOCAB, HIDDEN).astype(np.float16),
        blk + "attn_norm.weight": ones(HIDDEN, dtype=np.float32),
        blk + "attn_q.weight": matrix(HEADS * HEAD_DIM, HIDDEN),
        blk + "attn_k.weight": matrix(KV_HEADS * HEAD_DIM, HIDDEN),
        blk + "attn_v.weight": matrix(KV_HEADS * HEAD_DIM, HIDDEN),
        blk + "attn_q_norm.weight": ones(HEAD_DIM, dtype=np.float32),
        blk + "attn_k_norm.weight": ones(HEAD_DIM, dtype=np.float32),
        blk + "attn_output.weight": matrix(HIDDEN, HEADS * HEAD_DIM),
        blk + "ffn_norm.weight": ones(HIDDEN, dtype=np.float32),
        blk + "ffn_gate.weight": matrix(FFN, HIDDEN),
        blk + "ffn_up.weight": matrix(FFN, HIDDEN),
        blk + "ffn_down.weight": matrix(HIDDEN, FFN),
        "output_norm.weight": ones(HIDDEN, dtype=np.float32),
    }


def write_qwen3_gguf(path: Path, testdata: Path, control: frozenset[str] = frozenset(), seed: int = 11) -> Path:
    """Write the model to ``path`` (about 20 MB) and return it."""
    import gguf

    tokens, types, merges = qwen3_vocabulary(testdata, control)
    template = (testdata / "templates" / QWEN3_TEMPLATE).read_text()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    writer = gguf.GGUFWriter(str(partial), "qwen3")
    writer.add_name("lmparse-test-qwen3-random")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(PAD_ID)  # as the converter writes Qwen's: bos = pad = <|endoftext|>
    writer.add_pad_token_id(PAD_ID)
    writer.add_eos_token_id(IM_END_ID)
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)
    for name, array in _weights(seed).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(path)
    return path
