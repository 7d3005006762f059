"""lmparse's pure-Python core as a peer of the compiled one (peer side).

The driver runs lmparse in its own process on whichever core loaded there (the compiled one
after ``make compiled``); this worker is the same interpreter and checkout started with
``LMPARSE_PURE=1`` (``bench.compare.client``), so the two cores are timed in interleaved
pairs like any peer and the ratio is pure time / compiled time.  A worker that did not get
the pure core refuses to start rather than time the compiled one twice.
"""

from __future__ import annotations

from lmparse import __version__
from lmparse._core import core

from .ours import Adapter as _Ours

__all__ = ["Adapter"]


class Adapter(_Ours):
    impl = f"lmparse {__version__} (pure core)"

    def __init__(self) -> None:
        loaded = core()
        if not loaded.startswith("pure"):
            raise RuntimeError(f"the pure-core worker loaded {loaded}; it must run with LMPARSE_PURE=1")
