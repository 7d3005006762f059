"""One reply per family (reasoning, content, two calls, in the family's own wire format), the
harder replies built from them, and vLLM's rows of the compatibility table in docs/plugins.md:
each reply through vLLM's serving layer with the lmparse plugin and with vLLM's in-tree parser
for the same family, each compared with lmparse's own ``parse_complete``.

Run as ``$(scripts/setup_vllm.sh) -m tests.integrations.vllm.cases`` to print the rows.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from lmparse import create_parser

from .. import compat
from ..new_families import NEW_FAMILIES, NOT_RUN, own_cell
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
    in_tree: tuple[str, str | None] | None  # vLLM's own --tool-call-parser and --reasoning-parser (None: none)
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
# The families added in late 2026 (tests/integrations/new_families.py): their clean reply, its two
# calls rendered by the dialect; no tokenizer of theirs in the test data, so Qwen3's stands in
# (harness.FAMILIES).
NEW_CASES = [Case(f.name, (f.tool, f.reasoning), f.vllm,  # type: ignore[arg-type]
                  f.reply([(name, json.dumps(args)) for name, args in CALLS]),
                  dict(f.chat_template_kwargs) or None) for f in NEW_FAMILIES]
BY_FAMILY = {case.family: case for case in [*CASES, *NEW_CASES]}
ENGINE = "vLLM 0.33.0"  # as in compat.ENGINES
OPENERS = {"qwen": "<tool_call>", "qwen3coder": "<tool_call>", "glm47": "<tool_call>",
           "deepseek-v32": "<｜DSML｜function_calls>", "kimi-k2": "<|tool_calls_section_begin|>"}
CLOSE = "</think>"

Step = int | tuple[int, ...] | None  # tokens per delta, sizes in turn, or one piece per delta
NON_STREAM: tuple[str, bool, Step] = ("non-stream", False, 0)
ONE: tuple[str, bool, Step] = ("stream, 1 token", True, 1)
FIVE: tuple[str, bool, Step] = ("stream, 5 tokens", True, 5)


@dataclass(frozen=True)
class Reply:
    """One row group: a family's reply (pieces: one streamed increment each) and its deliveries."""

    label: str
    family: str
    pieces: tuple[str, ...]
    deliveries: tuple[tuple[str, bool, Step], ...]
    finish: str = "stop"
    text: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", "".join(self.pieces))


def _cut(text: str, *marks: int) -> tuple[str, ...]:
    bounds = [0, *marks, len(text)]
    return tuple(text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a)


def _replies(case: Case) -> list[Reply]:
    f, reply, opener = case.family, case.reply, OPENERS[case.family]
    first = reply.index(opener)
    calls_at = reply.index("Sure.") + len("Sure.")
    out = [Reply(f"{f}: reasoning, text, two calls", f, (reply,), (NON_STREAM, ONE, FIVE))]
    if f in ("qwen3coder", "glm47", "kimi-k2"):
        out.append(Reply(f"{f}: text and the call opener in one delta", f,
                         _cut(reply, reply.index("Sure."), first + len(opener)), (("stream, by pieces", True, None),)))
    out.append(Reply(f"{f}: both whole calls in one delta", f, _cut(reply, calls_at),
                     (("stream, by pieces", True, None),)))
    no_text = reply[:calls_at - len("Sure.")].rstrip(" \n") + reply[calls_at:].lstrip(" \n")
    if f == "qwen":
        no_text = reply[:calls_at - len("Sure.")] + reply[calls_at:].lstrip(" \n")  # Qwen3's "</think>\n\n"
    close, call = no_text.index(CLOSE), no_text.index(opener)
    out.append(Reply(f"{f}: `</think>` and the call opener in one delta, no text between", f,
                     _cut(no_text, close, call + len(opener)), (("stream, by pieces", True, None),)))
    if f == "deepseek-v32":
        out.append(Reply(f"{f}: DSML under multi-token deltas", f, (reply,),
                         (("stream, 2 tokens", True, 2), ("stream, 7 tokens", True, 7),
                          ("stream, 16 tokens", True, 16), ("stream, 2-16 tokens", True, (2, 16, 3, 11, 5, 7)))))
    cut = reply.rindex("NY") + 1  # inside the second call's arguments
    out.append(Reply(f"{f}: cut off by max_tokens inside a call's arguments", f, (reply[:cut],),
                     (NON_STREAM, ONE), finish="length"))
    return out


def _new_replies(case: Case) -> list[Reply]:
    what = "reasoning, text, two calls" if case.lmparse[1] else "text, two calls"
    return [Reply(f"{case.family}: {what}", case.family, (case.reply,), (NON_STREAM, ONE))]


REPLIES = [reply for case in CASES for reply in _replies(case)] + [
    reply for case in NEW_CASES for reply in _new_replies(case)]


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
    if plugin:
        tool, reasoning = (f"lmparse-{n}" if n else None for n in case.lmparse)
    else:
        assert case.in_tree is not None
        tool, reasoning = case.in_tree
    return harness.serving(family, tool, reasoning)


def run(case: Case, plugin: bool, stream: bool, step: Step, reply: str | tuple[str, ...] | None = None,
        finish: str = "stop") -> tuple[Any, ...]:
    got = harness.chat(served(case.family, plugin), body(case, stream), case.reply if reply is None else reply,
                       step, finish)
    return harness.outcome(got)


def _compat(outcome: tuple[Any, ...]) -> compat.Reply:
    content, reasoning, calls = outcome
    return (content or "", reasoning or "",
            tuple((name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls))


def cell(reply: Reply, plugin: bool, stream: bool, step: Step) -> str:
    case = BY_FAMILY[reply.family]
    if not plugin and case.in_tree is None:
        return NOT_RUN  # vLLM has no parser for the family
    want = _compat(expected(case, reply=reply.text))
    try:
        return compat.verdict(_compat(run(case, plugin, stream, step, reply.pieces, reply.finish)), want)
    except Exception as exc:  # an in-tree parser that fails is a table cell, not a crash
        return compat.failure(exc)


@functools.cache
def rows() -> tuple[compat.Row, ...]:
    out = []
    for reply in REPLIES:
        own = own_cell(BY_FAMILY[reply.family].in_tree, " + ")
        for label, stream, step in reply.deliveries:
            out.append(compat.Row(reply.label, ENGINE, label, cell(reply, True, stream, step), own,
                                  cell(reply, False, stream, step)))
    return tuple(out)


if __name__ == "__main__":
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    import lmparse.integrations.vllm  # noqa: F401  (registers lmparse-*)

    print("\n".join([compat.HEADER, *(row.markdown() for row in rows())]))
