"""Tencent Hunyuan Hy3 (HY-V3) / HY-V4: GLM-style pairs in suffixed tags inside ``<tool_calls:S>``.

Every structural tag carries the checkpoint's suffix S inside its brackets; the Hy3 template
(``tencent-Hy3.jinja``) uses ``:opensource``.  Its layout, all calls of a turn in one block::

    <tool_calls:S>\\n<tool_call:S>NAME<tool_sep:S>\\n<arg_key:S>K</arg_key:S>\\n<arg_value:S>V</arg_value:S>\\n
    </tool_call:S>\\n</tool_calls:S>

(``</tool_call:S>`` on the same line as the last pair's newline).  HY-V4 (vLLM's structural
tag; no template here) writes no ``<tool_sep:S>`` and no newlines, and a call without
arguments as ``<tool_call:S>NAME</tool_call:S>``: the name is the text up to the first tag,
trimmed, so one parser reads both.  Values: strings raw, other types as JSON; typed by the
schema.  Reused machinery: ``XmlToolParser`` (the value driver: a string streams as it grows,
a typed value converts at ``</arg_value:S>``) and the readers of ``_syntax.py``.

The suffix: ``:opensource`` by default (the Hy3 template's).  Given the tokenizer
(``create_parser(..., tokenizer=...)``; anything with ``get_vocab``), ``for_tokenizer``
reads it from the vocabulary as vLLM and SGLang do: the suffix of the
``<(think|tool_calls|tool_call|arg_key|arg_value)(:SUF)?>`` entries (``:6124c78e``, or none
for a preview vocabulary), and the layout: HY-V3 when ``<tool_sep:SUF>`` exists, else HY-V4
(``render`` and the reasoning parser's default effort follow it).  Tokens (unverified: no
Hunyuan tokenizer here): the tags are single vocabulary entries per vLLM and SGLang; the parser
matches text, so a split anywhere is held.  No call syntax for constraints: XGrammar has no
suffixed style (PROTOCOLS.md: no builtin for ``hunyuan``).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from functools import cache
from typing import Any, NamedTuple

from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser, argument_items
from ._syntax import arg_start_hook, at_partial, key_value_hook, skip_ws

SUFFIX = ":opensource"
_MAX_NAME = 256  # a longer "name" is prose
# A structural tag in the vocabulary, with its suffix (vLLM ``detect_token_suffix``).
_VOCAB_TAG = re.compile(r"<(think|tool_calls|tool_call|arg_key|arg_value)(:[^<>\s]*)?>")


class HunyuanVocab(NamedTuple):
    """What a checkpoint's vocabulary says of its tags."""

    suffix: str  # ":opensource", ":6124c78e", or "" (a preview vocabulary)
    v4: bool  # no ``<tool_sep:SUF>``: HY-V4's layout


def detect_vocab(vocabulary: Iterable[str]) -> HunyuanVocab | None:
    """The suffix the vocabulary's structural tags carry (that of ``<tool_calls…>`` first, else
    the most frequent), or None when it has none (not a Hunyuan vocabulary)."""
    found: dict[str, dict[str, int]] = {}
    tags = set()
    for token in vocabulary:
        if token.startswith("<"):
            tags.add(token)
            match = _VOCAB_TAG.fullmatch(token)
            if match:
                by_suffix = found.setdefault(match.group(1), {})
                by_suffix[match.group(2) or ""] = by_suffix.get(match.group(2) or "", 0) + 1
    # ``<think>`` alone is every R1-style vocabulary's: without ``<tool_calls…>`` only a
    # suffixed tag is evidence.
    counts = found.get("tool_calls") or {s: n for by_suffix in found.values() for s, n in by_suffix.items() if s}
    if not counts:
        return None
    suffix = max(sorted(counts), key=lambda s: counts[s])
    return HunyuanVocab(suffix, f"<tool_sep{suffix}>" not in tags)


# One scan per tokenizer (a vocabulary is large; parsers are built per reply).
_SEEN: weakref.WeakKeyDictionary[Any, HunyuanVocab | None] = weakref.WeakKeyDictionary()


def tokenizer_vocab(tokenizer: Any) -> HunyuanVocab | None:
    """``detect_vocab`` of the tokenizer's ``get_vocab()``, remembered per tokenizer."""
    try:
        return _SEEN[tokenizer]
    except (KeyError, TypeError):
        pass
    get_vocab = getattr(tokenizer, "get_vocab", None)
    vocab = get_vocab() if get_vocab is not None else None
    found = detect_vocab(t for t in vocab if isinstance(t, str)) if vocab else None
    try:
        _SEEN[tokenizer] = found
    except TypeError:  # not weakly referenceable: scanned each time
        pass
    return found


_NAMES = ("tool_calls", "tool_call", "tool_sep", "arg_key", "arg_value")


def _block_tags(suffix: str) -> dict[str, str]:
    """The tags a block opened by ``<tool_calls{suffix}>`` is read with (the hooks' attributes)."""
    t = {name: f"<{name}{suffix}>" for name in _NAMES}
    ends = {f"end_{name}": f"</{name}{suffix}>" for name in _NAMES if name != "tool_sep"}
    return {**t, **ends, "tool_close_tag": ends["end_tool_calls"], "arg_value_close": ends["end_arg_value"],
            "function_close": ends["end_tool_call"]}


def _blocks(suffix: str) -> dict[str, dict[str, str]]:
    """Each open tag -> its block's tags: the suffixed ones, and the plain ones (Hy3-preview,
    vLLM ``hy_v3`` without ``token_suffix``), which every checkpoint's parser reads too."""
    return {f"<tool_calls{s}>": _block_tags(s) for s in dict.fromkeys((suffix, ""))}


def _tags(suffix: str) -> dict[str, Any]:
    """The class data of the dialect whose tags carry ``suffix``."""
    t = _block_tags(suffix)
    blocks = _blocks(suffix)
    return {"suffix": suffix, **t, "blocks": blocks, "tool_open_tags": tuple(blocks),
            "summary": f"{t['tool_calls']}{t['tool_call']}NAME{t['arg_key']}K{t['end_arg_key']}{t['arg_value']}V"
                       f"{t['end_arg_value']}…{t['end_tool_call']}{t['end_tool_calls']}"}


class HunyuanToolParser(XmlToolParser):
    suffix = SUFFIX
    v4 = False  # HY-V4's layout for ``render`` (the parser reads both)
    tool_calls, end_tool_calls = f"<tool_calls{SUFFIX}>", f"</tool_calls{SUFFIX}>"
    tool_call, end_tool_call = f"<tool_call{SUFFIX}>", f"</tool_call{SUFFIX}>"
    tool_sep = f"<tool_sep{SUFFIX}>"
    arg_key, end_arg_key = f"<arg_key{SUFFIX}>", f"</arg_key{SUFFIX}>"
    arg_value, end_arg_value = f"<arg_value{SUFFIX}>", f"</arg_value{SUFFIX}>"
    # Every open tag -> the tags of the block it opens; the plain ``<tool_calls>`` too.
    blocks = _blocks(SUFFIX)
    tool_open_tags = tuple(blocks)
    tool_close_tag = end_tool_calls
    arg_value_close = end_arg_value
    function_close = end_tool_call  # a value missing its close tag ends here; a malformed call is skipped to here
    summary = (f"{tool_calls}\\n{tool_call}NAME{tool_sep}\\n{arg_key}K{end_arg_key}\\n{arg_value}V{end_arg_value}"
               f"\\n…{end_tool_call}\\n{end_tool_calls}")
    tool_close_prefixes = ()  # unverified (no tokenizer): a split anywhere is held
    arg_value_close_prefixes = ()
    # The template builds every tag with ``'<tool_calls{}>'.format(HYTK)``: these pieces are what it contains.
    template_markers = ("<tool_calls{}>", "<tool_call{}>", "<tool_sep{}>", "<arg_key{}>", "<arg_value{}>")

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> type[HunyuanToolParser]:
        """This dialect with the suffix and layout the tokenizer's vocabulary has (unchanged
        when it has no Hunyuan tags)."""
        found = tokenizer_vocab(tokenizer)
        return cls if found is None else suffixed_parser(found.suffix, found.v4)

    def start_block(self, open_tag: str) -> None:
        """The block is read with the tags its open tag carries (suffixed or plain)."""
        tags = self.blocks.get(open_tag)
        if tags is not None and tags["tool_close_tag"] != self.tool_close_tag:
            vars(self).update(tags)  # this instance's hooks and close tags, until another block switches back
            self._values = self._value_reader(self._calls)
        super().start_block(open_tag)

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        start, pos = pos, skip_ws(payload, pos)
        if not payload.startswith(self.tool_call, pos):
            if pos == len(payload) or at_partial(payload, pos, self.tool_call):
                return None
            return start, None, "done"  # the block's close tag (or stray text) ends the payload
        begin = pos + len(self.tool_call)
        lt = payload.find("<", begin, begin + _MAX_NAME)
        if lt == -1:
            return MALFORMED if len(payload) - begin >= _MAX_NAME else None
        name = payload[begin:lt].strip()
        if not name or any(c.isspace() for c in name):
            return MALFORMED
        if payload.startswith(self.tool_sep, lt):
            return lt + len(self.tool_sep), name, "arg_start"
        if payload.startswith(self.arg_key, lt) or payload.startswith(self.end_tool_call, lt):
            return lt, name, "arg_start"
        if at_partial(payload, lt, self.tool_sep, self.arg_key, self.end_tool_call):
            return None
        return MALFORMED

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, self.arg_key, self.end_tool_call, self.end_tool_calls)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        return key_value_hook(payload, pos + len(self.arg_key), self.end_arg_key, self.arg_value)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """The Hy3 template's layout; HY-V4's (no separator, no newlines) when ``v4``."""
        if not calls:
            return ""
        nl, sep = ("", "") if cls.v4 else ("\n", cls.tool_sep + "\n")
        body = "".join(
            f"{cls.tool_call}{name}{sep}"
            + "".join(f"{cls.arg_key}{k}{cls.end_arg_key}{nl}{cls.arg_value}{v}{cls.end_arg_value}{nl}"
                      for k, v in argument_items(arguments))
            + f"{cls.end_tool_call}{nl}"
            for name, arguments in calls
        )
        return f"{cls.tool_calls}{nl}{body}{cls.end_tool_calls}"



@cache
def suffixed_parser(suffix: str, v4: bool) -> type[HunyuanToolParser]:
    """The dialect for tags suffixed ``suffix`` (one class per suffix and layout)."""
    if suffix == SUFFIX and not v4:
        return HunyuanToolParser
    return type("HunyuanToolParser", (HunyuanToolParser,), {**_tags(suffix), "v4": v4})
