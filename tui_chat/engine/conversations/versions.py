"""Compaction and summary versions: :class:`Summaries`, the use-case service that manages them.

:class:`~tui_chat.engine.service.ChatService` holds one as ``service.summaries``; it is built
from the engine context (store, counter, policies) and the compaction worker.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace

from tui_chat.core.ledger import Retention
from tui_chat.core.models import Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request.budget import ledger_budget
from tui_chat.core.sent_memory import memory_retention
from tui_chat.engine.build.assemble import window_for
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.engine.compaction.due import due_versions

__all__ = ["Summaries"]


class KeptFigures:
    """Retention figures already worked out, by version and settings (a version's figure
    changes only with the settings): the ``(kept, total)`` pair of many versions (the timeline
    lists every one) and the whole per-kind answer of the last few (the inspector and the CLI
    show one at a time), so a long list of versions holds no per-identifier detail."""

    FIGURES = 4_096
    FULL = 8

    def __init__(self) -> None:
        """Nothing kept yet."""
        self.figures: dict[tuple[object, ...], tuple[int, int]] = {}
        self.full: OrderedDict[tuple[object, ...], Retention] = OrderedDict()

    def clear(self) -> None:
        """Forget every figure."""
        self.figures.clear()
        self.full.clear()

    def get(self, key: tuple[object, ...]) -> Retention | None:
        """The whole answer for ``key``, if it is still kept."""
        found = self.full.get(key)
        if found is not None:
            self.full.move_to_end(key)
        return found

    def put(self, key: tuple[object, ...], retention: Retention) -> None:
        """Keep an answer (and its pair)."""
        self.full[key] = retention
        self.full.move_to_end(key)
        while len(self.full) > self.FULL:
            self.full.popitem(last=False)
        if len(self.figures) >= self.FIGURES:
            self.figures.clear()
        self.figures[key] = (sum(retention.kept.values()), sum(retention.total.values()))


class Summaries:
    """Compact now, list, show, roll back and regenerate summary versions."""

    def __init__(self, context: EngineContext, worker: CompactionWorker) -> None:
        """Work on the versions of the conversations of ``context``'s store.

        Args:
            context: The engine's store, counter and policies.
            worker: The compaction worker that makes new versions.
        """
        self.store = context.store
        self.counter = context.counter
        self.policy_for = context.policy_for
        self.info_for = context.info_for
        self.worker = worker
        self.kept = KeptFigures()
        """Retention figures already worked out."""
        worker.listing = self.listing  # a finished version's event carries the versions

    async def listing(self, conversation_id: str) -> tuple[tuple[Summary, ...], int | None]:
        """Every version (as :meth:`versions`) and the one in force."""
        versions = tuple(await self.versions(conversation_id))
        conversation = await self.store.conversations.get(conversation_id)
        return versions, conversation.active_summary_id

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

        The one retention figure of a version (:func:`~tui_chat.core.sent_memory.
        memory_retention`): its summary section and its identifier ledger as the request sends
        them at the conversation's settings now (window or working budget, pins). The
        versions :meth:`versions` and :meth:`version` return carry the same figure.

        Args:
            conversation_id: The conversation.
            summary: One of its versions.

        Returns:
            Kept and total identifiers per kind, and those not kept.
        """
        versions = await self.store.summaries.versions(conversation_id)
        settings = await self._memory_settings(conversation_id)
        return await self._retention(conversation_id, summary, versions, settings)

    async def _memory_settings(self, conversation_id: str) -> tuple[Policy, int, tuple[int, ...]]:
        """What the memory block is laid out with: the policy, the usable tokens, the pins."""
        conversation = await self.store.conversations.get(conversation_id)
        policy = self.policy_for(conversation)
        usable = window_for(self.info_for(conversation.model), policy).usable
        pinned = tuple(sorted(await self.store.anchors.pinned_ids(conversation_id)))
        return policy, usable, pinned

    async def _retention(
        self,
        conversation_id: str,
        summary: Summary,
        versions: Sequence[Summary],
        settings: tuple[Policy, int, tuple[int, ...]],
    ) -> Retention:
        memo = self.kept
        key = _key(summary, settings)
        found = memo.get(key)
        if found is not None:
            return found
        policy, usable, pinned = settings
        sources: list[str] | None = None
        if not _ledger_complete(summary, versions):
            sources = await self.store.messages.texts(
                conversation_id, up_to_id=summary.covers_to_message_id
            )
        found = await asyncio.to_thread(
            memory_retention, summary, policy, usable, self.counter, pinned, sources
        )
        memo.put(key, found)
        return found

    async def _with_retention(
        self, conversation_id: str, summaries: Sequence[Summary], versions: Sequence[Summary]
    ) -> list[Summary]:
        """``summaries`` with ``identifiers_kept``/``identifiers_total`` set to their one
        retention figure (:meth:`retention`; ``versions``: all of the conversation's); versions
        not completed are left as stored."""
        out: list[Summary] = []
        settings = None
        for summary in summaries:
            if summary.status != "completed":
                out.append(summary)
                continue
            settings = settings or await self._memory_settings(conversation_id)
            pair = self.kept.figures.get(_key(summary, settings))
            if pair is None:
                kept = await self._retention(conversation_id, summary, versions, settings)
                pair = (sum(kept.kept.values()), sum(kept.total.values()))
            out.append(replace(summary, identifiers_kept=pair[0], identifiers_total=pair[1]))
        return out

    async def versions(self, conversation_id: str) -> list[Summary]:
        """Every version, newest first, each with its retention figure (:meth:`retention`)."""
        versions = await self.store.summaries.versions(conversation_id)
        return await self._with_retention(conversation_id, versions, versions)

    async def version(self, conversation_id: str, version: int) -> Summary:
        """One version, with its retention figure (:meth:`retention`)."""
        wanted = await self.store.summaries.get_version(conversation_id, version)
        versions = await self.store.summaries.versions(conversation_id)
        return (await self._with_retention(conversation_id, [wanted], versions))[0]

    async def activate(self, conversation_id: str, version: int) -> Summary | None:
        """Roll back or forward to a completed version (0 = send no summary at all)."""
        if version == 0:
            await self.store.summaries.activate(conversation_id, None)
            return None
        summary = await self.store.summaries.get_version(conversation_id, version)
        await self.store.summaries.activate(conversation_id, summary.id)
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
        return await self.store.summaries.get(new.id)

    async def paused(self, conversation_id: str) -> bool:
        """True when auto-compaction paused after three failures (manual still works)."""
        return await self.worker.paused(conversation_id)


def _ledger_complete(summary: Summary, versions: Sequence[Summary]) -> bool:
    """Whether a version's ledger holds every identifier of the messages it covers.

    Every version's ledger is its parent's plus its own span (:func:`ledger.build`), so it is
    complete unless a version of its chain has none: one made before ledgers existed (or one
    whose messages hold no identifier at all, which the caller then reads whole).
    """
    by_id = {s.id: s for s in versions}
    node = summary
    seen: set[int] = set()
    while node.ledger and node.id not in seen:
        seen.add(node.id)
        if node.parent_id is None:
            return True
        parent = by_id.get(node.parent_id)
        if parent is None:
            return False
        node = parent
    return False


def _key(summary: Summary, settings: tuple[Policy, int, tuple[int, ...]]) -> tuple[object, ...]:
    """What a version's retention figure depends on: the version and the memory's budgets."""
    policy, usable, pinned = settings
    return (
        summary.id,
        summary.status,
        policy.summary_max_tokens,
        ledger_budget(policy, usable),
        pinned,
    )
