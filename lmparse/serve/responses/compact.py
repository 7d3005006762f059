"""``POST /v1/responses/compact``: a conversation as one opaque ``compaction`` item.

A client compacts a long conversation and starts a new chain with the returned window as
its ``input`` (the new user or tool items after it).  A hosted model summarizes; lmparse
runs no model here: the window holds the conversation's chat messages whole, sealed by the
``Signer`` (encoded, not encrypted, like reasoning blobs), and a later request reads them
back into the prompt.  Nothing is shortened, so ``usage`` counts no tokens; what the
endpoint gives a client is the contract: one item that replaces the history it was given,
``previous_response_id`` not needed.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson

from ..signing import Signer
from ..validate import optional_str, require
from .request import ResponsesOptions, conversation_turns
from .store import ResponseStore
from .tools import ToolMap

__all__ = ["compact"]


def compact(body: Any, signer: Signer, store: ResponseStore | None) -> dict:
    """The ``response.compaction`` object for a compact request (a 400 naming the field if malformed)."""
    require(isinstance(body, dict), "the request body must be a JSON object", None)
    model = body.get("model")
    require(isinstance(model, str) and model, "model is required: the model whose context is compacted", "model")
    for field in ("instructions", "prompt_cache_key"):
        optional_str(body, field)
    require(body.get("input") is not None or body.get("previous_response_id") is not None,
            "input is required (or previous_response_id): the conversation to compact", "input")
    opts = ResponsesOptions(model, False, ToolMap(), signer)
    messages = conversation_turns(body, opts, signer, store)
    item = {"id": "cmp_" + secrets.token_hex(12), "type": "compaction",
            "encrypted_content": signer.seal_window(orjson.dumps(messages).decode())}
    return {"id": "resp_" + secrets.token_hex(12), "object": "response.compaction", "created_at": int(time.time()),
            "output": [item],
            "usage": {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0}}
