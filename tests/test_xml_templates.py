"""Round trips through the official chat templates of the XML-like families.

An assistant message with tool calls (arguments as dicts, values of every JSON type)
is rendered by the family's real template; the reply is the text after the rendered
generation prompt, up to the end-of-turn marker, i.e. exactly what the model would
have written.  Parsed back with the family's dialect (streamed at the real token
boundaries too), it must give the same calls, content and reasoning; and the
dialect's ``render()`` must write the calls exactly as the template does.  Granite 4's
JSON envelopes ride along: they are the rows of the ``granite4`` alias.

Templates are rendered the way Hugging Face ``transformers`` does (``trim_blocks``,
``lstrip_blocks``, a ``tojson`` that is ``json.dumps`` without key sorting or HTML
escaping, ``raise_exception``).  Seed-OSS has no template in the test data: its layout
is covered by tests/test_xml_dialects.py only.
"""

from __future__ import annotations

import json

import pytest

from lmparse import ToolParserManager, create_parser

from .support.stream import check_parse
from .support.typed_tools import TOOLS, TYPED_ARGUMENTS
from .support import tokenizers

jinja2 = pytest.importorskip("jinja2")
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise(message):
    raise jinja2.TemplateError(message)


def load_template(relative: str):
    root = tokenizers.testdata_dir()
    path = root / relative if root is not None else None
    if path is None or not path.is_file():
        pytest.skip(f"chat template {relative} is missing")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string(path.read_text())


# (id, template, tool parser, reasoning parser, end-of-turn marker, tokenizers)
FAMILIES = [
    ("qwen3-coder", "templates/Qwen3-Coder.jinja", "qwen3coder", None, "<|im_end|>", ("qwen3", "qwen2.5")),
    ("glm-4.5", "glm-4.5/chat_template.jinja", "glm45", "glm45", None, ("glm-4.5",)),
    ("glm-4.6", "templates/GLM-4.6.jinja", "glm45", "glm45", None, ("glm-4.5",)),
    ("glm-4.7-flash", "templates/GLM-4.7-Flash.jinja", "glm47", "glm45", None, ("glm-4.7-flash",)),
    ("minimax-m2", "templates/MiniMax-M2.jinja", "minimax-m2", "minimax-m2", "[e~[", ("minimax-m2",)),
    ("minimax-m2.7", "minimax-m2/chat_template.jinja", "minimax-m2", "minimax-m2", "[e~[", ("minimax-m2",)),
    # The 2026 aliases (tests/test_family_aliases.py): Qwen3's vocabulary stands in for Qwen3.5's,
    # which is not in the test data; there is no Ling or Granite tokenizer.
    ("qwen3.5", "templates/Qwen3.5-4B.jinja", "qwen3.5", "qwen3.5", "<|im_end|>", ("qwen3",)),
    ("nemotron3", "templates/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "nemotron3", "nemotron3", "<|im_end|>",
     ("qwen3",)),
    ("step3p5", "templates/StepFun3.5-Flash.jinja", "step3p5", "step3p5", "<|im_end|>", ("qwen3",)),
    ("ling3", "templates/inclusionai-ling-3.0-flash.jinja", "ling3", "ling3", "<|role_end|>", ()),
    ("granite-4.0", "templates/ibm-granite-granite-4.0.jinja", "granite4", None, "<|end_of_text|>", ()),
    ("granite-4.1", "templates/ibm-granite-granite-4.1.jinja", "granite4", None, "<|end_of_text|>", ()),
]

TYPED = TYPED_ARGUMENTS
SCENARIOS = {
    "typed_values": [("get_weather", TYPED)],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("now", {}), ("now", {})],
    "close_tags_inside_a_string": [
        ("get_weather", {"note": "if a < b:\n    print('</tool_call> </minimax:tool_call> </function>')"}),
    ],
}
CASES = [(f, s) for f in FAMILIES for s in SCENARIOS]


def reply_of(template, messages, end_marker):
    """The assistant's own text: the full conversation after its generation prompt."""
    prompt = template.render(messages=messages[:-1], tools=TOOLS, add_generation_prompt=True)
    full = template.render(messages=messages, tools=TOOLS, add_generation_prompt=False)
    assert full.startswith(prompt), "the rendered turn does not extend the generation prompt"
    reply = full[len(prompt):]
    return reply[: reply.index(end_marker)] if end_marker else reply


@pytest.mark.parametrize("family,scenario", CASES, ids=[f"{f[0]}-{s}" for f, s in CASES])
def test_template_round_trip(family, scenario):
    _, path, tool_parser, reasoning_parser, end_marker, tokenizer_names = family
    calls = SCENARIOS[scenario]
    assistant = {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    if reasoning_parser is not None:
        assistant["reasoning_content"] = "The user wants weather."
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}, assistant]
    reply = reply_of(load_template(path), messages, end_marker)

    def make():
        return create_parser(tool_parser=tool_parser, reasoning_parser=reasoning_parser, request={"tools": TOOLS})

    content, reasoning, got = check_parse(make, reply, None, tokenizers.real_token_chunkings(reply, tokenizer_names))
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert (content or "").strip() == "Let me check."
    if reasoning_parser is not None:
        assert (reasoning or "").strip() == "The user wants weather."

    # render() writes the calls exactly as the template does.
    wire = ToolParserManager.get(tool_parser).render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert wire in reply
