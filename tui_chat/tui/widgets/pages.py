"""Reading a conversation's messages a page at a time, for the chat pane's window.

:class:`Pages` holds the page sizes and asks the :class:`MessageSource` (the engine) for the
page before or after a message; :func:`mark_left_out` marks the turns of failed prompts in a
window. The pane (:mod:`tui_chat.tui.widgets.chat_pane`) decides when to page and mounts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from tui_chat.core.unanswered import unanswered_prompts

if TYPE_CHECKING:
    from tui_chat.core.models import Message
    from tui_chat.tui.widgets.message_view import MessageView


class MessageSource(Protocol):
    """Where the chat pane reads a conversation's messages (``service.messages`` is one)."""

    async def page(
        self,
        conversation_id: str,
        *,
        before_id: int | None = None,
        after_id: int | None = None,
        limit: int = 50,
    ) -> list[Message]:
        """Up to ``limit`` messages, oldest first: the newest ones, those just before
        ``before_id``, or those just after ``after_id``."""
        ...

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        """Ids of the conversation's pinned messages."""
        ...

    async def pin(self, message_id: int, note: str = "") -> None:
        """Pin a message so it is always sent verbatim."""
        ...

    async def unpin(self, message_id: int) -> bool:
        """Unpin a message; False when it was not pinned."""
        ...


class Pages:
    """Pages of one source's conversations.

    Args:
        source: Where messages are read.
    """

    PAGE: ClassVar[int] = 50
    """Messages fetched per page when paging."""
    FIRST_PAGE: ClassVar[int] = 20
    """Messages mounted when a conversation opens: enough to fill a tall terminal, few enough
    that the first frame comes fast (each Markdown widget costs its layout)."""
    AFTER_HIT: ClassVar[int] = 6
    """Messages shown after a message jumped to (a search hit): its reply and a little more."""

    def __init__(self, source: MessageSource) -> None:
        self._source = source

    async def before(
        self, conversation_id: str, before_id: int | None, size: int = 0
    ) -> tuple[list[Message], bool]:
        """One page ending before ``before_id`` (``None``: the newest), and whether more
        exist before it."""
        size = size or self.PAGE
        page = await self._source.page(conversation_id, before_id=before_id, limit=size + 1)
        more = len(page) > size
        return (page[1:] if more else page), more

    async def after(
        self, conversation_id: str, after_id: int, size: int = 0
    ) -> tuple[list[Message], bool]:
        """One page starting after ``after_id``, and whether more exist after it."""
        size = size or self.PAGE
        page = await self._source.page(conversation_id, after_id=after_id, limit=size + 1)
        return page[:size], len(page) > size


def mark_left_out(views: list[MessageView]) -> None:
    """Mark the turns of failed prompts that later requests leave out (core/unanswered)."""
    messages = [v.message for v in views]
    # The last turn shown is never judged: at the end it is the prompt a retry sends, and
    # in a window cut short its reply may lie below (a search hit was marked).
    prompts = {m.id for m in unanswered_prompts(messages, keep_last=True)}
    turn: int | None = None
    for view in views:
        message = view.message
        if message.role == "user" and not message.has_tool_result:
            turn = message.turn if message.id in prompts else None
        view.set_left_out(turn is not None and message.turn == turn)
