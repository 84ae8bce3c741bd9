"""Parsed messages kept in memory, so building the next request reads ids only."""

from __future__ import annotations

from collections import OrderedDict

from tui_chat.core.models import Message

CACHE_MESSAGES = 8_192
"""Parsed complete messages kept per open store (to start with)."""
CACHE_LIMIT = 65_536
"""The most the cache grows to for a long raw tail (a 1M-token window of short messages)."""


class MessageCache:
    """Parsed messages of one store, least recently used first out.

    Only ``complete`` messages are kept: they are never rewritten (a streaming reply is, until
    it completes), and messages are only deleted with their conversation, whose random id no
    later conversation reuses — so an entry keyed by conversation and id is never stale.
    """

    def __init__(self, size: int = CACHE_MESSAGES) -> None:
        """Keep at most ``size`` messages."""
        self.size = size
        self.entries: OrderedDict[tuple[str, int], Message] = OrderedDict()

    def get(self, conversation_id: str, message_id: int) -> Message | None:
        """The cached message, marked as recently used, or ``None``."""
        message = self.entries.get((conversation_id, message_id))
        if message is not None:
            self.entries.move_to_end((conversation_id, message_id))
        return message

    def reserve(self, count: int) -> None:
        """Make room for at least ``count`` messages, so that reading a tail of that many
        does not push out its own oldest messages (a cache smaller than the tail read each
        time would never hit). It only grows, up to :data:`CACHE_LIMIT`."""
        self.size = max(self.size, min(CACHE_LIMIT, count + count // 4))

    def put(self, message: Message) -> None:
        """Keep a complete message (others are ignored), dropping the least recently used."""
        if message.status != "complete":
            return
        self.entries[(message.conversation_id, message.id)] = message
        self.entries.move_to_end((message.conversation_id, message.id))
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
