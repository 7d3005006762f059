"""Reading a Hugging Face ``response_template`` (transformers 5.x) into the markers lmparse routes.

A template is a dict (given as is, as a JSON file, or under ``response_template`` in a model
directory's ``tokenizer_config.json``) with ``version``, ``defaults``, ``fields`` and one start
anchor; each field has an opener, a closer and a content type (PROTOCOLS.md, "HF
``response_template``").  lmparse does not run the template's regexes over the reply: it reads
each opener and closer into ``Part``s (literal text, optional whitespace, a named capture) and
hands the literals to the router and the tool machinery, which stream.  A pattern outside that
shape (a free ``.*``, a character class outside a capture, a lookaround) is refused here, at
configuration time, with the offending pattern named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["Part", "FieldSpec", "TemplateSpec", "read_template", "pattern_parts"]

TEMPLATE_KEYS = frozenset(("version", "defaults", "fields", "start_anchor", "start_anchor_pattern"))
FIELD_KEYS = frozenset(("open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats",
                        "join", "optional", "transform", "transform_each"))
CONTENT_TYPES = frozenset(("text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list"))
_SPECIAL = set(".^$*+?{}[]|()")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_WHITESPACE_CLASSES = ("\\s*", "\\s+", "\\n*", "\\n+", "\\n?", "\\s?", " *", " ?")


class Part(NamedTuple):
    """One piece of an opener or closer: ``kind`` is ``"text"`` (``value`` literal), ``"space"``
    (optional whitespace) or ``"capture"`` (``name`` = the group's name, ``value`` = its body)."""

    kind: str
    value: str = ""
    name: str = ""


def _captures(alternatives: tuple[tuple[Part, ...], ...]) -> bool:
    return any(p.kind == "capture" for parts in alternatives for p in parts)


class FieldSpec(NamedTuple):
    name: str
    opens: tuple[tuple[Part, ...], ...]  # one part sequence per alternative; () for the implicit field
    closes: tuple[tuple[Part, ...], ...]
    content: str
    content_args: dict[str, Any]
    transform: Any
    join: Any = None  # checked (it needs ``repeats``), and refused by the Beam rules on text fields
    repeats: bool = False  # the region may occur more than once (HF keeps every match, in a list)

    @property
    def implicit(self) -> bool:
        return not self.opens


class TemplateSpec(NamedTuple):
    fields: dict[str, FieldSpec]
    source: str  # where it came from, for messages
    anchors: tuple[str, ...] = ()  # the start anchors, literal: the prompt is read after the last one
    default_keys: tuple[str, ...] = ()  # the keys of ``defaults`` (HF fills missing fields with them)

    def field(self, *names: str) -> FieldSpec | None:
        return next((self.fields[n] for n in names if n in self.fields), None)


def read_template(source: Any) -> TemplateSpec:
    """A validated template from a dict, a JSON file, or a model directory (``ValueError`` names the fault)."""
    where = "the response_template"
    if isinstance(source, (str, Path)):
        where = str(source)
        source = _load_file(Path(source))
    if not isinstance(source, dict):
        raise ValueError(f"{where}: a response_template is a JSON object, not {type(source).__name__}")
    unknown = set(source) - TEMPLATE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; valid: {sorted(TEMPLATE_KEYS)}")
    if source.get("version", 1) != 1:
        raise ValueError(f"{where}: version {source.get('version')!r} is not supported (only 1)")
    if (source.get("start_anchor") is None) == (source.get("start_anchor_pattern") is None):
        raise ValueError(f"{where}: exactly one of start_anchor / start_anchor_pattern is required")
    fields = source.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise ValueError(f"{where}: 'fields' must be a non-empty object")
    specs = {name: _field(where, name, f) for name, f in fields.items()}
    implicit = [n for n, f in specs.items() if f.implicit]
    if len(implicit) > 1:
        raise ValueError(f"{where}: at most one field may lack an opener; {implicit} do")
    defaults = source.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ValueError(f"{where}: 'defaults' must be an object")
    return TemplateSpec(specs, where, _anchors(where, source), tuple(defaults))


def _anchors(where: str, source: dict[str, Any]) -> tuple[str, ...]:
    literal = source.get("start_anchor")
    if literal is not None:
        texts = [literal] if isinstance(literal, str) else list(literal)
        if not texts or not all(isinstance(t, str) and t for t in texts):
            raise ValueError(f"{where}: start_anchor must be a non-empty string or list of strings")
        return tuple(texts)
    pattern = source["start_anchor_pattern"]
    try:
        alternatives = [pattern_parts(p) for p in _alternatives(pattern)]
    except ValueError as e:
        raise ValueError(f"{where}: start_anchor_pattern {pattern!r}: {e}") from None
    if not all(len(parts) == 1 and parts[0].kind == "text" for parts in alternatives):
        raise ValueError(f"{where}: start_anchor_pattern {pattern!r} must spell literal text")
    return tuple(parts[0].value for parts in alternatives)


def _load_file(path: Path) -> Any:
    file = path / "tokenizer_config.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{file}: cannot read a response_template ({e})") from None
    if path.is_dir() or (isinstance(data, dict) and "response_template" in data and "fields" not in data):
        if not isinstance(data, dict) or "response_template" not in data:
            raise ValueError(f"{file}: no response_template in it")
        return data["response_template"]
    return data


def _field(where: str, name: str, field: Any) -> FieldSpec:
    if not isinstance(field, dict):
        raise ValueError(f"{where}: field {name!r} must be an object")
    unknown = set(field) - FIELD_KEYS
    if unknown:
        raise ValueError(f"{where}: field {name!r}: unknown key(s) {sorted(unknown)}; valid: {sorted(FIELD_KEYS)}")
    content = field.get("content", "text")
    if content not in CONTENT_TYPES:
        raise ValueError(f"{where}: field {name!r}: content {content!r}; valid: {sorted(CONTENT_TYPES)}")
    args = field.get("content_args") or {}
    if "join" in field and not field.get("repeats"):
        raise ValueError(f"{where}: field {name!r}: join needs repeats")
    if field.get("transform_each") and field.get("transform") is None:
        raise ValueError(f"{where}: field {name!r}: transform_each needs transform")
    opens, closes = _marker(where, name, field, "open"), _marker(where, name, field, "close")
    if (_captures(opens) or _captures(closes)) and field.get("transform") is None:
        raise ValueError(f"{where}: field {name!r}: named groups in open/close need a transform")
    return FieldSpec(name, opens, closes, content, dict(args), field.get("transform"), field.get("join"),
                     bool(field.get("repeats")))


def _marker(where: str, name: str, field: dict[str, Any], key: str) -> tuple[tuple[Part, ...], ...]:
    literal, pattern = field.get(key), field.get(f"{key}_pattern")
    if literal is not None and pattern is not None:
        raise ValueError(f"{where}: field {name!r}: {key} and {key}_pattern exclude each other")
    if literal is not None:
        texts = [literal] if isinstance(literal, str) else list(literal)
        return tuple((Part("text", t),) for t in sorted(texts, key=len, reverse=True) if t)
    if pattern is None:
        return ()
    try:
        return tuple(pattern_parts(p) for p in _alternatives(pattern))
    except ValueError as e:
        raise ValueError(f"{where}: field {name!r}: {key}_pattern {pattern!r}: {e}") from None


def _alternatives(pattern: str) -> list[str]:
    """A pattern ``\\s*(?:A|B|C)`` (the fallbacks' end-of-turn closers) as ``[\\s*A, \\s*B, \\s*C]``."""
    start = pattern.find("(?:")
    if start < 0 or not pattern.endswith(")") or _group_end(pattern, start) != len(pattern):
        return [pattern]
    return [pattern[:start] + alt for alt in _split_bars(pattern[start + 3 : -1])]


def _split_bars(body: str) -> list[str]:
    out, cur, i = [], "", 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            cur += body[i : i + 2]
            i += 2
            continue
        if c in "()":
            raise ValueError("a nested group inside an alternation is not supported")
        if c == "|":
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return [*out, cur]


def _group_end(pattern: str, start: int) -> int:
    """The index after the ``)`` closing the group that opens at ``start``."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("an unclosed group")


def pattern_parts(pattern: str) -> tuple[Part, ...]:
    """``pattern`` as literal text, optional whitespace and named captures, or ``ValueError``."""
    parts: list[Part] = []
    i = 0
    while i < len(pattern):
        space = next((w for w in _WHITESPACE_CLASSES if pattern.startswith(w, i)), None)
        if space is not None:
            if not parts or parts[-1].kind != "space":
                parts.append(Part("space"))
            i += len(space)
        elif pattern.startswith("(?P<", i):
            end = _group_end(pattern, i)
            label, _, body = pattern[i + 4 : end - 1].partition(">")
            parts.append(Part("capture", body, label))
            i = end
        elif pattern[i] == "\\":
            c = pattern[i + 1 : i + 2]
            if c.isalnum() and c not in _ESCAPES:
                raise ValueError(f"the class \\{c} outside a named group is not supported")
            _add_text(parts, _ESCAPES.get(c, c))
            i += 2
        elif pattern[i] in _SPECIAL:
            raise ValueError(f"{pattern[i]!r} at {i} is not supported (literal text, \\s*, (?P<name>...) only)")
        else:
            _add_text(parts, pattern[i])
            i += 1
    return tuple(parts)


def _add_text(parts: list[Part], text: str) -> None:
    if parts and parts[-1].kind == "text":
        parts[-1] = Part("text", parts[-1].value + text)
    else:
        parts.append(Part("text", text))
