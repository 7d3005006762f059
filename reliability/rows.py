"""One checked case of the reliability run."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Row", "Checks"]

@dataclass
class Row:
    """``requests``: how many requests the row covers; ``lost``: how many got no correct answer."""

    section: str
    case: str
    expected: str
    observed: str
    ok: bool
    requests: int = 1
    lost: int = 0


class Checks:
    """Named pass/fail checks of one row: the failed ones go into its observed text."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    def check(self, ok: bool, what: str) -> bool:
        if not ok:
            self.failed.append(what)
        return ok

    @property
    def ok(self) -> bool:
        return not self.failed

    def row(self, section: str, case: str, expected: str, observed: str, requests: int = 1, lost: int = 0) -> Row:
        """``lost``: requests that got no right answer (a refused hostile request is not lost)."""
        text = observed + ("" if self.ok else "; FAILED: " + "; ".join(self.failed))
        return Row(section, case, expected, text, self.ok, requests, lost)
