"""The response-template parser under random templates (their region markers drawn at random) and
random replies built from those markers' pieces: nothing raises, the stream invariants hold, and
any chunking folds to the complete parse."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import create_parser
from lmparse.response.template import ResponseTemplate

from .support.response_templates import GEMMA4, GEMMA_PROMPT, QWEN3, QWEN3_5, QWEN_THINKING
from .support.stream import check_chunkings, random_chunks, result_of
from .test_fuzz_all_parsers import PIECES

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {
    "a": {"type": "string"}, "b": {"type": "integer"}}}}} for n in ("f", "g")]
NAMED = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
SHAPES = ("json", "xml", "literal", "named-json", "python")


def _escape(text: str) -> str:
    return "".join("\\" + c if c in ".^$*+?{}[]|()\\" else c for c in text)


def template_for(shape: str, tag: str, think: str, delim: str) -> tuple[dict[str, Any], list[str]]:
    """A template of ``shape`` whose markers are built from ``tag`` / ``think``, and its syntax pieces."""
    open_, close = f"<{tag}>", f"</{tag}>"
    fields: dict[str, Any] = {"reasoning_content": {"open": f"<{think}>", "close": f"</{think}>"},
                              "content": {"close": "<|end|>"}}
    pieces = [open_, close, open_[:3], close[:3], f"<{think}>", f"</{think}>", f"<{think}"]
    if shape == "json":
        fields["tool_calls"] = {"open_pattern": r"\s*" + _escape(open_), "close": close, "content": "json",
                                "transform": {"type": "function", "function": "{content}"}}
        pieces += ['{"name": "f", "arguments": ', '{"a": "x"}', '"name"', '"g"', "}", "{"]
    elif shape == "xml":
        fields["tool_calls"] = {"open_pattern": _escape(open_) + r"\s*<fn=(?P<name>[^>\n]+)>",
                                "close_pattern": r"</fn>\s*" + _escape(close), "content": "xml-inline",
                                "content_args": {"tag_pattern": r"<p=(?P<key>[^>\n]+)>\s*(?P<value>.*?)\s*</p>"},
                                "transform": NAMED}
        pieces += ["<fn=f>", "<fn=g>\n", "<p=a>", "<p=b>\n", "\n</p>", "</p>", "</fn>", "</fn", "2", "x y"]
    elif shape == "literal":
        fields["tool_calls"] = {"open_pattern": _escape(open_) + r"call:(?P<name>\w+)", "close": close,
                                "content": "json", "transform": NAMED,
                                "content_args": {"unquoted_keys": True, "string_delims": [[delim, delim]]}}
        pieces += ["call:f{", "call:g", "a:", "b:1", delim, "}", "{", "[", "]", ",", "tr", "null"]
    elif shape == "named-json":
        fields["tool_calls"] = {"open_pattern": _escape(open_) + r"(?P<name>\w+)", "close": close, "content": "json",
                                "transform": NAMED}
        pieces += ["f{", "g", '{"a": "x"}', '"b": 2', "}", "{", "[", "]", ",", "tr", '"', "\\"]
    else:
        fields["tool_calls"] = {"open": open_, "close": close, "content": "python-call-list"}
        pieces += ["[f(a=1)", "g()", "]", ")", "(", "'x'", ", "]
    return {"start_anchor": "<|start|>", "fields": fields}, pieces


names = st.text(alphabet="abcxyz_|", min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(SHAPES), tag=names, think=names, delim=st.sampled_from(['<|"|>', "'", "@@"]),
       seed=st.integers(0, 10**6), with_tools=st.booleans(), prompt=st.sampled_from([None, "", "open", "closed"]))
def test_random_templates_and_replies(shape, tag, think, delim, seed, with_tools, prompt):
    if tag == think:
        think += "t"
    template, pieces = template_for(shape, tag, think, delim)
    compiled = ResponseTemplate(template)
    rng = random.Random(seed)
    text = "".join(rng.choice(pieces + ["x", " ", "\n", "é", '"', "\\", "<", ">"]) for _ in range(rng.randint(0, 40)))
    tail = {"open": f"<|start|><{think}>\n", "closed": f"<{think}></{think}>"}.get(prompt or "", prompt)
    request = {"tools": TOOLS} if with_tools else None

    def make() -> Any:
        return create_parser(response_template=compiled, request=request, prompt=tail)

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, (list(text), random_chunks(text, rng, 7)))


FALLBACKS = {"qwen3": QWEN3, "qwen3_5": QWEN3_5, "gemma4": GEMMA4}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(FALLBACKS)), text=st.lists(st.sampled_from(PIECES) | st.text(max_size=3),
                                                              max_size=40).map("".join),
       seed=st.integers(0, 10**6), prompt=st.sampled_from([None, QWEN_THINKING, GEMMA_PROMPT]))
def test_every_dialects_pieces_through_the_fallback_templates(name, text, seed, prompt):
    compiled = ResponseTemplate(FALLBACKS[name])

    def make() -> Any:
        return create_parser(response_template=compiled, request={"tools": TOOLS}, prompt=prompt)

    expected = result_of(make().parse_complete(text))
    check_chunkings(make, text, expected, (list(text), random_chunks(text, random.Random(seed), 7)))
