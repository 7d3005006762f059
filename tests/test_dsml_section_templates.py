"""Round trips through the official chat templates of the DSML and section/call families.

An assistant message with tool calls (arguments as dicts, values of every JSON type) is
rendered by the family's real template; the reply is the text after the assistant
header (and the thinking prefix the generation prompt writes) up to the end-of-turn
marker, i.e. what the model would have written.  Parsed back with the family's dialect
(streamed at the real token boundaries too), it must give the same calls, content and
reasoning; and the dialect's ``render()`` must write the calls exactly as the template.

Templates are rendered as Hugging Face ``transformers`` does (``trim_blocks``,
``lstrip_blocks``, ``tojson`` = ``json.dumps`` keeping non-ASCII, no key sorting).
Template facts this relies on:

- Kimi-K2-Instruct and Kimi-K2-Thinking call ``list.append``, which jinja2's immutable
  sandbox refuses: they run in the ordinary sandbox here.
- DeepSeek-R1-Distill-Llama-8B concatenates ``arguments`` as a string (a dict raises), and
  writes ``<｜tool▁calls▁end｜>`` only after the second and later calls: one call has no
  section end, three calls come out broken.  It is tested with one and two calls.
- DeepSeek-R1-Distill-Qwen-32B renders a message's content as a separate assistant turn
  after the calls, so the tool-call message carries no content.
"""

from __future__ import annotations

import json

import pytest

from lmparse import ToolParserManager, create_parser

from .support import tokenizers
from .support.stream import check_parse
from .support.typed_tools import TOOLS, TYPED_ARGUMENTS

jinja2 = pytest.importorskip("jinja2")
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment  # noqa: E402


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise(message):
    raise jinja2.TemplateError(message)


def load_template(name: str, mutable: bool = False):
    root = tokenizers.testdata_dir()
    path = root / "templates" / name if root is not None else None
    if path is None or not path.is_file():
        pytest.skip(f"chat template {name} is missing")
    sandbox = SandboxedEnvironment if mutable else ImmutableSandboxedEnvironment
    env = sandbox(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string(path.read_text(encoding="utf-8"))


class Family:
    def __init__(self, id, template, tool_parser, reasoning_parser, thinking, header, end, tokenizer_names,
                 content="Let me check.", mutable=False, string_arguments=False, max_calls=None, renders_section=True):
        self.id, self.template, self.tool_parser, self.reasoning_parser = id, template, tool_parser, reasoning_parser
        self.thinking, self.header, self.end, self.tokenizer_names = thinking, header, end, tokenizer_names
        self.content, self.mutable, self.string_arguments = content, mutable, string_arguments
        self.max_calls, self.renders_section = max_calls, renders_section


EOS = "<｜end▁of▁sentence｜>"
KIMI_HEADER = "<|im_assistant|>assistant<|im_middle|>"
FAMILIES = [
    Family("v3.2-thinking", "deepseek-ai-DeepSeek-V3.2.jinja", "deepseek-v32", "deepseek-v32", True,
           "<｜Assistant｜><think>", EOS, ("deepseek-v3.2",)),
    Family("v3.2", "deepseek-ai-DeepSeek-V3.2.jinja", "deepseek-v32", "deepseek-v32", False,
           "<｜Assistant｜></think>", EOS, ("deepseek-v3.2",)),
    Family("v4-thinking", "deepseek-ai-DeepSeek-V4.jinja", "deepseek-v4", "deepseek-v4", True,
           "<｜Assistant｜><think>", EOS, ("deepseek-v4",)),
    Family("v4", "deepseek-ai-DeepSeek-V4.jinja", "deepseek-v4", "deepseek-v4", False,
           "<｜Assistant｜></think>", EOS, ("deepseek-v4",)),
    Family("kimi-k2-instruct", "Kimi-K2-Instruct.jinja", "kimi-k2", None, None, KIMI_HEADER, "<|im_end|>", (),
           mutable=True),
    Family("kimi-k2-thinking", "Kimi-K2-Thinking.jinja", "kimi-k2", "kimi-k2", True, KIMI_HEADER, "<|im_end|>", (),
           mutable=True),
    Family("moonshotai-kimi-k2", "moonshotai-Kimi-K2.jinja", "kimi-k2", None, None, KIMI_HEADER, "<|im_end|>", ()),
    Family("v3.1", "deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v31", "deepseek-v3", False,
           "<｜Assistant｜><think></think>", EOS, ("deepseek-v3.1",)),
    Family("r1-distill-qwen", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-r1", None, None,
           "<｜Assistant｜>", EOS, ("deepseek-r1",), content=None),
    Family("r1-distill-llama", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "deepseek-r1", None, None,
           "<｜Assistant｜>", EOS, ("deepseek-r1",), content=None, string_arguments=True, max_calls=2,
           renders_section=False),
]

TYPED = {**TYPED_ARGUMENTS, "tags": ["a<b", "é", '"q"'], "note": '"quoted" and \\ back'}  # JSON strings stay quoted here
MARKERS_IN_STRINGS = (
    "a </｜DSML｜function_calls> </｜DSML｜tool_calls> <|tool_call_end|> <|tool_calls_section_end|> "
    "<｜tool▁call▁end｜> <｜tool▁calls▁end｜> ``` b"
)
SCENARIOS = {
    "typed_values": [("get_weather", TYPED)],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("now", {}), ("now", {})],
    "two_calls": [("now", {}), ("get_weather", {"city": "Rome"})],
    "markers_inside_strings": [("get_weather", {"note": MARKERS_IN_STRINGS, "options": {"x": "</｜DSML｜parameter>"}})],
}
CASES = [
    (f, s) for f in FAMILIES for s in SCENARIOS if f.max_calls is None or len(SCENARIOS[s]) <= f.max_calls
]


def render_reply(family: Family, calls) -> str:
    assistant = {
        "role": "assistant",
        "content": family.content,
        "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False) if family.string_arguments else a}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    if family.thinking:
        assistant["reasoning_content"] = "The user wants weather."
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}, assistant]
    kwargs = {} if family.thinking is None else {"thinking": family.thinking, "enable_thinking": family.thinking}
    full = load_template(family.template, family.mutable).render(
        messages=messages, tools=TOOLS, add_generation_prompt=False, bos_token="<BOS>", eos_token=EOS, **kwargs
    )
    reply = full[full.rindex(family.header) + len(family.header):]
    return reply[: reply.index(family.end)] if family.end in reply else reply


@pytest.mark.parametrize("family,scenario", CASES, ids=[f"{f.id}-{s}" for f, s in CASES])
def test_template_round_trip(family, scenario):
    calls = SCENARIOS[scenario]
    reply = render_reply(family, calls)
    request = {"tools": TOOLS}
    if family.thinking is not None:
        request["chat_template_kwargs"] = {"thinking": family.thinking}

    def make():
        return create_parser(tool_parser=family.tool_parser, reasoning_parser=family.reasoning_parser, request=request)

    content, reasoning, got = check_parse(make, reply, None, tokenizers.real_token_chunkings(reply, family.tokenizer_names))
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert content == family.content  # issue 13 item 5: the layout the template writes around the calls is syntax
    assert (reasoning or "").strip() == ("The user wants weather." if family.thinking else "")

    if family.renders_section:
        wire = ToolParserManager.get(family.tool_parser).render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
        assert wire in reply


def test_kimi_template_ids_come_back_as_call_ids():
    family = next(f for f in FAMILIES if f.id == "kimi-k2-instruct")
    reply = render_reply(family, SCENARIOS["two_calls"])
    m = create_parser(tool_parser="kimi-k2", request={"tools": TOOLS}).parse_complete(reply)
    assert [tc.id for tc in m.tool_calls] == ["functions.now:0", "functions.get_weather:1"]
