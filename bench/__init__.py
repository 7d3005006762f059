"""lmparse benchmarks: throughput, per-chunk cost and linearity, checked before timed.

Run ``python -m bench`` from the repository root (``--quick`` for a short run,
``--peers`` to add the reference implementations from ``bench/.peers/``,
``--dialects NAMES`` to measure only some tool dialects).
This package imports nothing from lmparse at import time, so the peer runner
(``bench.peer_lmdeploy``) can reuse ``bench.fixtures`` from another virtualenv.
"""
