"""Deleting a message: what goes with it, what may not go, and what it leaves stale.

A ``tool_use`` and its ``tool_result`` go together (one without the other is a request the
API refuses), as do a prompt and its reply that failed before any text (an error with nothing
to answer); a reply being streamed, or the prompt it answers, cannot be deleted until the
reply ends (or is cancelled). Deleting takes the messages out of every request, count, export
and search at once (the rows go); the summary versions whose coverage reached them are marked
stale, since they still hold what was deleted: the timeline and ``tui-chat summaries`` say so,
and regenerating writes a version from the conversation as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_chat.core.models import Message
from tui_chat.store.repository import Store


class CannotDelete(ValueError):
    """The message cannot be deleted now (the text says why and what to do)."""


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a deletion removed and left stale."""

    conversation_id: str
    messages: list[Message]
    """The messages deleted, oldest first (the one asked for and its tool pair)."""
    unpinned: list[int] = field(default_factory=list)
    """The deleted messages that were pinned."""
    stale_versions: list[int] = field(default_factory=list)
    """Summary versions that covered a deleted message (marked stale)."""

    @property
    def ids(self) -> list[int]:
        """The deleted messages' ids."""
        return [m.id for m in self.messages]


async def _neighbour(store: Store, message: Message, *, after: bool) -> Message | None:
    conv_id = message.conversation_id
    found = (
        await store.messages.history(conv_id, after_id=message.id, limit=1)
        if after
        else await store.messages.history(conv_id, before_id=message.id, limit=1, newest=True)
    )
    return found[0] if found else None


def _nothing_arrived(reply: Message) -> bool:
    """A reply that failed before any text (its error is all it holds)."""
    return reply.role == "assistant" and reply.status == "error" and not reply.text.strip()


async def deletion(store: Store, message_id: int) -> list[Message]:
    """The messages deleting ``message_id`` removes: it and the other half of its tool pair,
    or a prompt and the reply that failed before any text arrived.

    Raises:
        NotFound: No such message.
        CannotDelete: A reply is being streamed into it or answering it.
    """
    message = await store.messages.get(message_id)
    going = [message]
    following = await _neighbour(store, message, after=True)
    if message.has_tool_use and following is not None and following.has_tool_result:
        going.append(following)
    elif message.role == "user" and following is not None and _nothing_arrived(following):
        going.append(following)  # a failed reply to it says nothing once it has gone
    if message.has_tool_result:
        previous = await _neighbour(store, message, after=False)
        if previous is not None and previous.has_tool_use:
            going.insert(0, previous)
    last = await store.messages.last(message.conversation_id)
    streaming = last is not None and last.status == "streaming"
    if any(m.status == "streaming" for m in going) or (
        streaming and last is not None and last.turn == message.turn
    ):
        raise CannotDelete(
            f"message #{message_id} belongs to the reply being streamed: cancel the reply "
            "(escape) or wait for it to end, then delete"
        )
    return going


async def delete(store: Store, message_id: int) -> Deleted:
    """Delete a message (with its tool pair); see :func:`deletion`."""
    going = await deletion(store, message_id)
    conv_id = going[0].conversation_id
    ids = [m.id for m in going]
    pinned = await store.anchors.pinned_ids(conv_id)
    stale = await store.messages.delete(conv_id, ids)
    return Deleted(conv_id, going, sorted(pinned & set(ids)), stale)
