"""What several families share and no one family owns: the generic ``<think>`` reasoning
parser, and the end-of-turn texts of the common template lineages."""

from __future__ import annotations

from ..reasoning import DefaultReasoningParser
from ._spec import Parser

__all__ = ["THINK", "CHATML", "LLAMA3", "DEEPSEEK", "GLM"]

# ``<think>`` ... ``</think>``, in reasoning unless the request turns thinking off.
THINK = Parser("default", DefaultReasoningParser)

CHATML = ("<|im_end|>", "<|endoftext|>")
LLAMA3 = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
DEEPSEEK = ("<｜end▁of▁sentence｜>",)
GLM = ("<|user|>", "<|observation|>", "<|endoftext|>")
