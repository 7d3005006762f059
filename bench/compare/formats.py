"""The formats lmparse shares with a peer, each peer's registry names for them, and their cases.

A tool format's reply is ``bench.fixtures``' one-call ``string-arg`` fixture rendered by
lmparse's own dialect (``bench.dialects``): a short content, then one call whose string
argument has the case's size; parsed with no reasoning parser on every side.  The
reasoning format is ``<think>`` + a long reasoning + ``</think>`` + a short answer.
Imports lmparse (through ``bench.dialects``): this process only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from ..dialects import all_dialects, call_reply
from ..fixtures import build_call
from .cases import Case

__all__ = ["Format", "FORMATS", "PEERS", "build_case", "select_formats"]

# "pure": lmparse's own pure-Python core, beside the compiled one the driver loads (``peer_pure``).
PEERS = ("vllm", "sglang", "lmdeploy", "smg", "pure")
ANSWER = "\n\nThe file is written."


class Format(NamedTuple):
    label: str
    ours: dict  # create_parser's tool_parser / reasoning_parser
    tokenizer: str  # directory under the tokenizer test data (vLLM's parsers take the real tokenizer)
    peers: dict  # peer -> its {"tool": name, "reasoning": name}


def _tool(name: str) -> dict:
    return {"tool": name, "reasoning": None}


FORMATS = (
    Format("qwen-json", _tool("qwen"), "qwen3",
           {"vllm": _tool("hermes"), "sglang": _tool("qwen25"), "lmdeploy": _tool("qwen")}),
    Format("qwen3-coder", _tool("qwen3-coder"), "qwen3",
           {"vllm": _tool("qwen3_coder"), "sglang": _tool("qwen3_coder"), "lmdeploy": _tool("qwen3coder")}),
    Format("glm-4.7", _tool("glm47"), "glm-4.7-flash",
           {"vllm": _tool("glm47"), "sglang": _tool("glm47"), "lmdeploy": _tool("glm47")}),
    Format("deepseek-v3.2", _tool("deepseek-v32"), "deepseek-v3.2",
           {"vllm": _tool("deepseek_v32"), "sglang": _tool("deepseekv32"), "lmdeploy": _tool("deepseek-v32")}),
    # Kimi-K2's vocabulary is not in the test data: the Qwen3 tokenizer stands in for vLLM
    # (its markers then arrive as several tokens, as tests/integrations/vllm does too).
    Format("kimi-k2", _tool("kimi-k2"), "qwen3",
           {"vllm": _tool("kimi_k2"), "sglang": _tool("kimi_k2"), "lmdeploy": _tool("kimi_k2")}),
    # Late-2026 families.  None of their vocabularies is in the test data: the Qwen3 tokenizer
    # stands in for vLLM, as for kimi-k2 (their markers then arrive as several tokens).  Each
    # peer listed registers the name in its own registry (checked in its venv); LMDeploy 0.18
    # registers none of the three, vLLM 0.33 has no gigachat35 (only on its main branch).
    Format("muse", _tool("muse"), "qwen3",
           {"vllm": _tool("muse"), "sglang": _tool("muse")}),
    Format("k2-horizon", _tool("k2-horizon"), "qwen3",
           {"vllm": _tool("k2_horizon"), "sglang": _tool("k2_horizon")}),
    Format("gigachat35", _tool("gigachat35"), "qwen3",
           {"sglang": _tool("gigachat35")}),
    Format("think", {"tool": None, "reasoning": "qwen3"}, "qwen3",
           {"vllm": {"tool": None, "reasoning": "qwen3"}, "sglang": {"tool": None, "reasoning": "qwen3"},
            "lmdeploy": {"tool": None, "reasoning": "default"},
            # SMG's Rust crate (bench.compare.peer_smg) has reasoning parsers only: this format alone.
            "smg": {"tool": None, "reasoning": "qwen3"}}),
)
# The pure core parses every format with the same parsers as the driver.
FORMATS = tuple(fmt._replace(peers={**fmt.peers, "pure": fmt.ours}) for fmt in FORMATS)


def select_formats(spec: str) -> list[Format]:
    """``all`` or comma-separated labels."""
    if spec.strip() == "all":
        return list(FORMATS)
    known = {f.label: f for f in FORMATS}
    wanted = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise ValueError(f"unknown format {', '.join(map(repr, unknown)) or spec!r}; choose all or from: "
                         f"{', '.join(known)}")
    return [known[name] for name in wanted]


def build_case(fmt: Format, size: int, tokenizers: Path | None) -> Case:
    tokenizer = str(tokenizers / fmt.tokenizer) if tokenizers else ""
    call = build_call("string-arg", size)
    if fmt.ours["tool"] is None:
        reasoning = json.loads(call.arguments)["content"]
        text = "<think>" + reasoning + "</think>" + ANSWER
        return Case(fmt.label, size, text, ANSWER, reasoning, [], [], ["<think>", "</think>"], tokenizer)
    dialect = next(d for d in all_dialects() if fmt.ours["tool"] in d.names)
    reply = call_reply(dialect, call)
    return Case(fmt.label, size, reply.text, reply.content, "", [[reply.name, reply.arguments]], reply.tools,
                list(dialect.markers), tokenizer)
