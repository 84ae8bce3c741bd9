"""Making a list of messages a request the Messages API accepts.

The rules: the first message is a user message, roles alternate (consecutive messages of one
role are sent as one), every ``tool_use`` is answered by a ``tool_result`` in the next message
and every ``tool_result`` answers the previous one (anything else is sent as text), server tool
calls keep their result in the same message, tool results open a user message, and a request
ending on an assistant message does not end with whitespace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tui_chat.core.blocks import SERVER_TOOL_USE_TYPES, block_text, is_tool_result
from tui_chat.core.models import ContentBlock
from tui_chat.core.request.render import CONTINUED_TEXT
from tui_chat.core.request.types import Piece
from tui_chat.core.tokens import TokenCounter

Convert = Callable[[ContentBlock], ContentBlock | None]
"""Turns one block into its replacement, or returns ``None`` to keep it as it is."""


def open_with_user(pieces: list[Piece], counter: TokenCounter) -> list[Piece]:
    """Put a short user message in front when the first message is a reply.

    Args:
        pieces: The messages to send, in order.
        counter: Counts the filler's tokens.

    Returns:
        The messages, starting with a user message (unchanged when they already do).
    """
    if not pieces or pieces[0].role != "assistant":
        return pieces
    content: list[ContentBlock] = [{"type": "text", "text": CONTINUED_TEXT}]
    filler = Piece(None, "user", content, counter.count_message("user", content), "recent")
    return [filler, *pieces]


def group_roles(pieces: Sequence[Piece]) -> list[list[Piece]]:
    """Group consecutive messages of the same role (each group is sent as one message).

    Args:
        pieces: The messages to send, in order.

    Returns:
        The groups, alternating in role.
    """
    groups: list[list[Piece]] = []
    for piece in pieces:
        if groups and groups[-1][0].role == piece.role:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups


def _as_earlier_output(block: ContentBlock) -> ContentBlock:
    return {"type": "text", "text": f"[earlier tool output] {block_text(block)}"}


def _use_as_text(block: ContentBlock) -> ContentBlock:
    return {"type": "text", "text": f"{block_text(block)} (its result was not recorded)"}


def _fix_piece(piece: Piece, counter: TokenCounter, convert: Convert) -> Piece:
    """``piece`` with ``convert`` applied to each block, recounted when anything changed."""
    changed = False
    content: list[ContentBlock] = []
    for block in piece.content:
        new = convert(block)
        if new is None:
            content.append(block)
        else:
            content.append(new)
            changed = True
    if not changed:
        return piece
    return replace(piece, content=content, tokens=counter.count_message(piece.role, content))


def _is_server_result(block: Mapping[str, Any]) -> bool:
    return is_tool_result(block) and block.get("type") != "tool_result"


def _server_orphan(pieces: Sequence[Piece]) -> Callable[[Mapping[str, Any]], bool]:
    """A test for server tool blocks whose partner is not in the same assistant message.

    Server tools (web search, MCP) are called and answered inside one assistant message; a
    reply cut off between the two leaves an unpaired block the API would reject.
    """
    blocks = [block for piece in pieces for block in piece.content]
    uses = {str(b.get("id")) for b in blocks if b.get("type") in SERVER_TOOL_USE_TYPES}
    results = {str(b.get("tool_use_id")) for b in blocks if _is_server_result(b)}

    def is_orphan(block: Mapping[str, Any]) -> bool:
        if block.get("type") in SERVER_TOOL_USE_TYPES:
            return str(block.get("id")) not in results
        return _is_server_result(block) and str(block.get("tool_use_id")) not in uses

    return is_orphan


def _fix_calls(
    group: list[Piece], following: Sequence[Piece], counter: TokenCounter
) -> tuple[list[Piece], set[str]]:
    """An assistant group with every call the next message does not answer sent as text.

    Returns:
        The fixed group and the ids of the calls kept as ``tool_use``.
    """
    answered = {
        str(b.get("tool_use_id"))
        for piece in following
        for b in piece.content
        if b.get("type") == "tool_result"
    }
    paired: set[str] = set()
    is_orphan = _server_orphan(group)

    def convert(block: ContentBlock) -> ContentBlock | None:
        if is_orphan(block):
            return _as_earlier_output(block)
        if block.get("type") != "tool_use":
            return None
        tool_id = str(block.get("id"))
        if tool_id in answered and tool_id not in paired:
            paired.add(tool_id)
            return None
        return _use_as_text(block)

    return [_fix_piece(piece, counter, convert) for piece in group], paired


def _fix_results(group: list[Piece], allowed: set[str], counter: TokenCounter) -> list[Piece]:
    """A user group with every result that answers no call of the previous message as text."""
    used: set[str] = set()

    def convert(block: ContentBlock) -> ContentBlock | None:
        if block.get("type") != "tool_result":
            return None
        tool_id = str(block.get("tool_use_id"))
        if tool_id in allowed and tool_id not in used:
            used.add(tool_id)
            return None
        return _as_earlier_output(block)

    return [_fix_piece(piece, counter, convert) for piece in group]


def pair_tools(groups: list[list[Piece]], counter: TokenCounter) -> list[list[Piece]]:
    """Send as text every tool call or result that has no partner where the API wants it.

    Args:
        groups: Role groups from :func:`group_roles`.
        counter: Recounts the messages that change.

    Returns:
        The groups, with unpaired ``tool_use`` / ``tool_result`` blocks (and server tool
        blocks without their partner) turned into text blocks.
    """
    fixed: list[list[Piece]] = []
    allowed: set[str] = set()
    for index, group in enumerate(groups):
        if group[0].role == "assistant":
            following = groups[index + 1] if index + 1 < len(groups) else []
            calls, allowed = _fix_calls(group, following, counter)
            fixed.append(calls)
        else:
            fixed.append(_fix_results(group, allowed, counter))
            allowed = set()
    return fixed


def trim_final_assistant(groups: list[list[Piece]], counter: TokenCounter) -> None:
    """Make a request ending on an assistant message (a preview) not end with whitespace.

    Trailing blank text blocks are dropped and the last text is right-stripped; a message left
    empty is dropped. ``groups`` is changed in place.

    Args:
        groups: Role groups, as sent.
        counter: Recounts the message that changes.
    """
    while groups and groups[-1][0].role == "assistant":
        group = groups[-1]
        piece = group[-1]
        content = list(piece.content)
        while content and content[-1].get("type") == "text":
            text = str(content[-1].get("text") or "").rstrip()
            if text:
                if text != content[-1].get("text"):
                    content[-1] = {**content[-1], "text": text}
                break
            content.pop()
        if content == piece.content:
            return
        if content:
            tokens = counter.count_message(piece.role, content)
            group[-1] = replace(piece, content=content, tokens=tokens)
            return
        group.pop()
        if not group:
            groups.pop()


def message_content(group: Sequence[Piece]) -> list[ContentBlock]:
    """The content of the one message a role group is sent as.

    Args:
        group: Messages of one role.

    Returns:
        Their blocks in order; in a user message, tool results first (the API requires it).
    """
    blocks = [block for piece in group for block in piece.content]
    if group[0].role == "user":
        blocks.sort(key=lambda block: block.get("type") != "tool_result")
    return blocks
