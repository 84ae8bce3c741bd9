"""Forks, edited prompts and "compact up to here": the actions that branch or fold history at
a message the user chose.

A fork is a new conversation holding its parent's messages up to a message (the parent is
never touched); editing one of your prompts forks at the message before it, so the edited
prompt is sent there with exactly the history that preceded the original.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_chat.core.attachments import Attachment, refs
from tui_chat.core.family import Branch, Divergence, Family, divergences
from tui_chat.core.models import Conversation, Fork, Message, SearchHit, Summary
from tui_chat.core.turns import starts_turn
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.engine.files.attachments import load_attachments
from tui_chat.store.errors import NotFound
from tui_chat.store.repository import Store

FORK_SUFFIX = " (fork)"
EDIT_SUFFIX = " (edited)"


class EditError(ValueError):
    """A message that cannot be edited (only your own prompts can)."""


class BranchError(ValueError):
    """A branch that is not one of the family's, or no other version to switch to."""


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """A divergence of the branch on screen, with its message there."""

    divergence: Divergence
    message_id: int


@dataclass(frozen=True, slots=True)
class BranchPath:
    """Which branch of its family a conversation is, and where its path parts from others."""

    family: Family
    branch: Branch
    points: tuple[BranchPoint, ...]

    @property
    def number(self) -> int:
        """The branch's place in its family (1-based, oldest first)."""
        return [b.id for b in self.family.branches].index(self.branch.id) + 1

    def describe(self) -> str:
        """One line: ``branch 2 of 3 of “Title” · ‹ 2/2 › at #57`` ('' with no branches)."""
        if len(self.family.branches) < 2:
            return ""
        root = self.family.root
        where = "the first" if root.id == self.branch.id else f"of “{root.title}”"
        text = f"branch {self.number} of {len(self.family.branches)} ({where})"
        if self.branch.parent_id is not None:
            text += f" · shares {self.branch.shared} messages with its parent"
        marks = ", ".join(f"{p.divergence.label} at #{p.message_id}" for p in self.points)
        return f"{text} · {marks}" if marks else text

    def point_at(self, message_id: int | None) -> BranchPoint | None:
        """The divergence a switch at ``message_id`` acts on: the nearest at or above it (the
        first when it is above them all; the last when no message is given)."""
        if not self.points:
            return None
        if message_id is None:
            return self.points[-1]
        above = [p for p in self.points if p.message_id <= message_id]
        return above[-1] if above else self.points[0]


class Branches:
    """Fork, edit and compact-up-to over one store."""

    def __init__(self, store: Store, worker: CompactionWorker) -> None:
        """Share the service's store and compaction worker.

        Args:
            store: The open store.
            worker: The compaction worker.
        """
        self.store = store
        self.worker = worker

    async def fork(
        self, conversation_id: str, at_message_id: int | None, title: str | None = None
    ) -> Conversation:
        """Fork a conversation after one of its messages.

        Args:
            conversation_id: The parent (left untouched).
            at_message_id: The parent's last message the fork holds (``None``: none).
            title: The fork's title (default: the parent's with " (fork)").

        Returns:
            The fork.

        Raises:
            NotFound: no such conversation, or the message is not one of its.
        """
        parent = await self.store.conversations.get(conversation_id)
        title = " ".join((title or "").split()) or parent.title + FORK_SUFFIX
        fork_id = await self.store.forks.fork(conversation_id, at_message_id, title)
        return await self.store.conversations.get(fork_id)

    async def fork_for_edit(self, message_id: int) -> tuple[Conversation, Message]:
        """Fork before one of your prompts so that an edited version can be sent in its place.

        Args:
            message_id: A user message that opens a turn.

        Returns:
            The fork (holding every message before the prompt) and the original prompt.

        Raises:
            EditError: the message is a reply or a tool result.
            NotFound: no such message.
        """
        message = await self.store.messages.get(message_id)
        if not starts_turn(message.role, message.content):
            raise EditError(
                f"message #{message_id} is not one of your prompts; only those can be edited"
            )
        before = await self.store.messages.history(
            message.conversation_id, before_id=message.id, limit=1, newest=True
        )
        parent = await self.store.conversations.get(message.conversation_id)
        fork = await self.fork(
            parent.id, before[-1].id if before else None, parent.title + EDIT_SUFFIX
        )
        return fork, message

    async def files_of(self, message: Message) -> list[Attachment]:
        """The files attached to a message, read back from the store (to edit its prompt).

        Raises:
            AttachmentError: a referenced file is missing from the store.
        """
        return await load_attachments(self.store, refs(message.content))

    async def parent(self, conversation_id: str) -> Fork | None:
        """Where a conversation was forked from (``None``: it is not a fork)."""
        return await self.store.forks.get(conversation_id)

    async def forks(self) -> dict[str, Fork]:
        """Every fork by its conversation id."""
        return await self.store.forks.all()

    # -- branches within a conversation -------------------------------------

    async def family(self, conversation_id: str) -> Family:
        """A conversation's family of branches (one query). Raises :class:`NotFound`."""
        return await self.store.forks.family(conversation_id)

    async def tree(self, conversation_id: str) -> tuple[Family, dict[str, int]]:
        """A family and each branch's first message of its own (two queries in all)."""
        family = await self.family(conversation_id)
        return family, await self.store.forks.first_own(family.id)

    async def families(self) -> tuple[dict[str, str], dict[str, str]]:
        """Conversation id -> family id of every branch, and family id -> branch it shows."""
        return await self.store.forks.families()

    async def path(self, conversation_id: str) -> BranchPath:
        """Which branch a conversation is and its divergences, with their messages."""
        family = await self.family(conversation_id)
        branch = family.get(conversation_id)
        assert branch is not None  # family() has it or raised
        found = divergences(family, conversation_id)
        ids = await self.store.forks.messages_at(conversation_id, [d.position for d in found])
        points = tuple(BranchPoint(d, ids[d.position]) for d in found if d.position in ids)
        return BranchPath(family, branch, points)

    async def viewed(self, conversation_id: str) -> None:
        """Remember the branch a family shows next time: written only when it changes, for a
        conversation with branches, and never on a read-only database."""
        forks = self.store.forks
        if self.store.access.read_only:
            return
        family_id = await forks.family_id(conversation_id)
        if await forks.shown(family_id) == conversation_id:
            return
        if family_id == conversation_id and not await forks.has_branches(family_id):
            return  # a conversation with no branches: nothing to remember
        await forks.show(conversation_id)

    async def switch(self, conversation_id: str, branch_ref: str) -> Branch:
        """Make a branch of ``conversation_id``'s family the one it shows.

        Args:
            conversation_id: Any branch of the family.
            branch_ref: The branch: an id, a unique id prefix, or its number in the family.

        Raises:
            BranchError: no such branch in the family.
        """
        family = await self.family(conversation_id)
        ref = branch_ref.strip()
        chosen = [b for b in family.branches if b.id == ref]
        if not chosen and len(ref) < 4 and ref.isdigit() and 0 < int(ref) <= len(family.branches):
            chosen = [family.branches[int(ref) - 1]]  # a number before an id prefix of digits
        chosen = chosen or [b for b in family.branches if ref and b.id.startswith(ref)]
        if len(chosen) != 1:
            names = ", ".join(b.id for b in family.branches)
            raise BranchError(f"{branch_ref!r} is not one branch of this conversation ({names})")
        await self.store.forks.show(chosen[0].id)
        return chosen[0]

    async def sibling(
        self, conversation_id: str, delta: int, at_message_id: int | None = None
    ) -> tuple[str, int | None, Divergence]:
        """The other version ``delta`` steps away at the divergence nearest ``at_message_id``.

        Returns:
            The branch showing it, its message there, and the divergence (as seen from there).

        Raises:
            BranchError: the conversation has no divergence.
        """
        path = await self.path(conversation_id)
        point = path.point_at(at_message_id)
        if point is None:
            raise BranchError("this conversation has no other version of any message")
        target = point.divergence.step(delta)
        family = await self.family(target)
        there = next(
            (d for d in divergences(family, target) if d.position == point.divergence.position),
            point.divergence,
        )
        ids = await self.store.forks.messages_at(target, [there.position])
        return target, ids.get(there.position), there

    async def distinct_hits(self, hits: list[SearchHit], limit: int) -> list[SearchHit]:
        """Search hits with a message shared by branches listed once (the copy in the branch
        its conversation shows, else the first found), best first, at most ``limit``."""
        members, shown = await self.store.forks.families()
        kept: dict[tuple[str, str, str, str], int] = {}
        out: list[SearchHit] = []
        for hit in hits:
            family = members.get(hit.conversation_id, hit.conversation_id)
            key = (family, hit.role, hit.created_at, hit.snippet)
            if key not in kept:
                kept[key] = len(out)
                out.append(hit)
            elif shown.get(family) == hit.conversation_id:
                out[kept[key]] = hit
        return out[:limit]

    async def compact_upto(
        self, conversation_id: str, message_id: int, instructions: str | None = None
    ) -> Summary:
        """Fold every whole turn up to ``message_id``'s turn into a new version.

        Raises:
            CompactionError: the message is already summarised, not in the conversation, its
                turn has no answer yet, or the summary failed.
        """
        try:
            message = await self.store.messages.get(message_id)
        except NotFound:
            raise CompactionError(f"there is no message #{message_id}") from None
        if message.conversation_id != conversation_id:
            raise CompactionError(f"message #{message_id} is not in this conversation")
        await self.worker.wait(conversation_id)
        return await self.worker.compact(
            conversation_id, trigger="manual", instructions=instructions, upto=message_id
        )
