"""The replies the LMDeploy suite sends through api_server, and how the engine delivers them.

A ``Case`` is one reply of one family (its text and the parser names on both sides) and the
deliveries it is sent with. A delivery cuts the reply into engine steps from the family's real
token stream (Kimi-K2: pseudo tokens, its vocabulary is not public; the late-2026 families of
``new_families.py``: Qwen3's tokens, none of theirs is in the test data): one token per step, a fixed
number, seeded sizes of 2-16, or one token per step except that the tokens covering one hard
span (text and a call opener, two whole calls, ``</think>`` and an opener) arrive as ONE step.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ...support.harmony import harmony_vocab_dir, token_stream
from ...support.tokenizers import load_tokenizer, roundtrips, token_chunks
from ...support.wires import GLM47, KIMI, QWEN, QWEN3CODER, TOOLS, V32, Wire, pseudo_tokens
from ..new_families import NEW_FAMILIES, STAND_IN_TOKENIZER, NewFamily, own_cell
from .engine import Steps

CALLS = [("get_weather", '{"city": "Paris", "days": 2}'), ("f", '{"q": "a b"}')]
TEXT = "Checking the weather."


@dataclass(frozen=True)
class Family:
    name: str
    wire: Wire | None  # None: gpt-oss, whose replies are written out below
    tool: str  # lmparse's tool parser
    reasoning: str | None  # lmparse's reasoning parser
    lmdeploy_tool: str  # LMDeploy's own names for the family
    lmdeploy_reasoning: str | None
    tokenizer: str | None  # None: pseudo tokens
    lead: str = " "  # between the content and the first call block, as the model writes it
    response: str = "default"  # lmparse's response parser
    arch: str = "Qwen3ForCausalLM"  # what LMDeploy picks its response parser by
    new: NewFamily | None = None  # a late-2026 family: its reply rendered by lmparse's dialects

    @property
    def own(self) -> str:
        if self.new is not None:
            return own_cell(self.new.lmdeploy, ", ")
        if self.response != "default":
            return f"response parser `{self.response}` (by architecture)"
        return f"tool `{self.lmdeploy_tool}`, reasoning `{self.lmdeploy_reasoning}`"

    @property
    def extra(self) -> dict[str, Any]:
        """The fields every request for the family carries beside its tools."""
        if self.new is not None:
            kwargs = dict(self.new.chat_template_kwargs)
            return {"chat_template_kwargs": kwargs} if kwargs else {}
        return dict(self.wire.request_extra) if self.wire else {}

    def request(self) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": "weather?"}], "tools": TOOLS, **self.extra}


QWEN3 = Family("qwen3", QWEN, "qwen3", "qwen3", "qwen3", "default", "qwen3")
CODER = Family("qwen3coder", QWEN3CODER, "qwen3coder", "default", "qwen3coder", "default", "qwen3")
GLM = Family("glm47", GLM47, "glm47", "glm45", "glm47", "default", "glm-4.7-flash")
# DeepSeek-V3.2 writes a blank line before its block; LMDeploy's parser only sees a block after one.
DSML = Family("deepseek-v32", V32, "deepseek-v32", "deepseek-v32", "deepseek-v32", "deepseek-v32",
              "deepseek-v3.2", lead="\n\n")
DSML_AFTER_TEXT = Family("deepseek-v32", V32, "deepseek-v32", "deepseek-v32", "deepseek-v32", "deepseek-v32",
                         "deepseek-v3.2")  # a block right after the text, as models also write it
KIMI_K2 = Family("kimi-k2", KIMI, "kimi-k2", "kimi-k2", "kimi-k2", "default", None)
GPT_OSS = Family("gpt-oss", None, "gpt-oss", "gpt-oss", "", None, "o200k_harmony", response="gpt-oss",
                 arch="GptOssForCausalLM")
# The late-2026 families: LMDeploy 0.18.0 has a parser for none of them (its registries checked in
# its venv); Qwen3's tokenizer stands in for theirs.
NEW = [Family(f.name, None, f.tool, f.reasoning, "", None, STAND_IN_TOKENIZER, lead="\n\n", new=f)
       for f in NEW_FAMILIES]
# gpt-oss replies as the engine returns them: the <|call|> / <|return|> that ends the turn is a
# stop token, which LMDeploy's engine leaves out of the output.
HARMONY_CALL = ("<|channel|>analysis<|message|>Which city?<|end|><|start|>assistant<|channel|>commentary "
                'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": 2}')
HARMONY_TEXT = f"<|channel|>analysis<|message|>Which city?<|end|><|start|>assistant<|channel|>final<|message|>{TEXT}"


def pieces(family: Family, text: str) -> tuple[list[str], list[list[int]]]:
    """The reply as the engine generates it: per token its decoded text and its id."""
    if family.response == "gpt-oss":
        return harmony_pieces(text)
    if family.tokenizer is None:
        chunks = pseudo_tokens(text, family.wire.pseudo_token_markers)
        return chunks, [[i] for i in range(len(chunks))]
    tok = load_tokenizer(family.tokenizer)
    if not roundtrips(tok, text):
        pytest.skip(f"{family.tokenizer} does not reproduce the reply text")
    return token_chunks(tok, text), [[i] for i in tok.encode(text)]


def harmony_pieces(text: str) -> tuple[list[str], list[list[int]]]:
    """The real o200k_harmony token stream of a gpt-oss reply. The encoding is read from the test
    data (TOKENIZERS.md): ``TIKTOKEN_ENCODINGS_BASE`` stays set for the process, because LMDeploy's
    and lmparse's Harmony parsers load the encoding when the server builds them."""
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(harmony_vocab_dir()))
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    ids, texts = token_stream(load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS), text)
    return texts, [[i] for i in ids]


Cut = Callable[[list[str], str], list[list[int]]]  # token pieces, reply text -> token indices per step


def sizes(*choices: int, seed: int = 0) -> Cut:
    """Steps of a fixed size, or of sizes drawn (seeded) from ``choices``."""
    def cut(chunks: list[str], text: str) -> list[list[int]]:
        rng, out, i = random.Random(seed), [], 0
        while i < len(chunks):
            n = choices[0] if len(choices) == 1 else rng.randint(choices[0], choices[1])
            out.append(list(range(i, min(i + n, len(chunks)))))
            i += n
        return out
    return cut


def at_once(start: str, end: str, last: bool = False) -> Cut:
    """One token per step, except that every token overlapping the span from ``start`` to
    ``end`` (the first ``end`` after it, or with ``last`` the last one) is in ONE step."""
    def cut(chunks: list[str], text: str) -> list[list[int]]:
        lo = text.index(start)
        hi = (text.rindex(end) if last else text.index(end, lo + len(start))) + len(end)
        out: list[list[int]] = []
        offset, merged = 0, None
        for i, chunk in enumerate(chunks):
            if offset < hi and offset + len(chunk) > lo:
                if merged is None:
                    merged = []
                    out.append(merged)
                merged.append(i)
            else:
                out.append([i])
            offset += len(chunk)
        return out
    return cut


@dataclass(frozen=True)
class Delivery:
    label: str
    stream: bool
    cut: Cut


NON_STREAM = Delivery("non-stream", False, sizes(3))
ONE = Delivery("stream, 1 token", True, sizes(1))
THREE = Delivery("stream, 3 tokens", True, sizes(3))
MIXED = Delivery("stream, 2-16 tokens", True, sizes(2, 16))


@dataclass(frozen=True)
class Case:
    reply: str  # the table's reply cell
    family: Family
    text: str
    deliveries: tuple[Delivery, ...]
    finish: str = "stop"  # what the engine reports: ``length`` for a reply cut by max_tokens

    def steps(self, delivery: Delivery) -> Steps:
        chunks, ids = pieces(self.family, self.text)
        return [("".join(chunks[i] for i in step), [t for i in step for t in ids[i]])
                for step in delivery.cut(chunks, self.text)]


def clean(family: Family) -> str:
    if family.new is not None:
        return family.new.reply(CALLS, TEXT, family.lead)
    wire = family.wire
    return f"{wire.think_open}Which city?{wire.think_close}{TEXT}{family.lead}" + wire.calls(*CALLS)


def no_text(family: Family) -> str:
    wire = family.wire
    return f"{wire.think_open}Which city?{wire.think_close}" + wire.calls(*CALLS)


def truncated(family: Family) -> str:
    """The clean reply cut by max_tokens inside the second call's arguments."""
    text = clean(family)
    return text[: text.rindex("a b") + 1]


def text_and_opener(family: Family) -> Delivery:
    return Delivery("stream, text and call opener in one delta", True, at_once("weather.", family.wire.open))


def two_calls(family: Family) -> Delivery:
    return Delivery("stream, both calls in one delta", True, at_once(family.wire.open, family.wire.close, last=True))


def think_and_opener(family: Family) -> Delivery:
    return Delivery("stream, `</think>` and call opener in one delta", True,
                    at_once(family.wire.think_close, family.wire.open))


def cases() -> list[Case]:
    families = (QWEN3, CODER, GLM, DSML, KIMI_K2)
    out = [Case(f"{f.name}: reasoning, text, two calls", f, clean(f), (NON_STREAM, ONE, THREE)) for f in families]
    out += [Case(f"{f.name}: text and call opener together", f, clean(f), (text_and_opener(f),))
            for f in (QWEN3, CODER, GLM)]
    out += [Case(f"{f.name}: two calls together (SGLang #37634)", f, clean(f), (two_calls(f),))
            for f in (QWEN3, GLM, KIMI_K2)]
    out += [Case(f"{f.name}: a call right after `</think>` (vLLM #39056, #42400)", f, no_text(f),
                 (think_and_opener(f), ONE)) for f in (QWEN3, GLM, DSML)]
    out += [Case("deepseek-v32: DSML under multi-token deltas (vLLM #40800, #54686)", DSML, clean(DSML), (MIXED,)),
            Case("deepseek-v32: block right after text", DSML_AFTER_TEXT, clean(DSML_AFTER_TEXT), (NON_STREAM, ONE, MIXED))]
    out += [Case(f"{f.name}: cut off inside call arguments (max_tokens)", f, truncated(f), (NON_STREAM, ONE),
                 finish="length") for f in (QWEN3, CODER, DSML)]
    out += [Case("gpt-oss: reasoning, then a call", GPT_OSS, HARMONY_CALL, (NON_STREAM, ONE, THREE)),
            Case("gpt-oss: reasoning, then text", GPT_OSS, HARMONY_TEXT, (NON_STREAM, ONE, THREE))]
    out += [Case(f"{f.name}: {'reasoning, ' if f.reasoning else ''}text, two calls", f, clean(f), (NON_STREAM, ONE))
            for f in NEW]
    return out
