"""Harmony's markers and their o200k_harmony token ids (single special tokens; ECOSYSTEM.md §5).

Below every other module of the package: the framing table, the header reader and the
lexers all spell markers from here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["START", "CHANNEL", "MESSAGE", "CONSTRAIN", "END", "CALL", "RETURN", "STOPS", "MARKER_IDS"]

START: Final = "<|start|>"
CHANNEL: Final = "<|channel|>"
MESSAGE: Final = "<|message|>"
CONSTRAIN: Final = "<|constrain|>"
END: Final = "<|end|>"
CALL: Final = "<|call|>"
RETURN: Final = "<|return|>"
STOPS: Final = (END, CALL, RETURN)
# o200k_harmony ids of the markers (single special tokens; see ECOSYSTEM.md §5).
MARKER_IDS: Final = {
    START: 200006, CHANNEL: 200005, MESSAGE: 200008, CONSTRAIN: 200003, END: 200007, CALL: 200012, RETURN: 200002,
}
