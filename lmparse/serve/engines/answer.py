"""What the simulated model says: a deterministic decision from the conversation.

The rules (documented for users of ``lmparse serve``):

* ``tool_choice`` names a tool -> call it; ``required`` -> call the tools the last user
  message names, or the first tool when it names none.
* After tool results (the conversation ends with tool messages) -> a text answer that
  quotes them.
* ``auto`` -> call every offered tool whose name appears in the last user message, in
  the order they appear (two names, two calls); otherwise answer with text.
* Arguments come from the tool's JSON schema: ``key=value`` pairs in the user's message
  (``city=Paris``, ``days=3``, ``note="two words"``) fill properties of that name,
  converted to the declared type; required properties left over get an example value.
* A text answer quotes the user's words (whitespace runs as one space); ``repeat=N`` in
  the message quotes them N times over, up to 4 Mi characters: a long, streamed answer
  from a short request.  The quote is written as it streams, never held whole.
* With thinking on, the reply reasons first.  "while thinking" in the user's message
  puts the calls inside the reasoning (reasoning, calls, more reasoning).
* A reply that must be JSON (``response_format`` / Responses ``text.format`` / Anthropic
  ``output_config.format``) is a JSON object the schema accepts: the user's pairs, then
  an example for each required property.
* Only what the user wrote counts: text agent clients inject into user turns
  (``<system-reminder>`` blocks anywhere, a turn that is one ``<environment_context>``-like
  element, Codex's AGENTS.md turn) is context, not a request.  A user turn that holds
  nothing else does not end the tool loop: results before it are still answered.
* A user turn that is the client's own notice to the model (it opens with a label such as
  ``[SYSTEM]``, ``[TASK RESUMPTION]``, ``[ERROR]`` or ``SYSTEM NOTICE:``) is not the user's
  request either.  It is obeyed only once the request is done: after a text answer, the
  tools it names are called (Cline's ``[SYSTEM] ... call submit_and_exit`` ends its run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...request import Named
from ...schema import schema_type
from .base import GenerationRequest

__all__ = ["Reply", "Squeezed", "PIECE", "decide", "build_arguments", "client_notice", "user_pairs", "user_words"]

PIECE = 4096  # characters of reply text handed on at a time

# ``name=value`` pairs in the user's words.  A name starts at the first ASCII letter or "_"
# of a run of word characters, dots and hyphens.  The lookbehind lets a match start only
# where such a run starts, so a long word without "=" is read a bounded number of times
# (a plain ``[A-Za-z_][\w.-]*=`` retries from every character of it: quadratic).
_PAIR = re.compile(r"""(?<![\w.-])(?:[^\W_A-Za-z]|[.-])*([A-Za-z_][\w.-]*)=("([^"]*)"|'([^']*)'|[^\s,;]+)""")
# ``repeat=N`` in a message answered with text: the echo says the user's words N times over
# (a long answer from a short request; at most ``_MAX_ECHO`` characters of it).
_REPEAT = re.compile(r"(?<![\w.-])repeat=(\d{1,7})(?![\w.-])")
_MAX_ECHO = 1 << 22
_NESTED_HINT = re.compile(r"while thinking|inside (?:your |the )?reasoning", re.I)
_EXAMPLE_STRINGS = {"city": "Paris", "location": "Paris", "country": "France", "unit": "celsius",
                    "query": "lmparse", "timezone": "Europe/Paris", "language": "en"}


class Squeezed:
    """``" ".join(text.split())``, ``times`` times over with a space between, written a
    window at a time: an echo of the user's words costs no second copy of them (a 1 MB
    message is quoted in ``PIECE``-sized pieces)."""

    __slots__ = ("text", "times")

    def __init__(self, text: str, times: int = 1) -> None:
        self.text = text
        self.times = times

    def pieces(self, size: int = PIECE) -> Iterator[str]:
        for i in range(self.times):
            if i:
                yield " "
            yield from self._once(size)

    def _once(self, size: int) -> Iterator[str]:
        text, pos, wrote, gap = self.text, 0, False, False
        while pos < len(text):
            window = text[pos:pos + size]
            pos += size
            words = window.split()
            if words:
                # A word cut by the window edge goes on without a space; whitespace on
                # either side of the edge is one space.
                lead = " " if wrote and (gap or window[0].isspace()) else ""
                yield lead + " ".join(words)
                wrote, gap = True, window[-1].isspace()
            else:
                gap = True

    def __str__(self) -> str:
        return "".join(self.pieces())


ContentPart = str | Squeezed


class Reply:
    """The model's answer before rendering: channels in the order they are written.
    ``content`` may be given in parts (literal text and ``Squeezed`` echoes) that
    ``content_pieces`` writes out lazily; reading ``content`` joins them."""

    __slots__ = ("reasoning", "parts", "calls", "calls_in_reasoning", "reasoning_after")

    def __init__(self, reasoning: str | None = None, content: str | Sequence[ContentPart] | None = None,
                 calls: list[tuple[str, str]] | None = None, calls_in_reasoning: bool = False,
                 reasoning_after: str = "") -> None:
        self.reasoning = reasoning
        self.parts: tuple[ContentPart, ...] | None = (content,) if isinstance(content, str) else \
            None if content is None else tuple(content)
        self.calls = calls or []
        self.calls_in_reasoning = calls_in_reasoning
        self.reasoning_after = reasoning_after

    @property
    def content(self) -> str | None:
        return None if self.parts is None else "".join(map(str, self.parts))

    def content_pieces(self, size: int = PIECE) -> Iterator[str]:
        """The content in pieces of at most about ``size`` characters."""
        for part in self.parts or ():
            if isinstance(part, Squeezed):
                yield from part.pieces(size)
            else:
                yield from slices(part, size)

    def __repr__(self) -> str:
        return (f"Reply(reasoning={self.reasoning!r}, content={self.content!r}, calls={self.calls!r}, "
                f"in_reasoning={self.calls_in_reasoning})")


def slices(text: str, size: int = PIECE) -> Iterator[str]:
    """``text`` in consecutive slices of at most ``size`` characters."""
    for at in range(0, len(text), size):
        yield text[at:at + size]


def user_pairs(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(3) if m.group(3) is not None else m.group(4) if m.group(4) is not None
             else m.group(2)) for m in _PAIR.finditer(text)]


def _coerce(raw: str, schema: Any) -> Any:
    kind = schema_type(schema)
    text = raw.strip()
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "boolean" and text.lower() in ("true", "false", "yes", "no", "1", "0"):
            return text.lower() in ("true", "yes", "1")
        if kind == "array":
            items = schema.get("items") if isinstance(schema, dict) else None
            return [_coerce(part, items) for part in text.split(",") if part.strip()]
        if kind == "object":
            value = json.loads(text)
            if isinstance(value, dict):
                return value
        if kind == "null" and text.lower() in ("null", "none"):
            return None
    except (ValueError, TypeError):
        pass
    return raw


_MAX_DEPTH = 8  # a recursive $ref (a tree node holding nodes) ends in an empty object here


def _example(schema: Any, key: str, root: Any = None, depth: int = 0) -> Any:
    schema = _resolve(schema, root)
    if isinstance(schema, dict):
        for field in ("const", "default"):
            if field in schema:
                return schema[field]
        if schema.get("enum"):
            return schema["enum"][0]
    kind = schema_type(schema)
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return build_arguments(schema, [], root=root, depth=depth + 1)
    if kind == "null":
        return None
    return _EXAMPLE_STRINGS.get(key, f"example {key}")


def build_arguments(schema: Any, pairs: list[tuple[str, str]], root: Any = None, depth: int = 0) -> dict[str, Any]:
    """Arguments for a call: the user's pairs that the schema declares (all of them when it
    has no ``properties`` at all), then an example for each required property still missing."""
    if depth > _MAX_DEPTH:
        return {}
    schema = _resolve(schema, root) if isinstance(schema, dict) else {}
    declared = isinstance(schema.get("properties"), dict)
    props = schema["properties"] if declared else {}
    args: dict[str, Any] = {}
    for key, raw in pairs:
        if key in props or not declared:
            args[key] = _coerce(raw, _resolve(props.get(key), root))
    for key in schema.get("required") or ():
        if isinstance(key, str) and key not in args:
            args[key] = _example(props.get(key), key, root, depth)
    return args


def _text_of(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


_ANYWHERE = ("system-reminder",)  # blocks clients insert into any user text
_CONTEXT_TURNS = ("# AGENTS.md instructions for ",)  # Codex's project-instructions turn
_TAG_NAME = re.compile(r"<([A-Za-z_][\w-]{0,63})[\s>]")


def _without_blocks(text: str, tag: str) -> str:
    """``text`` without its ``<tag>...</tag>`` blocks (one pass: each find starts past the last)."""
    opener, closer = f"<{tag}>", f"</{tag}>"
    start = text.find(opener)
    if start < 0:
        return text
    kept, pos = [], 0
    while start >= 0:
        end = text.find(closer, start + len(opener))
        if end < 0:
            break
        kept.append(text[pos:start])
        pos = end + len(closer)
        start = text.find(opener, pos)
    kept.append(text[pos:])
    return "".join(kept)


def user_words(text: str) -> str:
    """What the user wrote in a user turn, without the context a client injected."""
    for tag in _ANYWHERE:
        text = _without_blocks(text, tag)
    stripped = text.strip()
    if stripped.startswith(_CONTEXT_TURNS):
        return ""
    m = _TAG_NAME.match(stripped)
    if m and stripped.endswith(f"</{m.group(1)}>"):
        return ""  # the whole turn is one element: <environment_context>...</environment_context>
    return stripped


# A client's notice to the model sent as a user turn opens with a label: bracketed in any case
# (``[SYSTEM]``, ``[Task Resumption]``), or upper case before a colon (``SYSTEM NOTICE:``), one of
# whose words says it is a notice.  A request that merely starts with brackets (``[draft] ...``)
# or a word and a colon (``Note: ...``) is the user's.
_NOTICE_LABEL = re.compile(r"\s*(?:\[([A-Za-z][A-Za-z _-]{0,39})\]|([A-Z][A-Z _-]{0,39}):)")
_NOTICE_WORDS = frozenset({"system", "notice", "note", "reminder", "instruction", "instructions", "error",
                           "warning", "automated", "resumption", "harness"})
_LABEL_WORD = re.compile(r"[A-Za-z]+")


def client_notice(text: str) -> bool:
    """Whether a user turn is a notice the client wrote to the model, not the user's request."""
    m = _NOTICE_LABEL.match(text)
    if m is None:
        return False
    label = m.group(1) if m.group(1) is not None else m.group(2)
    return any(word.lower() in _NOTICE_WORDS for word in _LABEL_WORD.findall(label))


def _resolve(schema: Any, root: Any) -> Any:
    """A local ``$ref`` (``#/$defs/Name``) followed, once per level."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for key in schema["$ref"][2:].split("/"):
            target = target.get(key) if isinstance(target, dict) else None
        return target if isinstance(target, dict) else {}
    if isinstance(schema, dict) and "type" not in schema:
        for key in ("anyOf", "oneOf", "allOf"):
            options = [o for o in schema.get(key) or () if not (isinstance(o, dict) and o.get("type") == "null")]
            if options:
                return _resolve(options[0], root)
    return schema


def json_reply(response_format: dict, pairs: list[tuple[str, str]]) -> str:
    """A JSON object for ``response_format`` (json_schema: one the schema accepts)."""
    schema = response_format.get("schema") if response_format.get("type") == "json_schema" else None
    if not isinstance(schema, dict):
        return json.dumps({"answer": "lmparse's simulated model answers in JSON."})
    return json.dumps(build_arguments(schema, pairs, root=schema), ensure_ascii=False)


_WORD_RUN = re.compile(r"(?<![\w.-])[\w.-]+")
_NAME_CHARS = re.compile(r"[\w.-]+")
_SEARCHED_ONE_BY_ONE = 8  # up to this many names, one C-level regex search each is fastest


def _named_tools(text: str, names: list[str]) -> list[str]:
    """The names that appear in ``text`` as words of their own, in order of first appearance.

    A name counts where a run of word characters, dots and hyphens starts with it and it
    is followed by the run's end or a dot.  A few names are searched for one by one; more
    are looked up in one pass over the runs (each run's candidate prefixes, only of the
    names' lengths, in a set), so many tools and a long message cost their sum, not their
    product."""
    few = len(names) <= _SEARCHED_ONE_BY_ONE
    wanted = set() if few else {n for n in names if _NAME_CHARS.fullmatch(n)}
    first = {n: m.start() for n in names if n not in wanted
             for m in [re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text)] if m}
    lengths = {len(n) for n in wanted}
    longest = max(lengths, default=0)
    for run in _WORD_RUN.finditer(text):
        if not wanted:
            break
        start, stop = run.span()
        ends = [stop - start] if stop - start in lengths else []
        dot = text.find(".", start, min(stop, start + longest + 1))
        while dot >= 0:
            if dot - start in lengths:
                ends.append(dot - start)
            dot = text.find(".", dot + 1, min(stop, start + longest + 1))
        for end in ends:
            word = text[start:start + end]
            if word in wanted:
                wanted.discard(word)
                first[word] = start
    return [name for _, name in sorted((at, name) for name, at in first.items())]


def _tool_results(messages: list[dict]) -> list[tuple[str, str]]:
    """``(tool name, content)`` of the tool messages that end the conversation."""
    names = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            names[call.get("id")] = call["function"]["name"]
    results = []
    for m in reversed(messages):
        if m["role"] != "tool":
            break
        results.append((names.get(m.get("tool_call_id"), "the tool"), _text_of(m)))
    return results[::-1]


def _conversation(messages: list[dict]) -> tuple[str, list[dict], str]:
    """The last thing the user wrote; the turns without system turns and user turns that
    hold only injected context or a client's notice; and the notices after the last of
    those turns."""
    turns, said, notices = [], "", []
    for m in messages:
        role = m["role"]
        if role == "system":
            continue
        if role == "user":
            words = user_words(_text_of(m))
            if not words:
                continue
            if client_notice(words):
                notices.append(words)
                continue
            said = words
        turns.append(m)
        notices = []
    return said, turns, "\n".join(notices)


def _echo(text: str) -> Squeezed:
    """The user's words to quote, ``repeat=N`` times over (N from 1, the whole echo at most
    ``_MAX_ECHO`` characters)."""
    m = _REPEAT.search(text)
    times = max(1, int(m.group(1))) if m else 1
    return Squeezed(text, min(times, max(1, _MAX_ECHO // (len(text) + 1))))


def decide(request: GenerationRequest, thinking: bool, model: str) -> Reply:
    pr = request.parser_request
    user_text, turns, notice = _conversation(request.messages)
    results = _tool_results(turns)
    callable_names = [fn["name"] for fn in pr.callable_tools]
    # The request is done when a text answer follows it: a notice after that is what is asked.
    answered = bool(notice) and bool(turns) and turns[-1]["role"] == "assistant" and not turns[-1].get("tool_calls")
    asked = notice if answered else user_text
    named = _named_tools(asked, callable_names)
    choice = pr.choice
    if isinstance(choice, Named):
        names = [choice.name]
    elif choice.must_call and callable_names:
        names = named or callable_names[:1]
    elif results or choice.mode != "auto":
        names = []
    else:
        names = named
    if pr.max_calls is not None:
        names = names[:pr.max_calls]

    if names:
        pairs = user_pairs(asked)
        calls = [(n, json.dumps(build_arguments(pr.schema_for(n), pairs), ensure_ascii=False)) for n in names]
        listed = " and ".join(names)
        if thinking and _NESTED_HINT.search(asked):
            return Reply(f"Let me call {listed} while I think.\n", calls=calls, calls_in_reasoning=True,
                         reasoning_after="\nThe call is on its way; that settles it.")
        it = "them" if len(names) > 1 else "it"
        reasoning = f"The user wants {listed}; I will call {it} with the arguments they gave." if thinking else None
        return Reply(reasoning, calls=calls)

    content: str | tuple[ContentPart, ...]
    if results:
        quoted = "; ".join(f"{name} returned {content!r}" for name, content in results)
        content = f"Here is what I found: {quoted}."
        reasoning = "The tool results are in; I will report them." if thinking else None
    elif request.response_format is not None:
        content = json_reply(request.response_format, user_pairs(user_text))
        reasoning = "The answer must be JSON; I will fill in what the user gave." if thinking else None
    else:
        # The echo is written lazily (``Squeezed``): a long message streams back in bounded pieces.
        content = ('You said: "', _echo(user_text), f'". I am lmparse\'s simulated {model} model: name one '
                   "of the offered tools in your message and I will call it.") if user_text else \
            f"Hello! I am lmparse's simulated {model} model."
        reasoning = "No tool is needed here; I will answer directly." if thinking else None
    return Reply(reasoning, content=content)
