"""``tui-chat delete MESSAGE_ID`` (``rm``): delete a message, and say what went with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.cli import render
from tui_chat.cli.parser import Args

if TYPE_CHECKING:
    from tui_chat.engine.conversations import Deleted
    from tui_chat.engine.service import ChatService


def deleted_lines(deleted: Deleted, asked: int) -> list[str]:
    """What a deletion says: the messages, the pins, the stale versions and what to do."""
    others = [f"#{i}" for i in deleted.ids if i != asked]
    lines = [
        f"deleted message #{asked}"
        + (f" and {', '.join(others)} (its tool call and result go together)" if others else "")
    ]
    if deleted.unpinned:
        lines.append(f"unpinned {', '.join(f'#{i}' for i in deleted.unpinned)}")
    if deleted.stale_versions:
        versions = ", ".join(f"v{v}" for v in deleted.stale_versions)
        newest = deleted.stale_versions[-1]
        lines.append(
            f"summary {versions} still hold what was deleted (marked stale): "
            f"tui-chat regenerate {deleted.conversation_id[:8]} {newest}"
        )
    return lines


async def delete(service: ChatService, args: Args) -> int:
    """Delete a message (with its tool pair): out of every request, export and search."""
    deleted = await service.messages.delete(args.message_id)
    if args.as_json:
        render.json_out(
            {
                "conversation_id": deleted.conversation_id,
                "deleted": deleted.ids,
                "unpinned": deleted.unpinned,
                "stale_versions": deleted.stale_versions,
            }
        )
        return 0
    for line in deleted_lines(deleted, args.message_id):
        render.out(line)
    return 0
