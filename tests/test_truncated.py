"""Replies that end inside a tool block or a multi-part marker (issue 10 item 8).

A reply may end anywhere: a length cut, a stop string or token, the natural end.  Cut at
every position inside a block, for every tool dialect:

- no markup reaches content or reasoning: both equal the uncut reply's;
- a call whose name already streamed keeps it, and its arguments: what streamed before the
  end is a prefix of the uncut call's arguments, and the end only appends to it;
- markup before that is syntax: one ``dropped`` record with the reason and the markup;
- the stream equals the complete parse at every chunking (one character per chunk, seeded
  random, every real token boundary), and conservation holds with the dropped markup
  accounted.

Harmony is cut at every position of a reply of three messages; its headers never become
content.  Prose that merely mentions a tag stays text, as before.
"""

from __future__ import annotations

import json

import random
from typing import Any

import pytest

from lmparse import create_parser
from lmparse.response.harmony import HarmonyResponseParser, load_encoding
from lmparse.response.harmony.router import TRUNCATED_HEADER
from lmparse.tools.calls import MALFORMED_ARGUMENTS, TRUNCATED_ARGUMENTS, TRUNCATED_HEAD

from .support.harmony import harmony_vocab_dir, token_stream
from .support.stream import Deltas, Result, check_invariants, folded, random_chunks, result_of
from .support.tokenizers import real_token_chunkings
from .support.wires import ALL_WIRES, Wire

WIRES = ALL_WIRES
A = '{"city": "Paris", "days": 3}'
# Pythonic names a call only at its ")": one cut inside a later call keeps its own reason.
CUT_REASONS = (TRUNCATED_HEAD, TRUNCATED_ARGUMENTS, "cut off by the end of input")
HARMONY_MARKERS = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")


def feed(parser: Any, chunks: list[str], token_ids: list[list[int]] | None = None) -> tuple[Deltas, Deltas]:
    """The deltas of ``chunks`` before the end, and those of the end (an empty final chunk)."""
    before: Deltas = []
    for i, chunk in enumerate(chunks):
        before.extend(parser.stream_chunk(chunk, token_ids=token_ids[i] if token_ids else None))
    return before, parser.stream_chunk("", final=True)


def feed_final_last(parser: Any, chunks: list[str], token_ids: list[list[int]] | None = None) -> Deltas:
    """``chunks`` with ``final`` on the last one, as an engine sends its finish reason."""
    out: Deltas = []
    for i, chunk in enumerate(chunks):
        out.extend(parser.stream_chunk(chunk, token_ids=token_ids[i] if token_ids else None,
                                       final=i == len(chunks) - 1))
    return out


def dropped_markup(parser: Any) -> list[str]:
    return [d.text for d in parser.dropped if d.text]


class Cuts:
    """One wire's reply ``lead + block`` and the checks every cut of it must pass."""

    def __init__(self, wire: Wire, lead: str, block: str) -> None:
        self.wire, self.lead, self.reply = wire, lead, lead + block
        self.block_at = len(lead)
        self.full = self.complete(self.reply)
        content, reasoning, calls = self.full
        assert calls and calls[-1][0] == "get_weather", self.full  # the uncut reply holds the call
        self.full_args = calls[-1][1]

    def parser(self) -> Any:
        return self.wire.parser(self.wire.request())

    def complete(self, text: str) -> Result:
        return result_of(self.parser().parse_complete(text))

    def positions(self) -> range:
        """Every cut from the end of the open tag on (a cut inside it leaves a partial
        marker, which stays text: ``test_prose_and_partial_markers_stay_text``)."""
        return range(self.block_at + len(self.wire.open or self.wire.head), len(self.reply) + 1)

    def check(self, cut: str) -> None:
        """One cut, complete and one character per chunk (its streamed part checked apart)."""
        reference = self.complete(cut)
        content, reasoning, calls = reference
        assert (content, reasoning) == self.full[:2], f"{cut!r}: markup reached the text: {reference}"
        parser = self.parser()
        before, end = feed(parser, list(cut))
        deltas = before + end
        assert folded(deltas) == reference, f"{cut!r}: the stream and the complete parse differ"
        check_invariants(deltas, cut, dropped_markup(parser))
        streamed = folded(before)[2]
        if streamed:  # a call whose name streamed keeps it, and what streamed of its arguments
            (name, args), = streamed[-1:]
            assert name == "get_weather" and calls and calls[-1][0] == name, (cut, reference)
            assert self.full_args.startswith(args), f"{cut!r}: streamed {args!r}, not a prefix of {self.full_args!r}"
            assert calls[-1][1].startswith(args), f"{cut!r}: the end rewrote {args!r} as {calls[-1][1]!r}"
        self.check_dropped(cut, parser, calls)

    def check_dropped(self, cut: str, parser: Any, calls: list[Any]) -> None:
        if calls and calls[-1][0] == "get_weather":
            # Its arguments end closed as a JSON object (issue 23, rule 6); what was held back
            # unwritten (a key, a scalar cut short) is the call's markup, cut off at the end.
            assert isinstance(json.loads(calls[-1][1], strict=False), dict), (cut, calls[-1])
            assert all(d.reason == TRUNCATED_ARGUMENTS and (d.text is None or cut.endswith(d.text))
                       for d in parser.dropped), (cut, parser.dropped)
        else:
            assert [(d.reason, d.text) for d in parser.dropped] == [(TRUNCATED_HEAD, cut[self.block_at :])], cut

    def check_chunked(self, chunks: list[str], token_ids: list[list[int]] | None = None) -> None:
        cut = "".join(chunks)
        parser = self.parser()
        deltas = feed_final_last(parser, chunks, token_ids)
        assert folded(deltas) == self.complete(cut), f"{chunks!r}: the stream and the complete parse differ"
        check_invariants(deltas, cut, dropped_markup(parser))
        self.check_dropped(cut, parser, folded(deltas)[2])


def one_call(w: Wire) -> Cuts:
    lead = w.plain + "ok "
    return Cuts(w, lead, w.call("get_weather", A))


def nested_in_reasoning(w: Wire) -> Cuts:
    lead = w.think_open + "hm "
    return Cuts(w, lead, w.call("get_weather", A))


def layouts() -> list[Any]:
    found = [pytest.param(w, one_call, id=f"{w.id}-after-content") for w in WIRES]
    found += [pytest.param(w, nested_in_reasoning, id=f"{w.id}-inside-reasoning")
              for w in WIRES if w.reasoning_parser is not None]
    return found


@pytest.mark.parametrize("wire,layout", layouts())
def test_a_reply_cut_anywhere_in_a_block_leaks_no_markup(wire: Wire, layout: Any) -> None:
    cuts = layout(wire)
    for at in cuts.positions():
        cuts.check(cuts.reply[:at])


@pytest.mark.parametrize("wire", WIRES, ids=[w.id for w in WIRES])
def test_cuts_under_random_chunkings(wire: Wire) -> None:
    cuts = one_call(wire)
    for at in cuts.positions():
        cut = cuts.reply[:at]
        cuts.check_chunked(random_chunks(cut, random.Random(at), 6))


@pytest.mark.parametrize("wire", [w for w in WIRES if w.tokenizers], ids=[w.id for w in WIRES if w.tokenizers])
def test_cuts_at_every_real_token_boundary(wire: Wire) -> None:
    """A length cut falls on a token boundary: the reply's first k tokens, with their ids."""
    cuts = one_call(wire)
    runs = real_token_chunkings(cuts.reply, wire.tokenizers)
    if not runs:
        pytest.skip(f"{wire.id}: no tokenizer test data")
    for chunks in runs.values():
        ids = chunks.token_ids  # type: ignore[attr-defined]
        for k in range(1, len(chunks) + 1):
            if len("".join(chunks[:k])) >= cuts.block_at + len(wire.open):
                cuts.check_chunked(list(chunks[:k]), ids[:k])


@pytest.mark.parametrize("wire", WIRES, ids=[w.id for w in WIRES])
def test_a_second_call_cut_off_keeps_the_first(wire: Wire) -> None:
    lead = wire.plain + "ok "
    reply = lead + wire.calls(("f", "{}"), ("get_weather", A))
    # From where the first call is complete for good (in one JSON array of calls, a cut just
    # after its "parameters" key gives {} and one character later a truncated "{").
    first_done = len(reply)
    while result_of(wire.parser(wire.request()).parse_complete(reply[:first_done - 1]))[2][:1] == [("f", "{}")]:
        first_done -= 1
    # From where the first call is complete, or past the second block's open tag if it has
    # one (a partial marker at the end stays text: test_prose_and_partial_markers_stay_text).
    for at in range(max(first_done, reply.rindex(wire.open) + len(wire.open)), len(reply) + 1):
        cut = reply[:at]
        parser = wire.parser(wire.request())
        deltas = feed_final_last(parser, list(cut))
        content, reasoning, calls = folded(deltas)
        assert (content, reasoning) == ("ok ", None) or (content, reasoning) == (None, "ok "), (cut, content)
        assert calls[0] == ("f", "{}") and len(calls) <= 2, (cut, calls)
        assert folded(deltas) == result_of(wire.parser(wire.request()).parse_complete(cut))
        check_invariants(deltas, cut, dropped_markup(parser))
        assert all(d.reason in CUT_REASONS and (d.text is None or cut.endswith(d.text)) for d in parser.dropped), (
            cut, parser.dropped)


def partial_text_end(w: Wire) -> int:
    """How much of the open tag a reply may end with and still be text: all but its last
    character (a partial marker at the end is released as text; see test_robustness_rules)."""
    return len(w.open.rstrip()) - 1


def prose_cases(w: Wire) -> list[str]:
    tag = w.open.rstrip()  # the marker itself (Qwen's open is written with its newline)
    return [
        f"See the {tag} tag.",
        f"use {tag} tags",
        f"ok {tag[:partial_text_end(w)]}",  # a partial marker at the very end: could be prose (HTML, say)
        f"ok {tag[: min(len(tag) // 2, partial_text_end(w))]}",
    ]


@pytest.mark.parametrize("wire", WIRES, ids=[w.id for w in WIRES])
def test_prose_and_partial_markers_stay_text(wire: Wire) -> None:
    for prose in prose_cases(wire):
        text = wire.plain + prose
        parser = wire.parser(wire.request())
        message = parser.parse_complete(text)
        text_channel = message.content if message.content is not None else message.reasoning_content
        assert (text_channel, message.tool_calls, parser.dropped) == (prose, [], []), text
        wire.check(text, None)  # every chunking agrees


# ---- Harmony -----------------------------------------------------------------------------------

HARMONY_REPLY = HarmonyResponseParser.render(reasoning="Let me think.", calls=[("get_weather", A)],
                                             content="It is sunny.")
HARMONY_REQUEST = {"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]}


def harmony_parser() -> HarmonyResponseParser:
    return create_parser(response_parser="gpt-oss", request=HARMONY_REQUEST)  # type: ignore[return-value]


def strip_partial_marker(text: str | None) -> str:
    """A text channel without a partial marker the cut left at its very end (text, as in prose)."""
    if not text:
        return ""
    for size in range(min(len(text), 12), 0, -1):
        if any(m.startswith(text[-size:]) and len(m) > size for m in HARMONY_MARKERS):
            return text[:-size]
    return text


def check_harmony_cut(cut: Result, dropped: list[Any], full: Result, where: str) -> None:
    content, reasoning, calls = cut
    for got, whole in ((content, full[0]), (reasoning, full[1])):
        kept = strip_partial_marker(got)
        assert whole.startswith(kept) and "<|" not in kept, f"{where}: header or marker text {got!r}"
    for name, args in calls:  # a call whose header completed keeps what streamed of its body
        # (closed as a JSON object: what streamed, then the closers it owed; issue 23, rule 6)
        assert name == "get_weather" and isinstance(json.loads(args), dict), (where, calls)
        assert full[2][0][1].startswith(args.rstrip('"}]')) or args == "{}", (where, calls)
    assert all(d.reason == TRUNCATED_HEADER and d.text or d.reason in (TRUNCATED_ARGUMENTS, MALFORMED_ARGUMENTS)
               for d in dropped), (where, dropped)


def test_harmony_cut_at_every_character_never_shows_a_header() -> None:
    full = result_of(harmony_parser().parse_complete(HARMONY_REPLY))
    assert full == ("It is sunny.", "Let me think.", [("get_weather", A)])
    headers_cut = 0
    for at in range(len(HARMONY_REPLY) + 1):
        cut = HARMONY_REPLY[:at]
        parser = harmony_parser()
        reference = result_of(parser.parse_complete(cut))
        check_harmony_cut(reference, parser.dropped, full, repr(cut))
        headers_cut += bool(parser.dropped)
        chars = harmony_parser()
        deltas = feed_final_last(chars, list(cut)) if cut else chars.stream_chunk("", final=True)
        assert folded(deltas) == reference, repr(cut)
        check_invariants(deltas, cut, dropped_markup(chars))
    assert headers_cut > 40  # the three headers, cut at each of their characters


@pytest.fixture(scope="module")
def encoding() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_ENCODINGS_BASE", str(harmony_vocab_dir()))
        yield load_encoding()


def test_harmony_cut_at_every_token_never_shows_a_header(encoding: Any) -> None:
    ids, texts = token_stream(encoding, HARMONY_REPLY)
    full = result_of(harmony_parser().parse_complete(HARMONY_REPLY))
    for k in range(1, len(ids) + 1):
        parser = HarmonyResponseParser(harmony_parser().request, tokenizer=encoding)
        deltas = feed_final_last(parser, texts[:k], [[i] for i in ids[:k]])
        got = folded(deltas)
        where = repr(texts[:k])
        check_harmony_cut(got, parser.dropped, full, where)
        text_path = harmony_parser()
        assert result_of(text_path.parse_complete("".join(texts[:k]))) == got, where  # both paths agree
        assert [d.text for d in text_path.dropped] == [d.text for d in parser.dropped], where
