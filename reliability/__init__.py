"""``python -m reliability``: `lmparse serve` under load, disconnects, hostile requests and upstream faults.

Each section (``load``, ``disconnects``, ``hostile``, ``upstream``) runs against a real
``lmparse serve`` subprocess and returns ``Row``s; ``report`` renders them as
docs/reliability.md.  ``tests/test_reliability.py`` runs the reduced size.
"""
