"""Signatures for thinking blocks and the opaque reasoning blobs clients replay.

Anthropic clients send each ``thinking`` block back with its ``signature``; Responses
clients that do not store state (Codex: ``store: false`` with ``include:
["reasoning.encrypted_content"]``) send each reasoning item back with its
``encrypted_content``.  lmparse has no secret model state to protect, so the blob is the
reasoning text *encoded*, not encrypted (base64url, readable by anyone), with an HMAC tag
that tells lmparse's own blobs from anyone else's.  A signature or blob that does not
verify (another provider's, or made under another key) is ignored: that reasoning is left
out of the prompt, never an error.  A ``compaction`` item (``POST /v1/responses/compact``)
carries a whole conversation's chat messages the same way.

The key is random per process unless ``--signing-key`` / ``$LMPARSE_SIGNING_KEY`` sets
one, so blobs survive a restart (or move between replicas) only with a configured key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

__all__ = ["Signer"]

_THINKING_PREFIX = "lmparse1."
_BLOB_PREFIX = "lmparse.r1."
_WINDOW_PREFIX = "lmparse.c1."


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, key: str | bytes | None = None) -> None:
        if isinstance(key, str):
            key = key.encode()
        self._key = key or secrets.token_bytes(32)

    def _tag(self, purpose: bytes, data: bytes) -> str:
        return _b64(hmac.new(self._key, purpose + b"\0" + data, hashlib.sha256).digest()[:18])

    # ---- Anthropic thinking signatures ----

    def thinking_signature(self, thinking: str) -> str:
        return _THINKING_PREFIX + self._tag(b"thinking", thinking.encode())

    def verify_thinking(self, thinking: str, signature: object) -> bool:
        if not isinstance(signature, str) or not signature.isascii() or not signature.startswith(_THINKING_PREFIX):
            return False
        return hmac.compare_digest(signature.encode(), self.thinking_signature(thinking).encode())

    # ---- Responses reasoning blobs ----

    def seal_reasoning(self, text: str) -> str:
        payload = _b64(text.encode())
        return f"{_BLOB_PREFIX}{payload}.{self._tag(b'reasoning', payload.encode())}"

    def open_reasoning(self, blob: object) -> str | None:
        """The reasoning text of a blob lmparse sealed under this key, else None."""
        return self._open(blob, _BLOB_PREFIX, b"reasoning")

    # ---- Responses compaction windows (POST /v1/responses/compact) ----

    def seal_window(self, text: str) -> str:
        """A compacted conversation (its chat messages as JSON) as a ``compaction`` item's blob."""
        payload = _b64(text.encode())
        return f"{_WINDOW_PREFIX}{payload}.{self._tag(b'window', payload.encode())}"

    def open_window(self, blob: object) -> str | None:
        """The JSON a compaction blob lmparse sealed under this key holds, else None."""
        return self._open(blob, _WINDOW_PREFIX, b"window")

    def _open(self, blob: object, prefix: str, purpose: bytes) -> str | None:
        if not isinstance(blob, str) or not blob.isascii() or not blob.startswith(prefix):
            return None
        payload, _, tag = blob[len(prefix):].rpartition(".")
        if not payload or not hmac.compare_digest(tag.encode(), self._tag(purpose, payload.encode()).encode()):
            return None
        try:
            return _unb64(payload).decode()
        except (binascii.Error, ValueError):
            return None
