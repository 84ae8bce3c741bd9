"""Stored messages (and the new one) as pieces ready to send, with their token counts."""

from __future__ import annotations

from dataclasses import replace

from tui_chat.core.models import ContentBlock, Message
from tui_chat.core.request.clip import clean_blocks, cut_content
from tui_chat.core.request.shrink import cut_piece
from tui_chat.core.request.types import Piece
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import message_tokens


def prepare(
    message: Message, counter: TokenCounter, limit: int | None, pinned: bool
) -> Piece | None:
    """Clean one raw message for sending, cut to ``limit`` characters unless it is pinned.

    Args:
        message: A stored message.
        counter: Counts the message when it changed (the stored count is reused otherwise).
        limit: The policy's ``message_char_limit``.
        pinned: Pinned messages are never cut.

    Returns:
        The piece, or ``None`` when nothing of the message can be sent.
    """
    blocks = clean_blocks(message.content)
    if not blocks:
        return None  # e.g. a reply that failed before any text ("error", no content)
    cut = False
    if limit is not None and not pinned:
        blocks, cut = cut_content(blocks, limit)
    if not cut and blocks == message.content:
        tokens = message_tokens(message, counter)
    else:
        tokens = counter.count_message(message.role, blocks)
    piece = Piece(message, message.role, blocks, tokens, "recent", cut)
    if message.has_tool_result:
        piece = replace(piece, shrunk=cut_piece(piece, message, counter))
    return piece


def new_piece(content: list[ContentBlock] | None, counter: TokenCounter) -> Piece | None:
    """The user's new message as a piece.

    Args:
        content: Its blocks, or ``None`` for a preview or retry.
        counter: Counts it.

    Returns:
        The piece, or ``None`` when there is no new message.

    Raises:
        ValueError: when the message has nothing to send.
    """
    if content is None:
        return None
    blocks = clean_blocks(content)
    if not blocks:
        raise ValueError("the new message is empty")
    return Piece(None, "user", blocks, counter.count_message("user", blocks), "new_message")
