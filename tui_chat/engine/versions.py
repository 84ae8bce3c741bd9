"""Compaction and summary versions: the part of :class:`ChatService` that manages versions.

:class:`SummaryVersions` is a mixin: :class:`~tui_chat.engine.service.ChatService` inherits
these actions and provides the store, the worker, the counter and the policy they use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_chat.core import ledger
from tui_chat.core.ledger import Retention
from tui_chat.core.models import Conversation, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request.budget import ledger_budget
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.assemble import window_for
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.engine.due import due_versions
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store

__all__ = ["SummaryVersions"]


class SummaryVersions:
    """Compact now, list, show, roll back and regenerate summary versions."""

    store: Store
    worker: CompactionWorker
    counter: TokenCounter

    if TYPE_CHECKING:  # provided by ChatService

        def policy_for(self, conversation: Conversation) -> Policy: ...

        def info_for(self, model: str) -> ModelInfo: ...

        def _invalidate(self, conversation_id: str) -> None: ...

    async def compact(
        self,
        conversation_id: str,
        instructions: str | None = None,
        progress: Callable[[int, int, Summary], None] | None = None,
    ) -> Summary:
        """Compact now (manual): fold everything that is due, and return the newest version.

        The first version folds what the policy lets a manual compaction fold; then versions
        follow while whole blocks are still due (the ``turns`` preset folds one block of
        ``every_turns`` turns per version), so an imported conversation is ready at once.

        Args:
            conversation_id: The conversation.
            instructions: User instructions for the summarizer (every version gets them).
            progress: Called after each version with ``(done, expected, version)``.

        Raises:
            CompactionError: nothing to fold, or a version failed (earlier versions stay).
        """
        await self.worker.wait(conversation_id)
        policy = self.policy_for(await self.store.conversations.get(conversation_id))
        expected = await due_versions(self.store, policy, conversation_id)
        summary = await self.worker.compact(
            conversation_id, trigger="manual", instructions=instructions
        )
        done = 1
        while True:
            if progress is not None:
                progress(done, max(expected, done), summary)
            if await due_versions(self.store, policy, conversation_id, manual=False) <= 0:
                return summary
            summary = await self.worker.compact(
                conversation_id, trigger="manual", instructions=instructions
            )
            done += 1

    async def retention(self, conversation_id: str, summary: Summary) -> Retention:
        """Which identifiers of the messages a version covers its memory keeps, per kind.

        The memory is the version's summary text plus its identifier ledger as the request
        sends it (within the ledger budget at the conversation's window).

        Args:
            conversation_id: The conversation.
            summary: One of its versions.

        Returns:
            Kept and total identifiers per kind, and those not kept.
        """
        conversation = await self.store.conversations.get(conversation_id)
        policy = self.policy_for(conversation)
        usable = window_for(self.info_for(conversation.model), policy).usable
        entries = ledger.from_json(summary.ledger)
        budget = ledger_budget(policy, usable)
        sent, _ = ledger.render(entries, budget, self.counter, already=summary.text)
        kept_text = f"{summary.text}\n{sent}"
        if await self._ledger_complete(conversation_id, summary):
            return ledger.ledger_retention(entries, kept_text)
        covered = await self.store.messages.texts(
            conversation_id, up_to_id=summary.covers_to_message_id
        )
        return ledger.retention(covered, kept_text)

    async def _ledger_complete(self, conversation_id: str, summary: Summary) -> bool:
        """Whether a version's ledger holds every identifier of the messages it covers.

        Every version's ledger is its parent's plus its own span (:func:`ledger.build`), so it
        is complete unless a version of its chain has none: one made before ledgers existed
        (or one whose messages hold no identifier at all, which the caller then reads whole).
        """
        versions = {s.id: s for s in await self.store.summaries.versions(conversation_id)}
        node = summary
        seen: set[int] = set()
        while node.ledger and node.id not in seen:
            seen.add(node.id)
            if node.parent_id is None:
                return True
            parent = versions.get(node.parent_id)
            if parent is None:
                return False
            node = parent
        return False

    async def summaries(self, conversation_id: str) -> list[Summary]:
        """Every version, newest first."""
        return await self.store.summaries.versions(conversation_id)

    async def summary(self, conversation_id: str, version: int) -> Summary:
        """One version."""
        return await self.store.summaries.get_version(conversation_id, version)

    async def activate(self, conversation_id: str, version: int) -> Summary | None:
        """Roll back or forward to a completed version (0 = send no summary at all)."""
        if version == 0:
            await self.store.summaries.activate(conversation_id, None)
            self._invalidate(conversation_id)
            return None
        summary = await self.store.summaries.get_version(conversation_id, version)
        await self.store.summaries.activate(conversation_id, summary.id)
        self._invalidate(conversation_id)
        return summary

    async def regenerate(
        self, conversation_id: str, version: int, instructions: str | None = None
    ) -> Summary:
        """A new version over the same coverage as ``version``; the old one is kept."""
        old = await self.store.summaries.get_version(conversation_id, version)
        if old.status != "completed":
            raise CompactionError(f"version {version} is {old.status}; regenerate a completed one")
        await self.worker.wait(conversation_id)
        new = await self.worker.compact(
            conversation_id, trigger="regenerate", instructions=instructions, regenerate=old
        )
        # A regenerated version replaces the one it regenerates when that one was in force.
        conversation = await self.store.conversations.get(conversation_id)
        if conversation.active_summary_id == old.id:
            await self.store.summaries.activate(conversation_id, new.id)
        self._invalidate(conversation_id)
        return await self.store.summaries.get(new.id)

    async def compaction_paused(self, conversation_id: str) -> bool:
        """True when auto-compaction paused after three failures (manual still works)."""
        return await self.worker.paused(conversation_id)

    async def finish_background(self) -> None:
        """Let due compactions finish (a one-shot CLI send calls this before exiting)."""
        await self.worker.wait()
