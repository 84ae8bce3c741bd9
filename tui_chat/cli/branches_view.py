"""``tui-chat branches`` and ``tui-chat switch``: a conversation's branches as a tree, and
which one opening it shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.cli import render
from tui_chat.cli.parser import Args
from tui_chat.core.inert import inert

if TYPE_CHECKING:
    from tui_chat.core.family import Branch, Family
    from tui_chat.engine.conversations import BranchPath
    from tui_chat.engine.service import ChatService


def branch_json(
    branch: Branch, depth: int, first_own: int | None, shown: bool
) -> render.JsonObject:
    """One branch of ``branches --json``."""
    return {
        "id": branch.id,
        "title": branch.title,
        "parent_id": branch.parent_id,
        "depth": depth,
        "shared_messages": branch.shared,
        "parent_message_id": branch.parent_message_id,
        "diverges_at_message_id": first_own,
        "messages": branch.messages,
        "updated_at": branch.updated_at,
        "archived": branch.archived,
        "shown": shown,
    }


def path_json(path: BranchPath) -> render.JsonObject:
    """Where a conversation sits in its family (``context --json``)."""
    return {
        "family_id": path.family.id,
        "branch": path.number,
        "branches": len(path.family.branches),
        "parent_id": path.branch.parent_id,
        "shared_messages": path.branch.shared,
        "divergences": [
            {
                "message_id": p.message_id,
                "version": p.divergence.index,
                "versions": p.divergence.count,
            }
            for p in path.points
        ],
    }


def _line(family: Family, branch: Branch, depth: int, first_own: int | None, n: int) -> str:
    mark = "▶" if branch.id == family.shown else " "
    tree = "  " * max(depth - 1, 0) + ("└ " if depth else "")
    parts = [f"{branch.messages} msgs", branch.updated_at[:16].replace("T", " ")]
    if branch.parent_id is not None:
        where = f"#{first_own}" if first_own is not None else "its end (nothing new yet)"
        parts.insert(0, f"diverges at {where} after {branch.shared} shared")
    if branch.archived:
        parts.append("archived")
    return f"{mark} {n:>2}  {tree}{branch.id}  {inert(branch.title)}  · {' · '.join(parts)}"


async def branches(service: ChatService, args: Args) -> int:
    """Print a conversation's family as a tree (``▶``: the branch opening it shows)."""
    conversation = await service.conversations.resolve(args.conv)
    family, first_own = await service.branches.tree(conversation.id)
    rows = family.tree()
    if args.as_json:
        render.json_out(
            {
                "family_id": family.id,
                "shown": family.shown,
                "branches": [
                    branch_json(b, depth, first_own.get(b.id), b.id == family.shown)
                    for b, depth in rows
                ],
            }
        )
        return 0
    count = len(family.branches)
    render.out(f"“{inert(family.root.title)}”: {count} branch{'es' if count != 1 else ''}")
    numbers = {b.id: i for i, b in enumerate(family.branches, 1)}
    for branch, depth in rows:
        render.out(_line(family, branch, depth, first_own.get(branch.id), numbers[branch.id]))
    return 0


async def switch(service: ChatService, args: Args) -> int:
    """Make a branch the one its conversation shows when opened."""
    conversation = await service.conversations.resolve(args.conv)
    branch = await service.branches.switch(conversation.id, args.branch)
    family = await service.branches.family(branch.id)
    number = [b.id for b in family.branches].index(branch.id) + 1
    render.out(
        f"“{inert(family.root.title)}” opens branch {number} of {len(family.branches)}: "
        f"{branch.id} “{inert(branch.title)}”"
    )
    return 0
