"""One reply per family (reasoning, content, two calls, in the family's own wire format) and
the compatibility table: vLLM's serving layer with the lmparse plugin and with vLLM's in-tree
parser for the same family, each compared with lmparse's own ``parse_complete``.

Run as ``$(scripts/setup_vllm.sh) -m tests.integrations.vllm.cases`` to print the table.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from lmparse import create_parser

from . import harness

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALLS = [("get_weather", {"city": "SF"}), ("get_weather", {"city": "NY"})]


def _dsml(city: str) -> str:
    return (f'<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">{city}'
            "</｜DSML｜parameter>\n</｜DSML｜invoke>\n")


def _kimi(city: str, i: int) -> str:
    return (f"<|tool_call_begin|>functions.get_weather:{i}<|tool_call_argument_begin|>"
            f'{{"city": "{city}"}}<|tool_call_end|>')


@dataclass(frozen=True)
class Case:
    family: str
    lmparse: tuple[str, str]  # lmparse tool and reasoning parser names
    in_tree: tuple[str, str]  # vLLM's own --tool-call-parser and --reasoning-parser for the family
    reply: str  # what the model generates after the rendered prompt
    chat_template_kwargs: dict[str, Any] | None = None


CASES = [
    Case("qwen", ("qwen", "qwen3"), ("hermes", "qwen3"),
         "<think>\nLet me check.\n</think>\n\nSure."
         + "".join(f'\n<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "{c}"}}}}\n</tool_call>'
                   for c in ("SF", "NY"))),
    # Qwen3.5's template (Qwen3-Coder XML calls, <think> opened by the prompt)
    Case("qwen3coder", ("qwen3coder", "qwen3"), ("qwen3_coder", "qwen3"),
         "Let me check.\n</think>\n\nSure."
         + "".join(f"\n<tool_call>\n<function=get_weather>\n<parameter=city>\n{c}\n</parameter>\n</function>\n"
                   "</tool_call>" for c in ("SF", "NY"))),
    Case("glm47", ("glm47", "glm45"), ("glm47", "glm45"),
         "Let me check.</think>Sure."
         + "".join(f"<tool_call>get_weather<arg_key>city</arg_key><arg_value>{c}</arg_value></tool_call>"
                   for c in ("SF", "NY"))),
    Case("deepseek-v32", ("deepseek-v32", "deepseek-v32"), ("deepseek_v32", "deepseek_v3"),
         "Let me check.</think>Sure.\n\n<｜DSML｜function_calls>\n" + _dsml("SF") + _dsml("NY")
         + "</｜DSML｜function_calls>", {"thinking": True}),
    Case("kimi-k2", ("kimi-k2", "kimi-k2"), ("kimi_k2", "kimi_k2"),
         "<think>Let me check.</think>Sure.<|tool_calls_section_begin|>" + _kimi("SF", 0) + _kimi("NY", 1)
         + "<|tool_calls_section_end|>"),
]
BY_FAMILY = {case.family: case for case in CASES}
MODES = [("non-stream", False, 0), ("stream, 1 token", True, 1), ("stream, 5 tokens", True, 5),
         ("stream, 40 tokens", True, 40)]


def body(case: Case, stream: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "Weather in SF and NY?"}],
                           "tools": TOOLS, "stream": stream}
    if case.chat_template_kwargs:
        out["chat_template_kwargs"] = case.chat_template_kwargs
    return out


def expected(case: Case, request: dict[str, Any] | None = None, reply: str | None = None,
             names: tuple[str, str | None] | None = None) -> tuple[Any, ...]:
    """lmparse's own answer for the reply (the case's, or ``reply`` to ``request``)."""
    parser = create_parser(*(names or case.lmparse), request=request or body(case, False))
    msg = parser.parse_complete(case.reply if reply is None else reply)
    return harness.outcome({"content": msg.content, "reasoning": msg.reasoning_content,
                            "tool_calls": [tc.to_dict() for tc in msg.tool_calls]})


@functools.cache
def served(family: str, plugin: bool) -> harness.Served:
    case = BY_FAMILY[family]
    tool, reasoning = (f"lmparse-{n}" for n in case.lmparse) if plugin else case.in_tree
    return harness.serving(family, tool, reasoning)


def run(case: Case, plugin: bool, stream: bool, step: int) -> tuple[Any, ...]:
    return harness.outcome(harness.chat(served(case.family, plugin), body(case, stream), case.reply, step))


def verdict(got: tuple[Any, ...], want: tuple[Any, ...]) -> str:
    """One table cell: what differs from lmparse's own parse."""
    if got == want:
        return "same"
    parts = []
    if got[2] != want[2]:
        parts.append(f"calls {len(got[2])}/{len(want[2])}" if len(got[2]) != len(want[2]) else "call arguments")
    for i, name in ((0, "content"), (1, "reasoning")):
        if got[i] != want[i]:
            parts.append(f"{name} {got[i]!r} (lmparse: {want[i]!r})"[:80])
    return "; ".join(parts)


def cell(case: Case, plugin: bool, stream: bool, step: int) -> str:
    try:
        return verdict(run(case, plugin, stream, step), expected(case))
    except Exception as exc:  # an in-tree parser that fails is a table cell, not a crash
        return f"error: {type(exc).__name__}"


def table() -> str:
    rows = ["| family | mode | lmparse plugin | vLLM in-tree parser |", "|---|---|---|---|"]
    for case in CASES:
        for label, stream, step in MODES:
            rows.append(f"| {case.family} (`{'` + `'.join(case.in_tree)}`) | {label} | "
                        f"{cell(case, True, stream, step)} | {cell(case, False, stream, step)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    import lmparse.integrations.vllm  # noqa: F401  (registers lmparse-*)

    print(table())
