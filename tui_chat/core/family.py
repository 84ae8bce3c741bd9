"""Branches of a conversation: a family of stored conversations that share
their first messages, and where their paths part.

Each branch is stored as its own conversation (its messages, summaries and pins: the request
is built per branch, so it follows the path on screen). A branch that is not the family's first
records its parent and how many of its first messages it shares with it (its copies). A message
of a branch is *owned* by the branch that wrote it: the parent's owner for a shared position,
the branch itself past them. Two branches show the same message at a position when its owner
is the same; the *divergence* at a position is where branches that agree up to the position
before show different owners there (an edited prompt, the first message after a fork point).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field

from tui_chat.core.models import ConversationInfo

__all__ = ["Branch", "Divergence", "Family", "FamilyRow", "divergences", "family_rows"]


@dataclass(frozen=True, slots=True)
class Branch:
    """One conversation of a family.

    Attributes:
        id: The conversation.
        title: Its title.
        parent_id: The branch it shares its first messages with (``None``: the first one).
        shared: How many of its first messages it shares with the parent.
        parent_message_id: The parent's last shared message (``None``: none shared).
        messages: How many messages it holds.
        created_at: When it was made (ISO time).
        updated_at: Its latest activity (ISO time).
        archived: Whether it is archived (hidden unless shown).
    """

    id: str
    title: str
    parent_id: str | None
    shared: int
    parent_message_id: int | None
    messages: int
    created_at: str
    updated_at: str
    archived: bool = False


@dataclass(frozen=True, slots=True)
class Divergence:
    """A position of a branch where other branches of its family show another message.

    Attributes:
        position: The message's position in the branch (1 = its first message).
        index: Which of the versions there this branch shows (1-based, oldest first).
        targets: The branch to show for each version there, in order.
    """

    position: int
    index: int
    targets: tuple[str, ...]

    @property
    def count(self) -> int:
        """How many versions there are at this position."""
        return len(self.targets)

    @property
    def label(self) -> str:
        """``‹ n/m ›``."""
        return f"‹ {self.index}/{self.count} ›"

    def step(self, delta: int) -> str:
        """The branch that shows the version ``delta`` away (wrapping around)."""
        return self.targets[(self.index - 1 + delta) % self.count]


@dataclass(frozen=True, slots=True)
class Family:
    """The branches sharing one conversation's first messages.

    Attributes:
        id: The family's id (its first conversation's, even once that one is deleted).
        branches: Every branch, oldest first.
        visible_id: The branch last viewed or switched to, if one is recorded.
    """

    id: str
    branches: tuple[Branch, ...]
    visible_id: str | None = None
    _by_id: dict[str, Branch] = field(init=False, repr=False, compare=False)
    _chains: dict[str, tuple[tuple[int, str], ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {b.id: b for b in self.branches})
        object.__setattr__(self, "_chains", {})

    def get(self, branch_id: str) -> Branch | None:
        """The branch with this id, if it is one of the family's."""
        return self._by_id.get(branch_id)

    @property
    def root(self) -> Branch:
        """The family's first conversation (or, once it is deleted, the oldest branch left)."""
        return self._by_id.get(self.id) or next(
            (b for b in self.branches if b.parent_id not in self._by_id), self.branches[0]
        )

    @property
    def shown(self) -> str:
        """The branch opening the family shows: the one last viewed, unless it is archived;
        else the latest active."""
        visible = self.get(self.visible_id or "")
        if visible is not None and not visible.archived:
            return visible.id
        live = [b for b in self.branches if not b.archived] or list(self.branches)
        return max(live, key=lambda b: (b.updated_at, b.created_at)).id

    def tree(self) -> list[tuple[Branch, int]]:
        """The branches depth first (children oldest first) with their depth (0: the root)."""
        children: dict[str | None, list[Branch]] = {}
        for branch in self.branches:
            parent = branch.parent_id if branch.parent_id in self._by_id else None
            children.setdefault(parent, []).append(branch)
        out: list[tuple[Branch, int]] = []
        seen: set[str] = set()

        def visit(branch: Branch, depth: int) -> None:
            if branch.id in seen:
                return
            seen.add(branch.id)
            out.append((branch, depth))
            for child in children.get(branch.id, []):
                visit(child, depth + 1)

        for branch in children.get(None, []):
            visit(branch, 0)
        for branch in self.branches:  # a cycle (never made by tui-chat) still shows
            visit(branch, 0)
        return out

    def owner(self, branch_id: str, position: int) -> str | None:
        """The branch that wrote the message at ``position`` of ``branch_id`` (``None``: it
        has no message there; position 0, before the first message, belongs to no branch)."""
        branch = self.get(branch_id)
        if branch is None or position < 1 or position > branch.messages:
            return None
        chain = self._chain(branch_id)
        return chain[bisect_left(chain, (position, ""))][1]

    def _chain(
        self, branch_id: str, seen: frozenset[str] = frozenset()
    ) -> tuple[tuple[int, str], ...]:
        """Who wrote a branch's messages: ``(last position, writer)`` runs, in order (kept)."""
        if (known := self._chains.get(branch_id)) is not None:
            return known
        branch = self._by_id[branch_id]
        parent = self.get(branch.parent_id or "")
        runs: list[tuple[int, str]] = []
        if parent is not None and branch.shared > 0 and parent.id not in seen | {branch_id}:
            upto = min(branch.shared, parent.messages)
            for end, writer in self._chain(parent.id, seen | {branch_id}):
                runs.append((min(end, upto), writer))
                if end >= upto:
                    break
        start = runs[-1][0] if runs else 0
        if branch.messages > start or not runs:
            runs.append((max(branch.messages, start), branch_id))
        chain = tuple(runs)
        self._chains[branch_id] = chain
        return chain


def divergences(family: Family, branch_id: str) -> tuple[Divergence, ...]:
    """Every position of ``branch_id`` where its family's branches show other messages.

    A branch that ends where others go on counts as a version there (its end): its
    divergence is one past its last message. Archived branches are left out (unless one is
    ``branch_id``). The branch shown for a version is the one viewed when it shows it, else the
    one that wrote it, else the latest active one showing it (the oldest for an end).
    """
    branch = family.get(branch_id)
    if branch is None:
        return ()
    live = [b for b in family.branches if not b.archived or b.id == branch_id]
    positions = sorted({b.shared + 1 for b in family.branches if b.shared < b.messages})
    created = {b.id: (b.created_at, b.id) for b in family.branches}
    out: list[Divergence] = []
    for position in positions:
        if position > branch.messages + 1:
            break
        before = family.owner(branch_id, position - 1)
        versions: dict[str | None, list[Branch]] = {}
        for other in live:
            if other.messages >= position - 1 and family.owner(other.id, position - 1) == before:
                versions.setdefault(family.owner(other.id, position), []).append(other)
        if len(versions) < 2:
            continue

        def order(owner: str | None, group: list[Branch]) -> tuple[str, str]:
            return created[owner] if owner is not None else min(created[b.id] for b in group)

        owners = sorted(versions, key=lambda owner: order(owner, versions[owner]))
        mine = family.owner(branch_id, position)
        targets = tuple(_shown(owner, versions[owner], branch_id, mine) for owner in owners)
        out.append(Divergence(position, owners.index(mine) + 1, targets))
    return tuple(out)


def _shown(owner: str | None, group: list[Branch], viewed: str, viewed_owner: str | None) -> str:
    """The branch shown for one version: the one viewed, its writer, or the latest active."""
    ids = [b.id for b in group]
    if owner == viewed_owner and viewed in ids:
        return viewed
    if owner in ids:
        return owner
    if owner is None:
        return min(group, key=lambda b: (b.created_at, b.id)).id
    return max(group, key=lambda b: (b.updated_at, b.created_at)).id


@dataclass(frozen=True, slots=True)
class FamilyRow:
    """One entry of a conversation list (the TUI's, ``tui-chat list``): a conversation with its
    branches.

    Attributes:
        info: The branch the entry opens (the one on screen, else the one last viewed, else
            the latest active), with its counts.
        title: The conversation's title (its first branch's).
        title_id: The branch whose title it is (renaming the entry renames it).
        updated_at: The latest activity of any of its branches.
        branches: How many of its branches are listed.
    """

    info: ConversationInfo
    title: str
    title_id: str
    updated_at: str
    branches: int


def family_rows(
    conversations: list[ConversationInfo],
    families: tuple[Mapping[str, str], Mapping[str, str]],
    current_id: str | None,
) -> list[FamilyRow]:
    """One row per conversation family, in list order (newest activity first).

    Args:
        conversations: Newest first.
        families: Branch id -> family id (a conversation missing is its own family), and
            family id -> the branch it shows.
        current_id: The conversation on screen (its family's entry opens it).
    """
    members, shown = families
    groups: dict[str, list[ConversationInfo]] = {}
    for info in conversations:
        groups.setdefault(members.get(info.conversation.id, info.conversation.id), []).append(info)
    rows = []
    for family_id, infos in groups.items():
        ids = [i.conversation.id for i in infos]
        opened = next(
            (c for c in (current_id, shown.get(family_id)) if c in ids), infos[0].conversation.id
        )
        first = next(
            (i for i in infos if i.conversation.id == family_id),
            min(infos, key=lambda i: (i.conversation.created_at, i.conversation.id)),
        )
        rows.append(
            FamilyRow(
                infos[ids.index(opened)],
                first.conversation.title,
                first.conversation.id,
                max(i.conversation.updated_at for i in infos),
                len(infos),
            )
        )
    return rows
