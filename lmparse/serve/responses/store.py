"""The stored responses behind ``previous_response_id`` and ``GET /v1/responses/{id}``.

In memory and bounded by bytes: each entry keeps its response object and only the turns
it added (its new input and its output), linked to the response it continued, so a long
chain costs what its turns cost, not a copy of the history per response.  Using a
response touches every ancestor, so the least recently used conversations are the
first to go; a chain whose ancestor is gone can no longer be continued (a 400 naming it).
Entries are stored serialized (orjson), so nothing a caller holds can change them.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import orjson

__all__ = ["ResponseStore", "DEFAULT_STORE_BYTES"]

logger = logging.getLogger("lmparse.serve")

DEFAULT_STORE_BYTES = 64 * 1024 * 1024


class _Entry:
    __slots__ = ("previous_id", "messages", "response", "item_ids", "size")

    def __init__(self, previous_id: str | None, messages: bytes, response: bytes, item_ids: list[str]) -> None:
        self.previous_id = previous_id
        self.messages = messages
        self.response = response
        self.item_ids = item_ids
        self.size = len(messages) + len(response) + 64 * (1 + len(item_ids))


class ResponseStore:
    def __init__(self, max_bytes: int = DEFAULT_STORE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._items: dict[str, tuple[str, int]] = {}  # output item id -> (response id, position)
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, response_id: str, previous_id: str | None, messages: list[dict], response: dict) -> None:
        output = response.get("output") or []
        item_ids = [item["id"] for item in output if isinstance(item.get("id"), str)]
        entry = _Entry(previous_id, orjson.dumps(messages), orjson.dumps(response), item_ids)
        if entry.size > self.max_bytes:
            logger.info("response %s (%d bytes) is larger than the response store; not stored", response_id, entry.size)
            return
        self.delete(response_id)
        self._entries[response_id] = entry
        self.bytes += entry.size
        for position, item in enumerate(output):
            if isinstance(item.get("id"), str):
                self._items[item["id"]] = (response_id, position)
        while self.bytes > self.max_bytes:
            oldest = next(iter(self._entries))
            self.delete(oldest)

    def conversation(self, response_id: str) -> list[dict]:
        """Every turn of the chain that ends at ``response_id``, oldest first.
        ``KeyError(missing id)`` when it or an ancestor is not stored."""
        chain: list[_Entry] = []
        seen: set[str] = set()
        current: str | None = response_id
        while current is not None and current not in seen:
            entry = self._entries.get(current)
            if entry is None:
                raise KeyError(current)
            seen.add(current)
            chain.append(entry)
            self._entries.move_to_end(current)
            current = entry.previous_id
        messages: list[dict] = []
        for entry in reversed(chain):
            messages.extend(orjson.loads(entry.messages))
        return messages

    def get(self, response_id: str) -> dict | None:
        entry = self._entries.get(response_id)
        return orjson.loads(entry.response) if entry is not None else None

    def item(self, item_id: str) -> dict | None:
        """An output item of a stored response, for ``item_reference`` input."""
        where = self._items.get(item_id)
        if where is None:
            return None
        response = self.get(where[0])
        return response["output"][where[1]] if response is not None else None

    def delete(self, response_id: str) -> bool:
        entry = self._entries.pop(response_id, None)
        if entry is None:
            return False
        self.bytes -= entry.size
        for item_id in entry.item_ids:
            if self._items.get(item_id, ("",))[0] == response_id:
                del self._items[item_id]
        return True
