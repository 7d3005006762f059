"""``lmparse check-tokenizer``: a dialect's markers measured against a real tokenizer.

For each marker the parsers read (tool open and close tags, parameter and function
markers, reasoning tags, or ``--marker`` strings) the marker is encoded after and before
many pieces of text a model would write; wherever a token boundary falls strictly inside
it, the marker's text up to there is a prefix that can end a decoded chunk.  The prefixes
observed are compared with the tuple the parser declares for that marker
(``tool_close_prefixes``, ``arg_value_close_prefixes``, ``start_tag_prefixes``,
``end_tag_prefixes``): one observed but not declared is a mismatch; one declared but not
observed may belong to another of the family's tokenizers (a mismatch only with
``strict``).  Each marker is also reported as one token or several, special or not, and
whether decoding with ``skip_special_tokens`` erases it (then the engine must keep special
tokens for the parser to see it).  Reads Hugging Face ``tokenizer.json`` files (gzipped
too) with the ``tokenizers`` package, imported only here.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import factory  # noqa: F401  (registers the built-in parsers)
from .registry import ReasoningParserManager, ToolParserManager

__all__ = ["MarkerReport", "load_hf_tokenizer", "declared_markers", "observed_prefixes", "check_marker",
           "check_tokenizer", "holds", "format_reports"]

# Text a model writes before and after a marker: words, punctuation, JSON and XML pieces,
# CJK, an emoji, whitespace runs.
LEFT = ("", "a", "Hello", "Let me check.", "ok.\n", ".", ",", " ", "  ", "\n", "\n\n", "\t", "}", "]", '"', "'",
        ":", "=", "1", "3.5", "true", "<", ">", "/", "x ", "value", "。", "的", "😀", "é")
RIGHT = ("", "a", "Hello", " ", "\n", "\n\n", "\t", "{", "[", '"', "<", ">", "/", "x", "1", "}", "。", "😀", ".")
_REPLACEMENT = "\ufffd"


@dataclass
class MarkerReport:
    what: str  # where the marker comes from ("tool close", "reasoning end", "--marker", ...)
    marker: str
    token_ids: list[int]
    special_tokens: int  # how many of its tokens are special added tokens
    erased_by_skip_special: bool  # decoding with skip_special_tokens loses it
    observed: list[str]  # prefixes that end a chunk at a real token boundary, longest first
    declared: list[str] | None  # the parser's tuple for this marker (None: it declares none)
    missing: list[str] = field(default_factory=list)  # observed, not declared
    extra: list[str] = field(default_factory=list)  # declared, not observed with this tokenizer

    @property
    def single_token(self) -> bool:
        return len(self.token_ids) == 1

    @property
    def special(self) -> bool:
        """Every one of its tokens is special."""
        return bool(self.token_ids) and self.special_tokens == len(self.token_ids)


def load_hf_tokenizer(path: str | Path) -> Any:
    """A ``tokenizers.Tokenizer`` from ``tokenizer.json`` (or ``.json.gz``), or a directory holding one."""
    from tokenizers import Tokenizer  # in the serve extra (docs/install.md)

    p = Path(path)
    if p.is_dir():
        found = [p / n for n in ("tokenizer.json", "tokenizer.json.gz") if (p / n).is_file()]
        if not found:
            raise ValueError(f"{p} holds no tokenizer.json or tokenizer.json.gz")
        p = found[0]
    if not p.is_file():
        raise ValueError(f"no tokenizer file at {p}")
    data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
    return Tokenizer.from_str(data.decode("utf-8"))


def declared_markers(tool_parser: str | None, reasoning_parser: str | None) -> list[tuple[str, str, Any]]:
    """``(what, marker, declared prefixes or None)`` for every marker the named parsers read."""
    out: list[tuple[str, str, Any]] = []
    if tool_parser:
        cls = ToolParserManager.get(tool_parser)
        out += [("tool open", tag, None) for tag in (*cls.tool_open_tags, *cls.payload_open_tags)]
        if cls.tool_close_tag:
            out.append(("tool close", cls.tool_close_tag, cls.tool_close_prefixes))
        for attr, what in (("parameter_open", "parameter open"), ("function_close", "function close")):
            marker = getattr(cls, attr, "").strip()
            if marker and marker not in {m for _, m, _ in out}:
                out.append((what, marker, None))
        value_close = getattr(cls, "arg_value_close", "")  # XML-like dialects only
        if value_close:
            out.append(("value close", value_close, getattr(cls, "arg_value_close_prefixes", ())))
    if reasoning_parser:
        tags = ReasoningParserManager.get(reasoning_parser)
        if tags.start_tag:
            out.append(("reasoning start", tags.start_tag, tags.start_tag_prefixes))
        out.append(("reasoning end", tags.end_tag, tags.end_tag_prefixes))
    return out


def _boundaries(tok: Any, text: str) -> list[int] | None:
    """Character offsets in ``text`` where a token ends (None: it does not decode back to itself)."""
    ids = tok.encode(text, add_special_tokens=False).ids
    if tok.decode(ids, skip_special_tokens=False) != text:
        return None
    ends = []
    for k in range(1, len(ids)):
        piece = tok.decode(ids[:k], skip_special_tokens=False)
        if not piece.endswith(_REPLACEMENT) and text.startswith(piece):
            ends.append(len(piece))
    return ends


def observed_prefixes(tok: Any, marker: str) -> list[str]:
    """Every proper prefix of ``marker`` a token boundary ends, over all contexts, longest first."""
    found: set[str] = set()
    for left in LEFT:
        for right in RIGHT:
            ends = _boundaries(tok, left + marker + right)
            found.update(marker[:end - len(left)] for end in ends or () if len(left) < end < len(left) + len(marker))
    return sorted(found, key=len, reverse=True)


def _special_ids(tok: Any) -> set[int]:
    return {i for i, added in tok.get_added_tokens_decoder().items() if added.special}


def check_marker(tok: Any, what: str, marker: str, declared: Any = None) -> MarkerReport:
    ids = tok.encode(marker, add_special_tokens=False).ids
    observed = observed_prefixes(tok, marker)
    special = _special_ids(tok)
    report = MarkerReport(what, marker, ids, sum(i in special for i in ids),
                          marker not in tok.decode(ids, skip_special_tokens=True), observed,
                          None if declared is None else list(declared))
    if declared is not None:
        report.missing = [p for p in observed if p not in declared]
        report.extra = [p for p in declared if p not in observed]
    return report


def check_tokenizer(tok: Any, tool_parser: str | None = None, reasoning_parser: str | None = None,
                    markers: tuple[str, ...] = (), strict: bool = False) -> tuple[list[MarkerReport], bool]:
    """Reports for every marker, and whether the declared prefixes hold (``strict``: exactly)."""
    wanted = declared_markers(tool_parser, reasoning_parser) + [("--marker", m, None) for m in markers]
    if not wanted:
        raise ValueError("check-tokenizer needs --tool-parser, --reasoning-parser or --marker")
    reports = [check_marker(tok, what, marker, declared) for what, marker, declared in wanted]
    return reports, holds(reports, strict)


def holds(reports: list[MarkerReport], strict: bool = False) -> bool:
    """No observed prefix undeclared (``strict``: and no declared prefix unobserved)."""
    return all(not r.missing and not (strict and r.extra) for r in reports)


def format_reports(reports: list[MarkerReport]) -> str:
    lines = []
    for r in reports:
        kind = "1 token" if r.single_token else f"{len(r.token_ids)} tokens"
        partly = f"{r.special_tokens} of its tokens special" if r.special_tokens else "not special"
        flags = [kind, "special" if r.special else partly]
        if r.erased_by_skip_special:
            flags.append("ERASED by skip_special_tokens: the engine must keep special tokens")
        lines.append(f"{r.what:15} {r.marker!r}: {', '.join(flags)} (ids {r.token_ids})")
        lines.append(f"{'':15} observed prefixes: {r.observed or '-'}")
        if r.declared is not None:
            verdict = "MISMATCH" if r.missing else "ok"
            lines.append(f"{'':15} declared: {r.declared or '()'} -> {verdict}"
                         + (f"; missing {r.missing}" if r.missing else "")
                         + (f"; not seen with this tokenizer {r.extra}" if r.extra else ""))
    return "\n".join(lines) + "\n"
