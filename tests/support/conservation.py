"""Conservation: every input character of a reply ends in exactly one place.

That place is content, reasoning, a call's name or arguments, or recognised syntax
(markers, envelopes, separators, dropped blocks).  ``check_conservation`` maps the stream
onto the input with one pointer for the whole stream, so a character emitted twice,
invented, reordered or lost inside a value fails; what the stream left unmatched must look
like syntax (hold a markup character, or be whitespace), so prose lost between markers
fails too.  Prose punctuation lost right beside a marker (``,`` of ``Hello, world``) is
the blind spot: it counts as markup.

Arguments forwarded as written (JSON dialects) are matched like text.  Converted ones
(XML-like values, Python literals, DSML's ``string="true"``) are not the input's text:
each key, string value, boolean and null of the decoded object must be found in one of
its spellings after the call began, and the stretch from the call's start to the next
matched piece counts as that call's syntax.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from lmparse.messages import DeltaMessage

Deltas = Sequence[tuple[DeltaMessage, bool]]
Segment = tuple[object, str]  # ("content" | "reasoning" | call index, text)

MARKUP = frozenset("<>[]{}()|｜`\"'\\=:,;")  # a syntax run holds one of these
ESCAPED = frozenset("\\\"'\n\t")  # characters a wire may write as escapes
_OPENERS = frozenset("<[{(")  # a dropped block starts with one of these
SEARCH_BUDGET = 20000  # finds one spelling search may spend before falling back


def check_conservation(text: str, deltas: Deltas, dropped: Sequence[str] = ()) -> None:
    """See the module docstring; raises AssertionError naming the first fault.

    ``dropped`` are the texts the parser's ``dropped`` records keep (markup cut off by the
    end of the reply, so found from the end): each must be a stretch of the input, in order,
    that the stream left unaccounted; it is then accounted as syntax."""
    taken: list[int] = []  # input positions the stream accounts for
    converted: list[int] = []  # input positions that are a converted call's syntax
    pos, converted_from = 0, None
    segments = _segments(deltas)
    for i, (key, piece) in enumerate(segments):
        before, was_converted = len(taken), False
        if isinstance(key, int):
            name, arguments = piece.split("\0", 1)
            following = next((p.split("\0", 1)[0] for k, p in segments[i + 1:] if isinstance(k, int)), None)
            first, end, was_converted = _take_call(text, key, name, arguments, pos, taken, following)
        else:
            end = _take(text, piece, pos, taken)
            assert end >= 0, f"{key} {piece!r} is not in the input, in order, after {pos}"
            first = taken[before] if len(taken) > before else end
        if converted_from is not None:  # the converted call's syntax ends where this piece starts
            converted.extend(range(converted_from, first))
            converted_from = None
        if was_converted:
            converted_from = pos
        pos = max(pos, end)
    if converted_from is not None:
        converted.extend(range(converted_from, len(text)))
    assert len(taken) == len(set(taken)), "an input character was emitted twice"
    emitted = set(taken)
    accounted = emitted | set(converted)
    _take_dropped(text, dropped, emitted, accounted, [p for k, p in segments if not isinstance(k, int)])
    for run in _unaccounted(text, accounted):
        assert _is_syntax(run), f"input {run!r} ended in no channel and is not syntax"


def _take_dropped(text: str, dropped: Sequence[str], emitted: set[int], accounted: set[int],
                  texts: Sequence[str]) -> None:
    """Each dropped markup is a stretch no channel emitted (a converted call's syntax, which
    the checker only presumes, may hold it), in order from the end; it is then accounted.
    Where the stream's spelling took a character of such a stretch (a content ``\n`` found
    sooner than its own), the weaker check: no character is in the text channels (``texts``)
    and the dropped markup more often than in the input."""
    end = len(text)
    for markup in reversed(dropped):
        found = text.rfind(markup, 0, end)
        while found >= 0 and not emitted.isdisjoint(range(found, found + len(markup))):
            found = text.rfind(markup, 0, found + len(markup) - 1)
        if found < 0:
            assert markup in text, f"dropped markup {markup!r} is not a stretch of the input"
            have = Counter(text)
            have.subtract(Counter("".join((*texts, *dropped))))
            twice = sorted(c for c, n in have.items() if n < 0)
            assert not twice, f"dropped markup {markup!r}: {twice!r} in the text channels and dropped more often than in the input"
            return
        emitted.update(range(found, found + len(markup)))
        accounted.update(range(found, found + len(markup)))
        end = found


def _segments(deltas: Deltas) -> list[Segment]:
    """The stream as runs of one channel; a call's text is its name, a NUL, its arguments."""
    runs: list[tuple[object, list[str]]] = []
    for delta, _ in deltas:
        for tc in delta.tool_calls or ():
            if not runs or runs[-1][0] != tc.index:
                runs.append((tc.index, [(tc.function and tc.function.name) or "", "\0"]))
            runs[-1][1].append((tc.function and tc.function.arguments) or "")
        for key, piece in (("content", delta.content), ("reasoning", delta.reasoning_content)):
            if piece is not None:
                if not runs or runs[-1][0] != key:
                    runs.append((key, []))
                runs[-1][1].append(piece)
    return [(key, "".join(parts)) for key, parts in runs]


def _unaccounted(text: str, accounted: set[int]) -> Iterable[str]:
    start = None
    for i in range(len(text) + 1):
        if i < len(text) and i not in accounted:
            start = i if start is None else start
        elif start is not None:
            yield text[start:i]
            start = None


def _is_syntax(run: str) -> bool:
    return not run or run.isspace() or not MARKUP.isdisjoint(run)


def _is_block(run: str) -> bool:
    """What a text piece may skip inside itself: a separator, or a dropped block (which
    starts with its open marker's markup)."""
    return not run or run[0].isspace() or run[0] in MARKUP


# ---- spelling a piece with runs of the input -------------------------------------------------

def _runs(text: str, piece: str, pos: int, first: bool, budget: list[int],
          failed: set[tuple[int, int]] | None = None) -> list[tuple[int, int]] | None:
    """``piece`` spelled by runs ``(at, size)`` of ``text`` in order from ``pos``, longest
    runs first, such that what lies between two runs is a separator or a whole dropped
    block: a piece that spans a filtered call is split where the call was.  None if there
    is no such spelling (or the search ran out of ``budget``).  ``failed`` remembers the
    (rest of the piece, position) pairs that have no spelling, so none is searched twice."""
    if not piece:
        return []
    failed = set() if failed is None else failed
    if (len(piece), pos) in failed:
        return None
    for size in range(len(piece), 0, -1):
        at = text.find(piece[:size], pos)
        while at >= 0:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if first or (at > pos and _is_block(text[pos:at])):  # an empty gap: one longer run
                rest = _runs(text, piece[size:], at + size, False, budget, failed)
                if rest is not None:
                    return [(at, size), *rest]
                if budget[0] < 0:
                    return None
            at = text.find(piece[:size], at + 1)
    failed.add((len(piece), pos))
    return None


_TAG = re.compile(r"</?\|?[A-Za-z_][\w:.\-]*\|?>")  # a marker spelled as a tag: <think>, <|inner_prefix|>


def _inside_tag(text: str, at: int, size: int) -> bool:
    """Whether ``text[at:at + size]`` lies strictly inside a tag-like marker (not its brackets)."""
    lt = text.rfind("<", max(0, at - 64), at + 1)
    if lt < 0 or lt == at:
        return False
    tag = _TAG.match(text, lt)
    return tag is not None and at + size < tag.end()


def _find_outside_tags(text: str, piece: str, start: int) -> int:
    """The first occurrence of ``piece`` from ``start`` that is not inside a tag-like marker
    (a one-letter reasoning ``r`` after ``<|inner_prefix|>``), else the first one."""
    first = at = text.find(piece, start)
    while at >= 0 and _inside_tag(text, at, len(piece)):
        at = text.find(piece, at + 1)
    return at if at >= 0 else first


def _take(text: str, piece: str, start: int, taken: list[int]) -> int:
    """Match ``piece`` in ``text`` from ``start`` (as runs with separators or dropped blocks
    between them, the earliest ending first, else as any subsequence); record the
    positions; return the end, or -1."""
    whole = _find_outside_tags(text, piece, start)
    runs = [(whole, len(piece))] if whole >= 0 else _runs(text, piece, start, True, [SEARCH_BUDGET])
    for _ in range(8):  # a spelling split around a dropped block may end sooner:
        # ``assista<|return|>nt`` before the ``assistant`` of a later header
        if not runs:
            break
        sooner = _runs(text[: runs[-1][0] + runs[-1][1] - 1], piece, start, True, [200])
        if sooner is None or len(sooner) > 3:  # a split around one or two blocks; more is a scattered
            break  # spelling (``<|`` of ``<|"|>``, ``tool_call`` of ``<tool_call|>``, …) that only looks sooner
        if any(_inside_tag(text, at, size) for at, size in sooner):
            break  # the ``r`` of ``<|inner_prefix|>`` is not a reasoning ``r`` written after it
        if any(text[at + size] not in _OPENERS for (at, size), _ in zip(sooner, sooner[1:], strict=False)):
            # split around a separator or inside a marker, not before a dropped block:
            # ``<param`` + ``ame="`` of ``<param name="``, ``</｜DSML`` + ``｜invoke>`` …
            break
        runs = sooner
    if runs is None:  # the leftover check judges what this skips
        runs, pos = [], start
        for ch in piece:
            at = text.find(ch, pos)
            if at < 0:
                return -1
            runs.append((at, 1))
            pos = at + 1
    for at, size in runs:
        taken.extend(range(at, at + size))
    return runs[-1][0] + runs[-1][1] if runs else start


# ---- calls ---------------------------------------------------------------------------------

def _take_call(text: str, index: int, name: str, arguments: str, pos: int, taken: list[int],
               following: str | None = None) -> tuple[int, int, bool]:
    """Account call ``index``; return where its name starts, where what it matched ends,
    and whether its arguments were converted.  Arguments forwarded as written are looked for
    before the ``following`` call's name: a converted ``{"A": null}`` is not the same text
    inside a later call's value."""
    name_at, written = _find_name(text, name, pos)
    assert name_at >= 0, f"call {index}'s name {name!r} is not in the input after {pos}"
    taken.extend(range(name_at, name_at + len(written)))
    after_name = name_at + len(written)  # arguments follow the name, unless written first
    limit = _find_name(text, following, after_name)[0] if following else -1
    verbatim_at = text.find(arguments, after_name)
    written = arguments.rstrip('"}]')  # arguments broken off and closed as JSON: what was written
    written_at = text.find(written, after_name) if len(written) > 1 and written != arguments else -1
    if 0 <= written_at and (verbatim_at < 0 or written_at < verbatim_at) and (limit < 0 or written_at < limit):
        return name_at, max(_take(text, written, after_name, taken), after_name), False
    if verbatim_at >= 0 and (limit < 0 or verbatim_at < limit):
        # Written before the next call's name: this call's, whole, even when that name also
        # occurs inside it (``f[ARGS]{"a": 1}`` before a call named ``a``).
        start, limit = after_name, -1
    elif _is_json(arguments):  # converted or double-encoded: looked for from the call's start
        start = pos
    else:  # cut short or broken: after the name if it can be spelled there
        start = after_name if _runs(text, arguments, after_name, True, [200]) is not None else pos
    end = _take_arguments(text, arguments, start, taken, limit if limit >= 0 else len(text))
    return name_at, max(end, after_name), end < 0


def _is_json(source: str) -> bool:
    try:
        json.loads(source)
    except ValueError:
        return False
    return True


def _find_name(text: str, name: str, start: int) -> tuple[int, str]:
    """Where a call's name is written after ``start``, and how: a whole word if it can be
    (``f`` is not the ``f`` of ``<function=``), else anywhere; as is, or JSON-escaped."""
    forms = dict.fromkeys((name, json.dumps(name)[1:-1], json.dumps(name, ensure_ascii=False)[1:-1], _attribute(name)))
    for pattern in (r"(?<!\w){}(?!\w)", "{}"):
        found = [(m.start(), written) for written in forms
                 if (m := re.compile(pattern.format(re.escape(written))).search(text, start))]
        if found:
            return min(found)
    return -1, name


def _take_arguments(text: str, arguments: str, start: int, taken: list[int], stop: int) -> int:
    """Arguments forwarded as written (or double-encoded and unwrapped, or cut short and
    closed at the end) are matched as text, if written before ``stop``: return their end.
    Converted ones are checked leaf by leaf: return -1."""
    if arguments == "{}":
        return start  # nothing to account (and "{}" may stand for no arguments field at all)
    if arguments in text[start:stop]:
        return _take(text, arguments, start, taken)
    written = arguments.rstrip('"}]')  # broken off and closed as JSON (issue 23, rule 6): what streamed
    if written != arguments and len(written) > 1 and written in text[start:stop]:
        return _take(text, written, start, taken)
    try:
        value = json.loads(arguments, object_pairs_hook=list)
    except ValueError:
        prefix = arguments.removesuffix("}")
        value = None if prefix in text[start:] else _closed(arguments)
        if value is None:
            return _take(text, prefix, start, taken)  # cut short; final may close it
        # A converted call that broke off mid-value: its leaves so far are checked as below.
    if json.dumps(arguments, ensure_ascii=False)[1:-1] in text[start:stop]:
        return _take(text, arguments, start, taken)
    for spellings in _leaves(value):
        # A string with characters the wire escapes need only appear in order.
        found = [s for s in spellings if s in text[start:] or (ESCAPED.intersection(s) and _take(text, s, start, []) >= 0)]
        assert found or not spellings[0].isprintable(), (
            f"argument leaf {spellings[0]!r} of {arguments!r} is not in the input after {start}")
    return -1


def _closed(source: str) -> object:
    """Converted arguments that broke off (``{"c": ``) closed into JSON without adding a
    leaf (a dangling key is dropped), decoded as pairs; None if that does not decode."""
    body = re.sub(r'(?:,\s*|\{\s*)?"(?:[^"\\]|\\.)*"\s*:\s*$', lambda m: m.group()[:1] if m.group()[:1] == "{" else "",
                  source.rstrip())
    closers, in_string, escaped = [], False, False
    for ch in body:
        if in_string:
            in_string = not (ch == '"' and not escaped)
            escaped = ch == "\\" and not escaped
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
    try:
        return json.loads(body + ('"' if in_string else "") + "".join(reversed(closers)), object_pairs_hook=list)
    except ValueError:
        return None


def _attribute(text: str) -> str:
    """``text`` as an escaped attribute value (Kimi-K3 writes names and keys so)."""
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _leaves(value: object) -> Iterable[tuple[str, ...]]:
    """The spellings each key and leaf of a decoded arguments object may have had on the wire.
    Numbers are not tracked (a converted value may be re-spelled: ``1.5e3`` -> 1500.0)."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        for k, v in value:  # an object, decoded as pairs so duplicate keys keep their order
            yield (k, _attribute(k))
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, str):
        yield (value,)
    elif isinstance(value, bool):
        yield (json.dumps(value), repr(value))
    elif value is None:
        yield ("null", "None")
