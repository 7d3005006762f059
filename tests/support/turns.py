"""Conversations for template round trips: a user turn, then an assistant turn that calls tools."""

from __future__ import annotations

from typing import Any

CONTENT = "Let me check."
REASONING = "The user wants weather."


def tool_call_conversation(calls: list[tuple[str, dict[str, Any]]], with_reasoning: bool) -> list[dict[str, Any]]:
    """``calls`` (name, arguments as a dict, as templates take them) after ``CONTENT``, with
    ``REASONING`` as the turn's ``reasoning_content`` when asked."""
    assistant: dict[str, Any] = {
        "role": "assistant", "content": CONTENT,
        "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                       for i, (n, a) in enumerate(calls)]}
    if with_reasoning:
        assistant["reasoning_content"] = REASONING
    return [{"role": "user", "content": "Weather?"}, assistant]
