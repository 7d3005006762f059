"""transformers 5.24.0's built-in fallback response templates (qwen3, qwen3_5, gemma4), written
here from the facts in PROTOCOLS.md ("HF ``response_template``", "Built-in fallbacks"); no
file or code of transformers was copied.

``PROMPTS`` gives each the generation prompt its chat template renders (HF's ``prefix``):
thinking on and off for the Qwen ones, Gemma 4's ``<|turn>model\\n`` (the model opens its own
channel).
"""

from __future__ import annotations

from typing import Any

_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}

QWEN3: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "defaults": {"role": "assistant"},
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)"},
    },
}

QWEN3_5: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "defaults": {"role": "assistant"},
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            "close_pattern": r"</function>\s*</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\s*(?P<value>.*?)\s*</parameter>"},
            "transform": _CALL,
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"},
    },
}

GEMMA4: dict[str, Any] = {
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "defaults": {"role": "assistant"},
    "fields": {
        "reasoning_content": {"open": "<|channel>thought\n", "close": "<channel|>"},
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
            "close": "<tool_call|>",
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            "transform": _CALL,
        },
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"]},
    },
}

QWEN_THINKING = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
QWEN_NOT_THINKING = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
GEMMA_PROMPT = "<|turn>user\nhi<turn|>\n<|turn>model\n"


# Beam-style metadata (vLLM's ``beam`` parser; PROTOCOLS.md, "``beam``"): no Beam checkpoint is
# public, so these are written by hand in the shape vLLM accepts.  The field names are vLLM's
# fixed ones (``thinking``, not ``reasoning_content``), ``defaults`` holds only ``role``.
BEAM_GEMMA: dict[str, Any] = {
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "defaults": {"role": "assistant"},
    "fields": {
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
        "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
        "tool_calls": GEMMA4["fields"]["tool_calls"],  # the same call region as the plain Gemma 4 metadata
    },
}

# Every field delimited (vLLM adds the implicit content field), a json call region with no
# transform (its object is the call), several thinking openers ending with the shortest.
BEAM_DELIMITED: dict[str, Any] = {
    "start_anchor": "<assistant>",
    "fields": {
        "thinking": {"open": ["<think>", "\n<think>"], "close": "</think>"},
        "tool_calls": {"open": "<call>", "close": "</call>", "content": "json", "optional": False},
    },
}

BEAM_XML: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            "close_pattern": r"</function>\s*</tool_call>",
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\s*(?P<value>.*?)\s*</parameter>"},
            "transform": _CALL,
        },
        "content": {},
    },
}
