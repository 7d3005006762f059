"""Reasoning parsers: descriptors of the reasoning tags and the initial mode.

A reasoning "parser" parses nothing: it declares its tags and whether a response
starts inside reasoning.  Buffering, tag recognition and routing belong to the
response parser.

The initial mode comes from the request's thinking switch (``starts_in_reasoning``, each
family's rule) unless the class's ``initial_mode`` is ``"auto"`` and the rendered prompt
was given: then the prompt's tail decides (``prompt_opens_reasoning``), because those
templates settle the mode in the prompt itself (a prefilled opener, a prefilled empty
block, or nothing so that the model decides).
"""

from __future__ import annotations

from typing import Any

from ..registry import ReasoningParserManager
from ..request import ParserRequest
from ..tools.dialects.hunyuan import tokenizer_vocab
from ..tools.dialects.kimi_k3 import FRAMING as KIMI_K3_FRAMING, spaced_variants

__all__ = ["ReasoningParser", "DefaultReasoningParser", "ReasoningParserManager", "prompt_opens_reasoning"]


def prompt_opens_reasoning(prompt: str, start_tag: str, label: str = "") -> bool:
    """True when the prompt ends with an unclosed ``start_tag``, optionally followed by the
    tag's ``label`` (Gemma 4's ``<|channel>thought\n``), trailing whitespace aside: the reply
    starts inside reasoning.  A closed block or no opener means content, until the model
    writes the opener itself."""
    tail = prompt.rstrip()
    at = tail.rfind(start_tag)
    if at < 0:
        return False
    rest = tail[at + len(start_tag):]
    return rest == "" or (bool(label) and rest == label.rstrip())


class ReasoningParser:
    """``<think>`` ... ``</think>``; starts in reasoning unless the request turns thinking off."""

    start_tag: str | None = "<think>"
    end_tag: str = "</think>"
    # Proper prefixes of the tags that end a decoded chunk at a real token boundary,
    # longest first (see tests/test_token_prefixes.py for the tokenizers checked).
    start_tag_prefixes: tuple[str, ...] = ()
    end_tag_prefixes: tuple[str, ...] = ()
    # A tool call opened while reasoning ends the reasoning; a close tag the model still
    # writes after it is a stray tag, dropped from the content.
    tool_call_ends_reasoning: bool = False
    # A close tag met outside reasoning is dropped (MiniMax-M3's adaptive mode writes a bare
    # ``</mm:think>`` before an answer it did not think about).
    bare_end_tag_dropped: bool = False
    # A label the open tag may carry, dropped (Gemma 4's channel name ``thought\n``).
    start_label: str = ""
    # "request": the thinking switch decides (``starts_in_reasoning``); "auto": the rendered
    # prompt's tail decides when it is given (see the module docstring).
    initial_mode: str = "request"
    # The family's message framing (see ``ToolParser.framing_markers``): dropped from the
    # content; while reasoning, one ends the reasoning (a skipped close tag).
    framing_markers: tuple[str, ...] = ()

    def __init__(self, request: ParserRequest, prompt: str | None = None) -> None:
        self.request = request
        self.prompt = prompt  # the rendered prompt (its tail is enough), when the caller has it

    def starts_in_reasoning(self) -> bool:
        """The family's rule from the request alone."""
        return self.request.thinking is not False

    def initial_reasoning(self) -> bool:
        """Whether the reply starts inside reasoning: the prompt's tail in ``auto`` mode, else the request."""
        if self.initial_mode == "auto" and self.prompt is not None and self.start_tag:
            return prompt_opens_reasoning(self.prompt, self.start_tag, self.start_label)
        return self.starts_in_reasoning()

    @classmethod
    def render(cls, reasoning: str) -> str:
        """Wire text of a reasoning segment, as the model writes it."""
        return f"{cls.start_tag or ''}{cls.start_label}{reasoning}{cls.end_tag}"


@ReasoningParserManager.register_module(
    ["default", "qwen-qwq", "qwen3", "deepseek-r1", "intern-s1", "glm45", "kimi-k2"]
)
class DefaultReasoningParser(ReasoningParser):
    pass


class _OptInThinking(ReasoningParser):
    """Families whose templates think only when the request asks for it."""

    def starts_in_reasoning(self) -> bool:
        return self.request.thinking is True


@ReasoningParserManager.register_module("deepseek-v3")
class DeepSeekV3ReasoningParser(_OptInThinking):
    pass


@ReasoningParserManager.register_module(["deepseek-v32", "deepseek-v3.2"])
class DeepSeekV32ReasoningParser(_OptInThinking):
    pass


@ReasoningParserManager.register_module(["deepseek-v4", "deepseek-v41"])
class DeepSeekV4ReasoningParser(_OptInThinking):
    """The V4 templates prefill ``<think>`` (thinking) or ``</think>`` (chat) and default to
    chat, where vLLM assumes thinking: given the prompt, its tail settles it."""

    initial_mode = "auto"


@ReasoningParserManager.register_module(["qwen3.5", "nemotron3", "ling3", "glm5"])
class PromptDecidesReasoningParser(DefaultReasoningParser):
    """``<think>`` families whose templates prefill the opener (thinking), an empty block
    (``<think>\\n\\n</think>\\n\\n`` Qwen3.5, ``<think></think>`` Nemotron 3 and Ling 3) or,
    for GLM-5.3, always the opener.  Without the prompt: the default rule."""

    initial_mode = "auto"


@ReasoningParserManager.register_module("step3p5")
class Step3p5ReasoningParser(ReasoningParser):
    """Step-3.5's template always prefills ``<think>\\n`` and has no switch: the reply starts
    in reasoning whatever ``enable_thinking`` says (as vLLM's ``step3p5`` parser)."""

    def starts_in_reasoning(self) -> bool:
        return True


@ReasoningParserManager.register_module("mistral")
class MistralReasoningParser(ReasoningParser):
    """``[THINK]`` ... ``[/THINK]`` (Magistral, Ministral 3 reasoning): the model opens
    reasoning itself, so a reply starts plain.  Both tags are control tokens of the v13+
    tekken vocabularies; our SentencePiece v3/v7 and tekken 240911 files lack them."""

    start_tag = "[THINK]"
    end_tag = "[/THINK]"

    def starts_in_reasoning(self) -> bool:
        return False


class _ModelOpens(ReasoningParser):
    """Families whose templates prefill nothing: the model opens reasoning itself, so a
    reply starts plain whatever the thinking switch says."""

    def starts_in_reasoning(self) -> bool:
        return False


@ReasoningParserManager.register_module("seed-oss")
class SeedOssReasoningParser(_ModelOpens):
    """``<seed:think>`` ... ``</seed:think>``: the model opens reasoning itself (the
    template's generation prompt does not), so a reply starts plain."""

    start_tag = "<seed:think>"
    end_tag = "</seed:think>"


@ReasoningParserManager.register_module("minimax-m2")
class MiniMaxM2ReasoningParser(ReasoningParser):
    """The generation prompt ends in ``<think>\\n``, so the model writes only ``</think>``
    (a single token in the MiniMax-M2 vocabulary); there is no thinking switch."""

    start_tag = None

    def starts_in_reasoning(self) -> bool:
        return True


@ReasoningParserManager.register_module("gemma4")
class Gemma4ReasoningParser(ReasoningParser):
    """``<|channel>thought\n`` ... ``<channel|>``: ``thought`` + newline is the channel's label,
    not reasoning (dropped; a doubled ``<|channel>`` too).  Replies start plain (the templates
    prefill nothing, or an empty closed channel when thinking is off) and the model opens the
    channel itself; a ``<|tool_call>`` while reasoning ends it (vLLM's REASONING + TOOL_START).
    ``<|channel>`` 100 and ``<channel|>`` 101 are single special tokens in ``gemma-4/``."""

    start_tag = "<|channel>"
    start_label = "thought\n"
    end_tag = "<channel|>"
    tool_call_ends_reasoning = True
    initial_mode = "auto"  # a prompt ending inside an open channel starts in reasoning

    def starts_in_reasoning(self) -> bool:
        return False


@ReasoningParserManager.register_module("kimi-k3")
class KimiK3ReasoningParser(ReasoningParser):
    """``<|open|>think<|sep|>`` ... ``<|close|>think<|sep|>``, then the content inside
    ``<|open|>response<|sep|>`` ... ``<|close|>response<|sep|>`` (unwrapped: the framing is
    dropped, and the response opener ends reasoning whose closer was skipped).  The template
    thinks unless ``thinking`` is false; its generation prompt ends in the think opener or the
    response opener, so the prompt's tail settles it when given."""

    start_tag = "<|open|>think<|sep|>"
    end_tag = "<|close|>think<|sep|>"
    # The framing, and the think closer as a detokenizer with spaces_between_special_tokens
    # writes it (``<|close|> think <|sep|>``): a framing marker ends reasoning too.
    framing_markers = (*KIMI_K3_FRAMING, *spaced_variants(end_tag))
    initial_mode = "auto"


@ReasoningParserManager.register_module("minicpm5")
class MiniCPM5ReasoningParser(_OptInThinking):
    """``<think>`` ... ``</think>``.  The template prefills ``<think>\\n`` when ``enable_thinking``
    is true, ``<think>\\n\\n</think>\\n\\n`` when it is false, and nothing when it is not set
    (the model decides: plain until ``<think>``).  Given the prompt, its tail settles it."""

    initial_mode = "auto"
@ReasoningParserManager.register_module("minimax-m3")
class MiniMaxM3ReasoningParser(ReasoningParser):
    """``<mm:think>`` ... ``</mm:think>``.  The template's ``thinking_mode`` (enabled, disabled,
    adaptive; undefined = adaptive) prefills ``<mm:think>``, ``</mm:think>`` or nothing: the
    reply starts in reasoning only for ``enabled`` (or ``enable_thinking`` true), and the
    prompt's tail settles it when given.  In adaptive mode the model may answer after a bare
    ``</mm:think>``: dropped.  Both tags are single non-special tokens per vLLM (unverified)."""

    start_tag = "<mm:think>"
    end_tag = "</mm:think>"
    bare_end_tag_dropped = True
    initial_mode = "auto"

    def starts_in_reasoning(self) -> bool:
        mode = self.request.template_kwargs.get("thinking_mode")
        return mode == "enabled" if mode is not None else self.request.thinking is True


# Hunyuan's ``reasoning_effort`` values (SGLang's mapping of the OpenAI levels onto the template's).
_HUNYUAN_EFFORT = {"none": False, "no_think": False, "minimal": True, "low": True, "medium": True, "high": True,
                   "xhigh": True, "max": True}


@ReasoningParserManager.register_module(["hunyuan", "hy-v3"])
class HunyuanReasoningParser(ReasoningParser):
    """``<think:opensource>`` ... ``</think:opensource>`` (Hy3).  The template's
    ``reasoning_effort`` (``high``, ``low``, ``no_think``; default ``no_think``) prefills the
    opener (low / high) or an empty block: the reply starts in reasoning iff the effort is
    low or high (or ``enable_thinking`` is true); the prompt's tail settles it when given.
    Tags unverified (no Hunyuan tokenizer here)."""

    start_tag = "<think:opensource>"
    end_tag = "</think:opensource>"
    initial_mode = "auto"
    default_effort = "no_think"  # the Hy3 template's (and vLLM hy_v3's) default

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> type[ReasoningParser]:
        """The tags with the suffix the tokenizer's vocabulary has, and HY-V4's default effort
        when it has no ``<tool_sep…>`` (``lmparse.tools.dialects.hunyuan``); unchanged without
        Hunyuan tags."""
        found = tokenizer_vocab(tokenizer)
        if found is None:
            return cls
        return _hunyuan_reasoning(cls, found.suffix, "high" if found.v4 else cls.default_effort)

    def starts_in_reasoning(self) -> bool:
        effort = self.request.template_kwargs.get("reasoning_effort")
        if effort is None and self.request.thinking is not None:
            return self.request.thinking
        return _HUNYUAN_EFFORT.get(str(effort or self.default_effort), False)


_HUNYUAN_CLASSES: dict[tuple[type, str, str], type[ReasoningParser]] = {}


def _hunyuan_reasoning(base: type[HunyuanReasoningParser], suffix: str, effort: str) -> type[ReasoningParser]:
    """One class per (parser, suffix, default effort)."""
    if f"<think{suffix}>" == base.start_tag and effort == base.default_effort:
        return base
    key = (base, suffix, effort)
    if key not in _HUNYUAN_CLASSES:
        _HUNYUAN_CLASSES[key] = type(base.__name__, (base,), {
            "start_tag": f"<think{suffix}>", "end_tag": f"</think{suffix}>", "default_effort": effort})
    return _HUNYUAN_CLASSES[key]


@ReasoningParserManager.register_module("hy-v4")
class HyV4ReasoningParser(HunyuanReasoningParser):
    """HY-V4: as Hy3, but vLLM's ``hy_v4`` (and SGLang) assume ``high`` when no effort is given."""

    default_effort = "high"
@ReasoningParserManager.register_module(["cohere-command", "command-a"])
class CohereCommandReasoningParser(ReasoningParser):
    """``<|START_THINKING|>`` ... ``<|END_THINKING|>``.  Cohere2MoE prefills the opener
    (reasoning on, its default) or an empty block; R7B prefills an empty block when
    ``enable_thinking`` is off and nothing when on (the model opens): the prompt's tail
    decides, else the default rule.  Both markers one special token each (unverified)."""

    start_tag = "<|START_THINKING|>"
    end_tag = "<|END_THINKING|>"
    # cmd3's and cmd4's content wrappers, dropped from the content with or without tools.
    framing_markers = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")
    initial_mode = "auto"


@ReasoningParserManager.register_module("apertus")
class ApertusReasoningParser(_ModelOpens):
    """``<|inner_prefix|>`` ... ``<|inner_suffix|>``: the generation prompt is only
    ``<|assistant_start|>`` whatever ``enable_thinking`` says (the switch only writes
    ``Deliberation: enabled`` into the developer turn), so a reply starts plain and the
    model opens reasoning itself.  Calls inside it are calls (the router looks there too)."""

    start_tag = "<|inner_prefix|>"
    end_tag = "<|inner_suffix|>"


@ReasoningParserManager.register_module("lfm2")
class Lfm2ReasoningParser(_ModelOpens):
    """``<think>`` ... ``</think>`` (LFM2.5-8B-A1B): no LFM2 template prefills anything,
    whatever ``enable_thinking`` says, so a reply starts plain and the model opens it."""
