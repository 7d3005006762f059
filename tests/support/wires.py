"""How every dialect writes calls on the wire: one ``Wire`` interface for building test replies.

Written independently of the renderers in lmparse (which the tests also check), from the
official chat templates' layout.  Every family is a small subclass of ``Wire`` that says how
one call looks between the outer tags (``inner``); the contract matrix (test_contract.py)
drives all of them through the same three methods with the arguments given as JSON object
source text:

- ``call(name, args)``: one outer block holding one call;
- ``block(*calls)``: one outer block holding several calls (where the dialect allows it);
- ``calls(*calls)``: several calls as the template separates them;

and ``arguments(args)`` says what the parser emits for them (verbatim for JSON dialects,
converted by the schema for the XML-like ones).  A family's own syntax (Mistral's call ids,
DSML's ``string=`` attribute, Kimi's indices...) is an extra method on its subclass.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable, Mapping, Sequence

from lmparse import create_parser

from .stream import Expected, Parser, Result, check_parse, random_chunks
from .tokenizers import real_token_chunkings

Params = Sequence[tuple[str, str]]  # (key, value text as written)
Call = tuple[str, str]  # (name, arguments as JSON object source)

# The tools every contract case offers: untyped ``f``/``g``, a typed ``get_weather`` and a
# ``typed`` tool whose schema names every JSON kind (for the XML dialects' conversions).
TOOL_PROPERTIES: dict[str, dict[str, Any]] = {
    "get_weather": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "f": {},  # no declared properties: every XML value is a string
    "g": {},
    "typed": {
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "a": {"type": "array"},
        "o": {"type": "object"},
        "u": {"type": ["integer", "null"]},
        "v": {"anyOf": [{"type": "null"}, {"type": "number"}]},
        "s": {"type": "string"},
    },
}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
    for n, p in TOOL_PROPERTIES.items()
]
THINKING_OFF = {"enable_thinking": False}
DEFAULT: Any = object()  # "the wire's own request"


@dataclass(frozen=True, kw_only=True)
class Wire:
    """One dialect's wire layout plus the parsers and tokenizers it is checked with."""

    id: str  # test id
    tool_parser: str  # tool parser registry name
    reasoning_parser: str | None  # reasoning parser registry name
    open: str
    close: str
    tokenizers: tuple[str, ...]  # real tokenizers whose token boundaries every case is cut at
    block_sep: str = "\n"  # between blocks, as the template writes them
    lead: str = ""  # before a block that follows text, as the template writes it
    template_layout: bool = True  # False: no template to read the layout from (all whitespace between blocks is syntax)
    think_tag: str = "<think>"  # the reasoning open tag as written
    think_open: str = ""  # what a reply writes to enter reasoning ("" if it starts there)
    think_close: str = "</think>"
    to_plain: str | None = None  # what a reply writes to reach plain text (default think_open + think_close)
    request_extra: Mapping[str, Any] = field(default_factory=dict)  # fields every request carries
    thinking_off: Mapping[str, Any] | None = field(default_factory=lambda: THINKING_OFF)  # chat_template_kwargs that start a reply plain
    honours_thinking_off: bool = True  # False: the reasoning parser starts in reasoning regardless
    verbatim: bool = True  # arguments are forwarded as written (else converted by the schema)
    call_ends_reasoning: bool = False  # a call opened while reasoning ends it (Gemma 4)
    head: str = ""  # with no open tag: the markup from which a cut-off block is a call (MiniCPM5)
    pseudo_token_markers: str = ""  # a regex: markers that are single tokens of a vocabulary we lack
    tokenizer: Any = None  # handed to ``create_parser`` (a parser may read its tags off the vocabulary)

    # ---- writing ----------------------------------------------------------------------------

    def inner(self, name: str, args: str) -> str:
        """One call as written between the outer tags."""
        raise NotImplementedError

    def block(self, *calls: Call) -> str:
        return self.open + "".join(self.inner(n, a) for n, a in calls) + self.close

    def call(self, name: str, args: str = "{}") -> str:
        return self.block((name, args))

    def calls(self, *calls: Call) -> str:
        return self.block_sep.join(self.call(n, a) for n, a in calls)

    def before_block(self, text: str) -> str:
        """What stays text of ``text`` written right before a block: all but the end of the template's lead."""
        return text[: len(text) - _layout_end(text, self.lead)]

    def between_blocks(self, whitespace: str) -> str | None:
        """What stays text of ``whitespace`` written between two blocks (None: nothing)."""
        if not self.template_layout:
            return None
        return whitespace[: len(whitespace) - _layout_end(whitespace, self.block_sep)] or None

    @property
    def plain(self) -> str:
        """The start of a reply that leaves reasoning at once."""
        return self.think_open + self.think_close if self.to_plain is None else self.to_plain

    @property
    def starts_in_reasoning(self) -> bool:
        return self.reasoning_parser is not None and not self.think_open

    def arguments(self, args: str) -> str:
        """The arguments the parser emits for a call written with ``args``."""
        return args if self.verbatim else json.dumps(json.loads(args), ensure_ascii=False)

    # ---- checking ---------------------------------------------------------------------------

    def request(self, tools: list[dict[str, Any]] | None = TOOLS, **fields: Any) -> dict[str, Any]:
        """The request every case sends, with ``fields`` replacing or adding entries."""
        request: dict[str, Any] = {"tools": tools} if tools is not None else {}
        return {**request, **self.request_extra, **fields}

    def parser(self, request: Mapping[str, Any] | None) -> Parser:
        return create_parser(tool_parser=self.tool_parser, reasoning_parser=self.reasoning_parser, request=request,
                             tokenizer=self.tokenizer)

    def chunkings(self, text: str) -> dict[str, list[str]]:
        """Chunkings beyond the validator's own: every real token boundary, and the markers
        as pseudo-tokens where the family's vocabulary is missing."""
        found = real_token_chunkings(text, self.tokenizers)
        if self.pseudo_token_markers:
            found["pseudo-tokens"] = pseudo_tokens(text, self.pseudo_token_markers)
        return found

    def check(self, text: str, expected: Expected | None, request: Mapping[str, Any] | None = DEFAULT) -> Result:
        """``text`` through the shared stream validator, under this wire's parsers
        (``request`` defaults to ``self.request()``; ``None`` sends none)."""
        chosen = self.request() if request is DEFAULT else request
        return check_parse(lambda: self.parser(chosen), text, expected, self.chunkings(text))


def _layout_end(text: str, layout: str) -> int:
    """The length of the longest end of ``text`` that ``layout`` ends with too."""
    return max((n for n in range(min(len(text), len(layout)) + 1) if layout.endswith(text[len(text) - n:])), default=0)


def json_params(args: str) -> list[tuple[str, str]]:
    """An arguments object as XML-style parameters: strings raw, other values as JSON."""
    return [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in json.loads(args).items()]


# ---- JSON envelopes: qwen, internlm ------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class JsonWire(Wire):
    field: str  # "arguments" or "parameters"

    def inner(self, name: str, args: str | None = None, args_first: bool = False, extra: str = "") -> str:
        quoted = json.dumps(name, ensure_ascii=False)
        if args is None:
            return f'{{"name": {quoted}{extra}}}'
        if args_first:
            return f'{{"{self.field}": {args}, "name": {quoted}{extra}}}'
        return f'{{"name": {quoted}, "{self.field}": {args}{extra}}}'

    def call(self, name: str, args: str | None = None, args_first: bool = False, extra: str = "") -> str:
        return self.open + self.inner(name, args, args_first, extra) + self.close


QWEN = JsonWire(id="qwen", tool_parser="qwen", reasoning_parser="default", open="<tool_call>\n",
                close="\n</tool_call>", field="arguments", tokenizers=("qwen2.5", "qwen3"), lead="\n")
INTERNLM = JsonWire(id="internlm", tool_parser="internlm", reasoning_parser="default",
                    open="<|action_start|><|plugin|>\n", close="<|action_end|>", field="parameters",
                    tokenizers=("internlm2",), template_layout=False)
# Ricursive Ripple: Qwen's envelopes; the model opens <think> itself (no switch) and a call ends it.
# No Ripple vocabulary: Qwen2.5's stands in.
RIPPLE = JsonWire(id="ripple", tool_parser="ripple", reasoning_parser="ripple", open="<tool_call>\n",
                  close="\n</tool_call>", field="arguments", tokenizers=("qwen2.5",), lead="\n", think_open="<think>",
                  thinking_off=None, call_ends_reasoning=True)
TAGGED = (QWEN, INTERNLM)
# Llama 3.1/3.2 JSON after <|python_tag|> (its bare start is tested in test_json_dialects.py).
# Llama 3 has no reasoning markers: ``lfm2``'s plain-start <think> stands in for the matrix's reasoning cases.
LLAMA3 = JsonWire(id="llama3", tool_parser="llama3", reasoning_parser="lfm2", open="<|python_tag|>", close="",
                  field="parameters", tokenizers=("llama-3.2",), think_open="<think>", to_plain="", thinking_off=None,
                  template_layout=False)


# ---- XML-like: qwen3coder, glm45/glm47, seed-oss, minimax-m2 -----------------------------------

def qwen_call(name: str, params: Params) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"\n<function={name}>\n{body}</function>\n"


def seed_call(name: str, params: Params) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params)
    return f"\n<function={name}>\n{body}</function>\n"


def glm45_call(name: str, params: Params) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in params)
    return f"{name}\n{body}"


def glm47_call(name: str, params: Params) -> str:
    return name + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in params)


def ling3_call(name: str, params: Params) -> str:
    return f"{name}\n" + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>" for k, v in params) + "\n"


def minimax_call(name: str, params: Params) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{body}</invoke>\n'


@dataclass(frozen=True, kw_only=True)
class XmlWire(Wire):
    """Arguments are given as JSON object source (converted to parameters) or as parameters."""

    layout: Callable[[str, Params], str]  # one call, as written between the outer tags
    block_lead: str = ""  # text the block starts with before its first call (MiniMax: "\n")
    think_tag: str = ""  # replies are written without the open tag the template already wrote
    verbatim: bool = False

    def inner(self, name: str, args: str | Params = ()) -> str:
        return self.layout(name, json_params(args) if isinstance(args, str) else args)

    def block(self, *calls: tuple[str, str | Params]) -> str:
        return self.open + self.block_lead + "".join(self.inner(n, p) for n, p in calls) + self.close

    def call(self, name: str, args: str | Params = ()) -> str:
        return self.block((name, args))

    def calls(self, *calls: tuple[str, str | Params]) -> str:
        return self.block_sep.join(self.call(n, p) for n, p in calls)


QWEN3CODER = XmlWire(id="qwen3coder", tool_parser="qwen3coder", reasoning_parser="default", open="<tool_call>",
                     close="</tool_call>", layout=qwen_call, tokenizers=("qwen3", "qwen2.5"), lead="\n\n")
GLM45 = XmlWire(id="glm45", tool_parser="glm45", reasoning_parser="glm45", open="<tool_call>", close="</tool_call>",
                layout=glm45_call, tokenizers=("glm-4.5", "glm-4.7-flash"), lead="\n")
GLM47 = XmlWire(id="glm47", tool_parser="glm47", reasoning_parser="glm45", open="<tool_call>", close="</tool_call>",
                layout=glm47_call, tokenizers=("glm-4.7-flash", "glm-4.5"), block_sep="")
# No public Seed-OSS tokenizer: arbitrary chunkings only.
SEED_OSS = XmlWire(id="seed-oss", tool_parser="seed-oss", reasoning_parser="seed-oss", open="<seed:tool_call>",
                   close="</seed:tool_call>", layout=seed_call, tokenizers=(), think_tag="<seed:think>",
                   think_open="<seed:think>", think_close="</seed:think>", template_layout=False)
MINIMAX_M2 = XmlWire(id="minimax-m2", tool_parser="minimax-m2", reasoning_parser="minimax-m2",
                     open="<minimax:tool_call>", close="</minimax:tool_call>", layout=minimax_call,
                     tokenizers=("minimax-m2",), block_lead="\n", honours_thinking_off=False, lead="\n")
# Ling 3.0's layout (its template, rendered); no public Ling tokenizer: GLM's stand in for chunkings.
LING3 = XmlWire(id="ling3", tool_parser="ling3", reasoning_parser="ling3", open="<tool_call>", close="</tool_call>",
                layout=ling3_call, tokenizers=("glm-4.7-flash",), lead="\n")
# Step-3.5: Qwen3-Coder's layout, blocks back to back; its template always prefills ``<think>\n``
# and has no switch, so its reasoning starts open whatever enable_thinking says.
STEP3P5 = XmlWire(id="step3p5", tool_parser="step3p5", reasoning_parser="step3p5", open="<tool_call>",
                  close="</tool_call>", layout=qwen_call, tokenizers=("qwen3",), block_sep="",
                  honours_thinking_off=False)
# Step-5: Qwen3-Coder's calls; no template, and vLLM keeps all whitespace around calls as content.
# No Step-5 vocabulary: Qwen3's stands in for the chunkings.
STEP5 = XmlWire(id="step5", tool_parser="step5", reasoning_parser="step5", open="<tool_call>", close="</tool_call>",
                layout=qwen_call, tokenizers=("qwen3",), block_sep="")
# ZAYA1: Qwen3-Coder's calls inside Zyphra's wrapper; no template (all whitespace between blocks is
# syntax) and no vocabulary: the wrapper tags are pseudo-tokens (single tokens per third-party notes).
ZAYA = XmlWire(id="zaya", tool_parser="zaya", reasoning_parser="zaya", open="<zyphra_tool_call>",
               close="</zyphra_tool_call>", layout=qwen_call, tokenizers=(), template_layout=False,
               call_ends_reasoning=True, pseudo_token_markers=r"</?zyphra_tool_call>|</?think>")
XML_WIRES = (QWEN3CODER, GLM45, GLM47, SEED_OSS, MINIMAX_M2, LING3, STEP3P5)


# ---- DSML: deepseek-v32, deepseek-v4 ---------------------------------------------------------

DSML = "｜DSML｜"
THINKING = {"chat_template_kwargs": {"thinking": True}}


def dsml_string(key: str, value: str, prefix: str = DSML) -> str:
    """A ``string="true"`` parameter: raw text."""
    return f'<{prefix}parameter name="{key}" string="true">{value}</{prefix}parameter>\n'


def dsml_json(key: str, value: str, prefix: str = DSML) -> str:
    """A ``string="false"`` parameter: JSON."""
    return f'<{prefix}parameter name="{key}" string="false">{value}</{prefix}parameter>\n'


def dsml_untyped(key: str, value: str, prefix: str = DSML) -> str:
    """A parameter without the string attribute: the schema decides."""
    return f'<{prefix}parameter name="{key}">{value}</{prefix}parameter>\n'


@dataclass(frozen=True, kw_only=True)
class DsmlWire(Wire):
    empty_invoke: str = ""  # V4 writes a blank line inside an invoke without parameters
    prefix: str = DSML  # what follows ``<`` / ``</`` in every tag name (V4.1 adds a space)
    request_extra: Mapping[str, Any] = field(default_factory=lambda: THINKING)
    thinking_off: Mapping[str, Any] | None = field(default_factory=lambda: {"thinking": False})
    verbatim: bool = False

    def invoke(self, name: str, *params: str) -> str:
        p = self.prefix
        return f'<{p}invoke name="{name}">\n{"".join(params) or self.empty_invoke}</{p}invoke>\n'

    def inner(self, name: str, args: str) -> str:
        kinds = json.loads(args).items()
        return self.invoke(name, *(dsml_string(k, v, self.prefix) if isinstance(v, str)
                                   else dsml_json(k, json.dumps(v), self.prefix) for k, v in kinds))

    def invokes(self, *invokes: str) -> str:
        """One block around invokes written with ``invoke``."""
        return f"{self.open}\n{''.join(invokes)}{self.close}"

    def block(self, *calls: Call) -> str:
        return self.invokes(*(self.inner(n, a) for n, a in calls))

    def call_with(self, name: str, *params: str) -> str:
        """One block holding one invoke with parameters written by ``dsml_string`` / ``dsml_json``."""
        return self.invokes(self.invoke(name, *params))


DSML_TOKENIZERS = ("deepseek-v3.2", "deepseek-v4")
V32 = DsmlWire(id="deepseek-v32", tool_parser="deepseek-v32", reasoning_parser="deepseek-v32",
               open=f"<{DSML}function_calls>", close=f"</{DSML}function_calls>", tokenizers=DSML_TOKENIZERS,
               lead="\n\n", block_sep="\n\n")
V4 = DsmlWire(id="deepseek-v4", tool_parser="deepseek-v4", reasoning_parser="deepseek-v4",
              open=f"<{DSML}tool_calls>", close=f"</{DSML}tool_calls>", tokenizers=DSML_TOKENIZERS,
              empty_invoke="\n", lead="\n\n", block_sep="\n\n")
# DeepSeek-V4.1: V4's layout with a space after the bar in every tag and a block named ``calls``
# (PROTOCOLS.md; no V4.1 template or tokenizer is published: V4's vocabulary stands in).
V41 = DsmlWire(id="deepseek-v41", tool_parser="deepseek-v41", reasoning_parser="deepseek-v41",
               open=f"<{DSML} calls>", close=f"</{DSML} calls>", tokenizers=("deepseek-v4",),
               empty_invoke="\n", prefix=f"{DSML} ", lead="\n\n", block_sep="\n\n")
DSML_WIRES = (V32, V4, V41)
# GigaChat 3.5: V4's tags under ``｜GCML｜``, thinking behind ``chat_template_kwargs.reasoning``.  Kept
# out of DSML_WIRES: a parameter without ``string`` is raw text here, not typed by the schema.  No
# vocabulary: vLLM's test tokens (tags, and the invoke / parameter openers without ``>``) are pseudo-tokens.
GCML = "｜GCML｜"
GIGACHAT35 = DsmlWire(id="gigachat35", tool_parser="gigachat35", reasoning_parser="gigachat35",
                      open=f"<{GCML}tool_calls>", close=f"</{GCML}tool_calls>", tokenizers=(), prefix=GCML,
                      request_extra={"chat_template_kwargs": {"reasoning": True}}, thinking_off={"reasoning": False},
                      lead="\n\n", block_sep="\n\n",
                      pseudo_token_markers=r"</?｜GCML｜tool_calls>|<｜GCML｜(?:invoke|parameter)|</｜GCML｜(?:invoke|parameter)>|</?think>")


# ---- sections of calls: kimi-k2, deepseek-v3, deepseek-v31 -----------------------------------

@dataclass(frozen=True, kw_only=True)
class SectionWire(Wire):
    call_begin: str
    call_end: str
    layout: str  # one call's text between call_begin and call_end: {name}, {args}, {i}
    call_sep: str = ""
    block_sep: str = ""
    request_extra: Mapping[str, Any] = field(default_factory=lambda: THINKING)
    thinking_off: Mapping[str, Any] | None = field(default_factory=lambda: {"thinking": False})

    def entry(self, name: str, args: str = "{}", i: int = 0) -> str:
        """One call with its begin and end markers; ``i`` is its index in the section."""
        return self.call_begin + self.layout.format(name=name, args=args, i=i) + self.call_end

    def inner(self, name: str, args: str) -> str:
        return self.entry(name, args)

    def block(self, *calls: Call) -> str:
        return self.open + self.call_sep.join(self.entry(n, a, i) for i, (n, a) in enumerate(calls)) + self.close


def pseudo_tokens(text: str, markers: str, seed: int = 0) -> list[str]:
    """Markers as single chunks, the text around them in pieces of 1-4 characters."""
    rng = random.Random(seed)
    chunks: list[str] = []
    for i, part in enumerate(re.split(f"({markers})", text)):
        if i % 2:
            chunks.append(part)
        else:
            chunks.extend(random_chunks(part, rng, 4))
    return chunks


KIMI = SectionWire(
    id="kimi-k2", tool_parser="kimi-k2", reasoning_parser="kimi-k2", open="<|tool_calls_section_begin|>",
    close="<|tool_calls_section_end|>", call_begin="<|tool_call_begin|>", call_end="<|tool_call_end|>",
    layout="functions.{name}:{i}<|tool_call_argument_begin|>{args}", tokenizers=(),
    pseudo_token_markers=r"<\|tool_calls?_(?:section_)?(?:begin|end)\|>|<\|tool_call_argument_begin\|>|</?think>",
)
V3 = SectionWire(
    id="deepseek-v3", tool_parser="deepseek-v3", reasoning_parser="deepseek-r1", open="<｜tool▁calls▁begin｜>",
    close="<｜tool▁calls▁end｜>", call_begin="<｜tool▁call▁begin｜>", call_end="<｜tool▁call▁end｜>",
    layout="function<｜tool▁sep｜>{name}\n```json\n{args}\n```", tokenizers=("deepseek-r1",), call_sep="\n",
)
V31 = SectionWire(
    id="deepseek-v31", tool_parser="deepseek-v31", reasoning_parser="deepseek-v3", open="<｜tool▁calls▁begin｜>",
    close="<｜tool▁calls▁end｜>", call_begin="<｜tool▁call▁begin｜>", call_end="<｜tool▁call▁end｜>",
    layout="{name}<｜tool▁sep｜>{args}", tokenizers=("deepseek-v3.1",),
)
SECTION_WIRES = (KIMI, V3, V31)


# ---- mistral: [TOOL_CALLS]NAME[ARGS]{...} and the older JSON array ------------------------------

@dataclass(frozen=True, kw_only=True)
class MistralWire(Wire):
    def inner(self, name: str, args: str | None = None, call_id: str | None = None) -> str:
        return name + (f"[CALL_ID]{call_id}" if call_id else "") + "[ARGS]" + (args or "")

    def block(self, *calls: Call) -> str:
        return "".join(self.open + self.inner(n, a) for n, a in calls)

    def call(self, name: str, args: str | None = None, call_id: str | None = None) -> str:
        """The v11+ form: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}``."""
        return self.open + self.inner(name, args, call_id)

    def array(self, *calls: Call) -> str:
        """The pre-v11 form: one array of envelopes."""
        return self.open + "[" + ", ".join(f'{{"name": "{n}", "arguments": {a}}}' for n, a in calls) + "]"


MISTRAL = MistralWire(id="mistral", tool_parser="mistral", reasoning_parser="mistral", open="[TOOL_CALLS]", close="",
                      tokenizers=("mistral-v3", "mistral-v7", "mistral-tekken"), block_sep="", think_tag="[THINK]",
                      think_open="[THINK]", think_close="[/THINK]", to_plain="", thinking_off=None)
# Tokenizer v13 (Ministral 3 Reasoning): the same calls without [CALL_ID]; no v13 vocabulary is in
# the test data, so tekken 240911's token boundaries stand in.
MISTRAL_V13 = MistralWire(id="mistral-v13", tool_parser="mistral-v13", reasoning_parser="mistral-v13",
                          open="[TOOL_CALLS]", close="", tokenizers=("mistral-tekken",), block_sep="",
                          think_tag="[THINK]", think_open="[THINK]", think_close="[/THINK]", to_plain="",
                          thinking_off=None)


# ---- pythonic: [f(a=1), g()], Llama 4's <|python_start|> wrapper -------------------------------

def python_literal(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)  # strings, numbers, lists, dicts: JSON is Python here


@dataclass(frozen=True, kw_only=True)
class PythonicWire(Wire):
    verbatim: bool = False

    def inner(self, name: str, args: str) -> str:
        return f"{name}(" + ", ".join(f"{k}={python_literal(v)}" for k, v in json.loads(args).items()) + ")"

    def bare(self, *calls: Call) -> str:
        """The list alone, as a reply that starts with it writes it."""
        return "[" + ", ".join(self.inner(n, a) for n, a in calls) + "]"

    def wrap(self, text: str) -> str:
        return self.open + text + self.close

    def block(self, *calls: Call) -> str:
        return self.wrap(self.bare(*calls))

    def calls(self, *calls: Call) -> str:
        return self.block(*calls)  # one list holds every call


PYTHONIC = PythonicWire(id="pythonic", tool_parser="pythonic", reasoning_parser="default", open="<|python_start|>",
                        close="<|python_end|>", tokenizers=("llama-3.2",), template_layout=False)

# ---- gemma4: <|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>, calls back to back ----------

GEMMA_STRING = '<|"|>'


def gemma_literal(value: Any) -> str:
    """A JSON value as Gemma 4's template writes it: bare keys, ``<|"|>`` around raw strings."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{gemma_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma_literal(v) for v in value) + "]"
    if isinstance(value, str):
        return GEMMA_STRING + value + GEMMA_STRING
    return json.dumps(value)


@dataclass(frozen=True, kw_only=True)
class GemmaWire(Wire):
    verbatim: bool = False

    def inner(self, name: str, args: str) -> str:
        return f"call:{name}" + gemma_literal(json.loads(args))

    def block(self, *calls: Call) -> str:
        return "".join(self.open + self.inner(n, a) + self.close for n, a in calls)


GEMMA4 = GemmaWire(id="gemma4", tool_parser="gemma4", reasoning_parser="gemma4", open="<|tool_call>",
                   close="<tool_call|>", tokenizers=("gemma-4",), block_sep="", think_tag="<|channel>thought\n",
                   think_open="<|channel>thought\n", think_close="<channel|>", thinking_off=None,
                   call_ends_reasoning=True)

# ---- minimax-m3: NS<invoke name="N">NS<K>V NS</K>... inside one NS<tool_call> block -------------------

MINIMAX_NS = "]<]minimax[>["


def minimax_elements(value: Any) -> str:
    """A JSON value as MiniMax-M3's ``to_xml`` macro writes it: members as ``NS<K>…NS</K>``, list
    elements as ``NS<item>…NS</item>``, strings raw, booleans and numbers as JSON, nulls omitted."""
    ns = MINIMAX_NS
    if isinstance(value, dict):
        return "".join(f"{ns}<{k}>{minimax_elements(v)}{ns}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"{ns}<item>{minimax_elements(v)}{ns}</item>" for v in value)
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True, kw_only=True)
class MiniMaxM3Wire(Wire):
    verbatim: bool = False

    def inner(self, name: str, args: str) -> str:
        return f'{MINIMAX_NS}<invoke name="{name}">{minimax_elements(json.loads(args))}{MINIMAX_NS}</invoke>\n'

    def block(self, *calls: Call) -> str:
        return self.open + "\n" + "".join(self.inner(n, a) for n, a in calls) + self.close

    def calls(self, *calls: Call) -> str:
        return self.block(*calls)  # the template writes every call of a turn in one block


# No MiniMax-M3 tokenizer: the M2 vocabulary (which splits NS into six pieces) stands in for chunkings.
MINIMAX_M3 = MiniMaxM3Wire(id="minimax-m3", tool_parser="minimax-m3", reasoning_parser="minimax-m3",
                           open=MINIMAX_NS + "<tool_call>", close=MINIMAX_NS + "</tool_call>", tokenizers=("minimax-m2",),
                           block_sep="", think_tag="<mm:think>", think_open="<mm:think>", think_close="</mm:think>",
                           thinking_off=None)

# ---- hunyuan: GLM-style pairs in :opensource-suffixed tags inside one <tool_calls:S> block ---------------

HY = ":opensource"


def hunyuan_layout(suffix: str) -> Callable[[str, Params], str]:
    """One call as the Hy3 template writes it, its tags suffixed ``suffix``."""
    def call(name: str, params: Params) -> str:
        s = suffix
        body = "".join(f"<arg_key{s}>{k}</arg_key{s}>\n<arg_value{s}>{v}</arg_value{s}>\n" for k, v in params)
        return f"<tool_call{s}>{name}<tool_sep{s}>\n{body}</tool_call{s}>\n"
    return call


hunyuan_call = hunyuan_layout(HY)


@dataclass(frozen=True, kw_only=True)
class HunyuanWire(XmlWire):
    def calls(self, *calls: tuple[str, str | Params]) -> str:
        return self.block(*calls)  # the template writes every call of a turn in one block


# No Hunyuan tokenizer: arbitrary chunkings only.
HUNYUAN = HunyuanWire(id="hunyuan", tool_parser="hunyuan", reasoning_parser="hunyuan", open=f"<tool_calls{HY}>",
                      close=f"</tool_calls{HY}>", layout=hunyuan_call, tokenizers=(), block_lead="\n", block_sep="",
                      think_tag=f"<think{HY}>", think_open=f"<think{HY}>", think_close=f"</think{HY}>",
                      thinking_off=None)
# HY-V4 (no template here): Hunyuan's tags and layout, but its default effort is ``high``, so a
# request without ``reasoning_effort`` starts in reasoning; ``no_think`` starts it plain.
HY_V4 = replace(HUNYUAN, id="hy-v4", tool_parser="hy-v4", reasoning_parser="hy-v4", think_open="",
                thinking_off={"reasoning_effort": "no_think"})


# ---- k2-horizon: <ifm|tool_calls>\n<ifm|tool_call>NAME\n<ifm|arg_key>K</ifm|arg_key>\n<ifm|arg_value>V… ----

def k2_horizon_call(name: str, params: Params) -> str:
    """One call in the default (``xml``) syntax, as PROTOCOLS.md's rendered example writes it."""
    body = "".join(f"\n<ifm|arg_key>{k}</ifm|arg_key>\n<ifm|arg_value>{v}</ifm|arg_value>" for k, v in params)
    return f"<ifm|tool_call>{name}{body}{chr(10) if params else ''}</ifm|tool_call>"


@dataclass(frozen=True, kw_only=True)
class K2HorizonWire(XmlWire):
    def block(self, *calls: tuple[str, str | Params]) -> str:
        return self.open + "\n".join(self.inner(n, p) for n, p in calls) + self.close

    def calls(self, *calls: tuple[str, str | Params]) -> str:
        return self.block(*calls)  # one group per turn


# No K2 Horizon template or vocabulary here: its markers are pseudo-tokens (ids in PROTOCOLS.md).
K2_HORIZON = K2HorizonWire(id="k2-horizon", tool_parser="k2-horizon", reasoning_parser="k2-horizon",
                           open="<ifm|tool_calls>\n", close="\n</ifm|tool_calls>", layout=k2_horizon_call,
                           tokenizers=(), think_tag="<ifm|think>", think_close="</ifm|think>", template_layout=False,
                           call_ends_reasoning=True,
                           pseudo_token_markers=r"</?ifm\|(?:tool_calls?|arg_key|arg_type|arg_value|think)>")


# ---- inkling: <|message_model|>NAME<|content_invoke_tool_json|>{"name":NAME,"args":{…}}<|end_message|> ----

@dataclass(frozen=True, kw_only=True)
class InklingWire(Wire):
    """One block per call; the body's JSON as the template writes it (compact), arguments as given."""

    def inner(self, name: str, args: str) -> str:
        return f'{name}<|content_invoke_tool_json|>{{"name":{json.dumps(name)},"args":{args}}}'

    def block(self, *calls: Call) -> str:
        return "".join(self.open + self.inner(n, a) + self.close for n, a in calls)


# No Inkling template or vocabulary here: its markers are pseudo-tokens (ids in PROTOCOLS.md).  A
# reply starts as content (the prompt ends with ``<|message_model|>``); the model opens thinking.
INKLING = InklingWire(id="inkling", tool_parser="inkling", reasoning_parser="inkling", open="<|message_model|>",
                      close="<|end_message|>", tokenizers=(), block_sep="", think_tag="<|content_thinking|>",
                      think_open="<|content_thinking|>", think_close="<|end_message|>", thinking_off=None,
                      pseudo_token_markers=r"<\|(?:message_model|end_message|content_[a-z_]+)\|>")

class Vocabulary:
    """A tokenizer as far as a parser asks it: ``get_vocab()`` of the given tokens."""

    def __init__(self, *tokens: str) -> None:
        self.vocab = {t: i for i, t in enumerate(tokens)}

    def get_vocab(self) -> dict[str, int]:
        return self.vocab


# Hy3-preview's plain tags (vLLM ``hy_v3`` without ``token_suffix``): read by the default parser,
# whose reasoning tags stay ``:opensource``, and by the parsers a plain vocabulary chooses
# (``<think>`` reasoning; HY-V4's has no ``<tool_sep>``).
PLAIN_TAGS = ("<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
              "<arg_value>", "</arg_value>", "<think>", "</think>")
HUNYUAN_PLAIN = replace(HUNYUAN, id="hunyuan-plain", open="<tool_calls>", close="</tool_calls>",
                        layout=hunyuan_layout(""))
HUNYUAN_PREVIEW = replace(HUNYUAN_PLAIN, id="hunyuan-plain-vocabulary", tokenizer=Vocabulary(*PLAIN_TAGS, "<tool_sep>"),
                          think_tag="<think>", think_open="<think>", think_close="</think>")
HY_V4_PLAIN = replace(HY_V4, id="hy-v4-plain-vocabulary", open="<tool_calls>", close="</tool_calls>",
                      layout=hunyuan_layout(""), tokenizer=Vocabulary(*PLAIN_TAGS), think_tag="<think>",
                      think_close="</think>")
HUNYUAN_PLAIN_WIRES = (HUNYUAN_PLAIN, HUNYUAN_PREVIEW, HY_V4_PLAIN)


# ---- kimi-k3: XTML <|open|>call tool="N" index="1"<|sep|><|open|>argument key="K" type="T"<|sep|>V… --

def xtml_attribute(value: str) -> str:
    """An attribute value as Kimi-K3's template escapes it: ``&`` first, then ``"``."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


def xtml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object"}.get(type(value), "array")


def xtml_argument(key: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return (f'<|open|>argument key="{xtml_attribute(key)}" type="{xtml_type(value)}"<|sep|>'
            f"{text}<|close|>argument<|sep|>")


@dataclass(frozen=True, kw_only=True)
class XtmlWire(Wire):
    verbatim: bool = False

    def inner(self, name: str, args: str, index: int = 1) -> str:
        body = "".join(xtml_argument(k, v) for k, v in json.loads(args).items())
        return f'<|open|>call tool="{xtml_attribute(name)}" index="{index}"<|sep|>{body}<|close|>call<|sep|>'

    def block(self, *calls: Call) -> str:
        return self.open + "".join(self.inner(n, a, i) for i, (n, a) in enumerate(calls, 1)) + self.close


# No Kimi-K3 tokenizer: arbitrary chunkings only.
KIMI_K3 = XtmlWire(id="kimi-k3", tool_parser="kimi-k3", reasoning_parser="kimi-k3", open="<|open|>tools<|sep|>",
                   close="<|close|>tools<|sep|>", tokenizers=(), block_sep="", think_tag="<|open|>think<|sep|>",
                   think_close="<|close|>think<|sep|>")


# ---- minicpm5: <function name="N"><param name="K">V</param></function>, one per line, no block --------

def minicpm5_call(name: str, params: Params) -> str:
    body = "".join(f'<param name="{k}">' + (f"<![CDATA[{v}]]>" if any(c in v for c in "<&\n") else v) + "</param>"
                   for k, v in params)
    return f'<function name="{name}">{body}</function>'


# The template thinks only when asked (enable_thinking undefined: the model decides, plain start).
MINICPM5 = XmlWire(id="minicpm5", tool_parser="minicpm5", reasoning_parser="minicpm5", open="", close="",
                   layout=minicpm5_call, tokenizers=(), request_extra={"chat_template_kwargs": {"enable_thinking": True}},
                   head='<function name="', lead="\n", block_sep="\n")


# ---- JSON arrays of calls in one block: cohere-command, apertus ----------------------------------

@dataclass(frozen=True, kw_only=True)
class ArrayWire(Wire):
    """One JSON array per block, one element per call (index ``i`` from 0)."""

    array_open: str = "["
    element_sep: str = ", "
    array_close: str = "]"

    def element(self, name: str, args: str, i: int = 0) -> str:
        raise NotImplementedError

    def inner(self, name: str, args: str) -> str:
        return self.element(name, args)

    def block(self, *calls: Call) -> str:
        rows = self.element_sep.join(self.element(n, a, i) for i, (n, a) in enumerate(calls))
        return f"{self.open}{self.array_open}{rows}{self.array_close}{self.close}"

    def calls(self, *calls: Call) -> str:
        return self.block(*calls)  # one block holds every call of a turn


@dataclass(frozen=True, kw_only=True)
class CohereWire(ArrayWire):
    """``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": N, "parameters": {...}}, …]<|END_ACTION|>``."""

    array_open: str = "[\n    "
    element_sep: str = ",\n    "
    array_close: str = "\n]"

    def element(self, name: str, args: str, i: int = 0) -> str:
        return f'{{"tool_call_id": "{i}", "tool_name": {json.dumps(name, ensure_ascii=False)}, "parameters": {args}}}'


@dataclass(frozen=True, kw_only=True)
class ApertusWire(ArrayWire):
    """``<|tools_prefix|>[{"NAME": {...}}, …]<|tools_suffix|>``."""

    def element(self, name: str, args: str, i: int = 0) -> str:
        return f"{{{json.dumps(name, ensure_ascii=False)}: {args}}}"


# No Command A / Cohere2MoE or Apertus vocabulary is here: the markers are pseudo-tokens (unverified).
COHERE_MARKERS = r"<\|(?:START|END)_(?:ACTION|THINKING|RESPONSE|TEXT)\|>"
COHERE = CohereWire(id="cohere-command", tool_parser="cohere-command", reasoning_parser="cohere-command",
                    open="<|START_ACTION|>", close="<|END_ACTION|>", tokenizers=(), block_sep="",
                    think_tag="<|START_THINKING|>", think_close="<|END_THINKING|>",
                    pseudo_token_markers=COHERE_MARKERS)
APERTUS_MARKERS = r"<\|(?:tools|inner)_(?:prefix|suffix)\|>"
APERTUS = ApertusWire(id="apertus", tool_parser="apertus", reasoning_parser="apertus", open="<|tools_prefix|>",
                      close="<|tools_suffix|>", tokenizers=(), block_sep="", think_tag="<|inner_prefix|>",
                      think_open="<|inner_prefix|>", think_close="<|inner_suffix|>", thinking_off=None,
                      pseudo_token_markers=APERTUS_MARKERS)


# ---- lfm2: <|tool_call_start|>[NAME(k='raw', o={"json": true}, l=['py'])]<|tool_call_end|> ------------

def lfm2_literal(value: Any) -> str:
    """A value as LFM2.5's template writes it: strings raw in single quotes, dicts as JSON,
    the rest as Python reprs (a string with a quote or backslash as a Python literal)."""
    if isinstance(value, str):
        quotable = "'" not in value and "\\" not in value and value.isprintable()
        return f"'{value}'" if quotable else repr(value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else repr(value)


@dataclass(frozen=True, kw_only=True)
class Lfm2Wire(PythonicWire):
    pseudo_token_markers: str = r"<\|tool_call_(?:start|end)\|>|</?think>"

    def inner(self, name: str, args: str) -> str:
        return f"{name}(" + ", ".join(f"{k}={lfm2_literal(v)}" for k, v in json.loads(args).items()) + ")"


# No LFM2 vocabulary is here: its markers are pseudo-tokens (unverified).
LFM2 = Lfm2Wire(id="lfm2", tool_parser="lfm2", reasoning_parser="lfm2", open="<|tool_call_start|>",
                close="<|tool_call_end|>", tokenizers=(), block_sep="", think_open="<think>", thinking_off=None)


# ---- gigachat3: <|function_call|>{"name": N, "arguments": {...}}<|message_sep|> (3.1), role turn (3) ----

@dataclass(frozen=True, kw_only=True)
class GigaChatWire(JsonWire):
    def role_turn(self, name: str, args: str) -> str:
        """3.0's layout: the call as a ``function call`` role turn after the content's end."""
        return "<|message_sep|>\n\nfunction call<|role_sep|>\n" + self.inner(name, args) + self.close


# No GigaChat vocabulary is here: its markers are pseudo-tokens (unverified).  GigaChat 3/3.1 have
# no reasoning markers: ``lfm2``'s plain-start <think> stands in for the matrix's reasoning cases.
GIGACHAT3 = GigaChatWire(id="gigachat3", tool_parser="gigachat3", reasoning_parser="lfm2", open="<|function_call|>",
                         close="<|message_sep|>", field="arguments", tokenizers=(), block_sep="\n\n",
                         think_open="<think>", thinking_off=None,
                         pseudo_token_markers=r"<\|(?:role_sep|message_sep|function_call)\|>|</?think>")


# ---- dots: <dots_function_call>\n<invoke name="N">\n<parameter name="K">\nV\n</parameter>\n…, one per block ----

def dots_call(name: str, params: Params) -> str:
    """One invoke as bellwether's dots3 rendering writes it (the value between newlines)."""
    body = "".join(f'<parameter name="{k}">\n{v}\n</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{body}</invoke>\n'


# No dots vocabulary is here: Qwen2.5's (its base) cuts the text, the tags are pseudo-tokens.
# The model opens reasoning itself (nothing is prefilled).
DOTS = XmlWire(id="dots", tool_parser="dots", reasoning_parser="dots", open="<dots_function_call>",
               close="</dots_function_call>", layout=dots_call, tokenizers=("qwen2.5",), block_lead="\n", lead="\n",
               think_tag="<think>", think_open="<think>", thinking_off=None,
               pseudo_token_markers=r"</?dots_function_call>|</?think>")

# ---- iquest: GLM-4.7's pairs under <iquest_tool_call> (Q1) / <iquestcoder_tool_call> (Coder V2) ---------

IQUEST_MARKERS = r"</?iquest(?:coder)?_tool_call>|</?arg_(?:key|value)>|</?think>"
# No IQuest vocabulary is here (its tags are single tokens, ids 33-38): pseudo-tokens.
IQUEST = XmlWire(id="iquest", tool_parser="iquest", reasoning_parser="iquest", open="<iquest_tool_call>",
                 close="</iquest_tool_call>", layout=glm47_call, tokenizers=(), block_sep="",
                 pseudo_token_markers=IQUEST_MARKERS)
# IQuest-Coder V2 has no reasoning markers: ``lfm2``'s plain-start <think> stands in for the matrix's
# reasoning cases; no template: all whitespace between blocks is syntax.
IQUEST_CODER_V2 = XmlWire(id="iquest-coder-v2", tool_parser="iquest-coder-v2", reasoning_parser="lfm2",
                          open="<iquestcoder_tool_call>", close="</iquestcoder_tool_call>", layout=glm47_call,
                          tokenizers=(), block_sep="", template_layout=False, think_tag="<think>",
                          think_open="<think>", thinking_off=None, pseudo_token_markers=IQUEST_MARKERS)


# ---- sarashina: <|tool_calls|>[{'name': 'N', 'arguments': {...}}, …] (Python literals) ----------------

@dataclass(frozen=True, kw_only=True)
class SarashinaWire(PythonicWire):
    """A list of dict literals in one block; like a pythonic call, each goes out whole at its end."""

    def inner(self, name: str, args: str) -> str:
        return repr({"name": name, "arguments": json.loads(args)})  # Python's own literal: single quotes


# No Sarashina vocabulary is here: its marker is a pseudo-token.  No reasoning markers: ``lfm2``'s
# plain-start <think> stands in for the matrix's reasoning cases.
SARASHINA = SarashinaWire(id="sarashina", tool_parser="sarashina", reasoning_parser="lfm2", open="<|tool_calls|>",
                          close="", tokenizers=(), block_sep="", template_layout=False, think_open="<think>",
                          thinking_off=None, pseudo_token_markers=r"<\|tool_calls\|>|</?think>")

# ---- muse: <|start|>assistant to=N<|message|><atem:function_calls>\n<atem:invoke name="N">… per message ----------

MUSE_MESSAGE = "<|message|>"


def muse_call(name: str, params: Params) -> str:
    body = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params)
    return f'<atem:invoke name="{name}">\n{body}</atem:invoke>\n'


@dataclass(frozen=True, kw_only=True)
class MuseWire(XmlWire):
    """One tool message per block: the header (after `` to=``) names the first named call's recipient."""

    def block(self, *calls: tuple[str, str | Params]) -> str:
        recipient = next((n for n, _ in calls if n), "")  # (a call with an empty name names no recipient)
        head = f"{recipient}{MUSE_MESSAGE}<atem:function_calls>\n" if calls else ""
        return self.open + head + "".join(self.inner(n, p) for n, p in calls) + self.close

    def calls(self, *calls: tuple[str, str | Params]) -> str:
        return "<|eom|><|start|>assistant".join(self.call(n, p) for n, p in calls)


# No Muse tokenizer here: its special tokens are pseudo-tokens (ids in PROTOCOLS.md, from bellwether).
MUSE = MuseWire(id="muse", tool_parser="muse", reasoning_parser="muse", open=" to=", close="</atem:function_calls>",
                layout=muse_call, tokenizers=(), block_sep="", think_tag=" to=self<|message|>",
                think_open=" to=self<|message|>", think_close="<|eom|><|start|>assistant to=user<|message|>",
                thinking_off=None, pseudo_token_markers=r"<\|(?:start|message|eom|eot)\|>")


# The test matrix: every wire exactly once, listed here only (the contract, robustness and
# truncation tests and the SGLang families read it; ids are unique).
ALL_WIRES: tuple[Wire, ...] = (*TAGGED, LLAMA3, *XML_WIRES, *DSML_WIRES, *SECTION_WIRES, MISTRAL, MISTRAL_V13,
                               PYTHONIC, GEMMA4, MINIMAX_M3, HUNYUAN, HY_V4, KIMI_K3, K2_HORIZON, INKLING, MINICPM5,
                               COHERE, APERTUS, LFM2, GIGACHAT3, GIGACHAT35, ZAYA, STEP5, RIPPLE, DOTS, IQUEST,
                               IQUEST_CODER_V2, SARASHINA, MUSE)
