"""Initial reasoning mode ``auto``: the rendered prompt's tail decides where a reply starts.

Rendered with the families' real templates, thinking on and off: an opener left unclosed
at the end of the prompt means the reply starts in reasoning; a prefilled empty block (or no
opener) means content, until the model writes the opener.  The request carries no thinking
switch in these tests, so only the prompt can decide.
"""

from __future__ import annotations

import pytest

from lmparse import ReasoningParserManager, create_parser
from lmparse.reasoning import prompt_opens_reasoning

from .support.typed_tools import TOOLS
from .test_xml_templates import load_template

REPLY_THINKING = "The user wants weather.\n</think>\n\nIt is sunny."
REPLY_PLAIN = "It is sunny."

# (id, template, reasoning parser, template switch name)
FAMILIES = [
    ("qwen3.5", "Qwen3.5-4B.jinja", "qwen3.5", "enable_thinking"),
    ("nemotron3", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "nemotron3", "enable_thinking"),
    ("ling3", "inclusionai-ling-3.0-flash.jinja", "ling3", "enable_thinking"),
    ("deepseek-v4", "deepseek-ai-DeepSeek-V4.jinja", "deepseek-v4", "thinking"),
]
CASES = [(f, on) for f in FAMILIES for on in (True, False)]


def _prompt(name: str, switch: str, on: bool) -> str:
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    return load_template(f"templates/{name}").render(messages=messages, tools=TOOLS, add_generation_prompt=True,
                                                     **{switch: on})


@pytest.mark.parametrize("family,on", CASES, ids=[f"{f[0]}-{'on' if on else 'off'}" for f, on in CASES])
def test_prompt_tail_decides_the_initial_mode(family, on):
    _, name, reasoning_parser, switch = family
    prompt = _prompt(name, switch, on)
    parser = create_parser(reasoning_parser=reasoning_parser, request={"messages": []}, prompt=prompt)
    message = parser.parse_complete(REPLY_THINKING if on else REPLY_PLAIN)
    if on:
        assert (message.reasoning_content or "").strip() == "The user wants weather."
        assert (message.content or "").strip() == "It is sunny."
    else:
        assert message.reasoning_content is None
        assert message.content == "It is sunny."


def test_prompt_ids_decide_through_the_tokenizer():
    """``prompt_token_ids`` with a tokenizer: the last ids decoded, special tokens kept."""

    class Decoder:
        def decode(self, ids, skip_special_tokens=True):
            return "" if skip_special_tokens else "<|im_start|>assistant\n<think>\n"

    parser = create_parser(reasoning_parser="qwen3.5", prompt_token_ids=[1, 2, 3], tokenizer=Decoder(),
                           request={"messages": [], "chat_template_kwargs": {"enable_thinking": False}})
    assert parser.parse_complete("Hmm.</think>Hi").reasoning_content == "Hmm."


def test_a_plain_start_still_switches_on_the_opener():
    parser = create_parser(reasoning_parser="qwen3.5", prompt="<|im_start|>assistant\n<think>\n\n</think>\n\n")
    message = parser.parse_complete("Hi <think>x</think>there")
    assert (message.content, message.reasoning_content) == ("Hi there", "x")


def test_without_a_prompt_the_request_rule_holds():
    off = {"messages": [], "chat_template_kwargs": {"enable_thinking": False}}
    assert create_parser(reasoning_parser="qwen3.5", request=off).parse_complete("Hi").content == "Hi"
    assert create_parser(reasoning_parser="qwen3.5").parse_complete("Hmm</think>Hi").reasoning_content == "Hmm"


def test_step3p5_always_starts_in_reasoning():
    """Its template prefills ``<think>\\n`` whatever the switch says."""
    prompt = load_template("templates/StepFun3.5-Flash.jinja").render(
        messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True, enable_thinking=False)
    assert prompt_opens_reasoning(prompt, "<think>")
    off = {"messages": [], "chat_template_kwargs": {"enable_thinking": False}}
    message = create_parser(reasoning_parser="step3p5", request=off).parse_complete("Hmm.\n</think>\nHi")
    assert (message.reasoning_content, message.content) == ("Hmm.\n", "\nHi")


def test_families_whose_prompt_does_not_decide_keep_the_request_rule():
    """``default`` (Qwen3: the model writes ``<think>`` itself) ignores a prompt."""
    assert ReasoningParserManager.get("default").initial_mode == "request"
    parser = create_parser(reasoning_parser="default", prompt="<|im_start|>assistant\n")
    assert parser.parse_complete("Hmm</think>Hi").reasoning_content == "Hmm"
