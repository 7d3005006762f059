"""Harmony rendering, the inverse of parsing: an assistant turn as gpt-oss writes it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .framing import CALL, CHANNEL, CONSTRAIN, END, MESSAGE, RETURN, START

__all__ = ["render_reply"]


def render_reply(parts: Iterable[Sequence[str]], header: str = "template") -> str:
    """Harmony completion text (what follows the prompt's ``<|start|>assistant``).

    ``parts``: ``("analysis", text)``, ``("commentary", text)``, ``("final", text)`` or
    ``("call", name, arguments_json)``.  ``header="template"`` writes calls as the official
    gpt-oss chat template does (``to=functions.NAME<|channel|>commentary json``);
    ``"model"`` as the model usually generates them
    (``<|channel|>commentary to=functions.NAME <|constrain|>json``).  A final message ends
    with ``<|return|>``, a call with ``<|call|>``, anything else with ``<|end|>``."""
    if header not in ("template", "model"):
        raise ValueError(f"header must be 'template' or 'model', got {header!r}")
    out: list[str] = []
    for i, part in enumerate(parts):
        role = START + "assistant" if i else ""  # the prompt already opened the first message
        kind = part[0]
        if kind == "call":
            _, name, args = part
            if header == "template":
                out.append(f"{role} to=functions.{name}{CHANNEL}commentary json{MESSAGE}{args}{CALL}")
            else:
                out.append(f"{role}{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{args}{CALL}")
        elif kind in ("analysis", "commentary", "final"):
            stop = RETURN if kind == "final" else END
            out.append(f"{role}{CHANNEL}{kind}{MESSAGE}{part[1]}{stop}")
        else:
            raise ValueError(f"unknown Harmony part {kind!r}; expected analysis, commentary, final or call")
    return "".join(out)
