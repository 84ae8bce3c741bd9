"""The compaction worker: folds older turns into versioned summaries in the background.

Safety rules (docs/design.md: "The worker", "What goes wrong in compaction systems"):

- the boundary (``covers_to_message_id``) is fixed when work starts, so messages that arrive
  meanwhile are never swallowed: they stay after the coverage and are sent raw;
- one in-progress row per conversation is the lease (owner + expiry, renewed while working);
  an expired lease is taken over and finished from its recorded boundary;
- the new version becomes active only if the active version is still its parent (CAS);
- a failure is recorded as ``failed`` with its error and never becomes summary text; retries
  back off, and three failures in a row pause auto-compaction for the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from tui_chat.core.models import Conversation, Message, Summary, SummaryTrigger
from tui_chat.core.policy import Policy
from tui_chat.core.request.budget import gist
from tui_chat.core.summarize import SummaryError, SummaryInput
from tui_chat.core.triggers import TriggerState, compaction_due, plan_boundary, recall_reserve
from tui_chat.core.unanswered import without_unanswered
from tui_chat.core.upto import BoundaryError, boundary_upto
from tui_chat.engine.build.assemble import window_for
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.build.requests import Requests
from tui_chat.engine.catalog import ListedSupport
from tui_chat.engine.compaction.errors import CompactionError as CompactionError
from tui_chat.engine.compaction.errors import NothingToCompact
from tui_chat.engine.compaction.fold import FoldRequest, chunk_turns, fold
from tui_chat.engine.compaction.gate import gate_summary
from tui_chat.engine.compaction.server_summary import ServerSummarizer, compaction_request
from tui_chat.engine.compaction.summarizers import (
    SentTurn,
    SentTurns,
    Summarizer,
    choose,
    rebuilt_turn,
)
from tui_chat.engine.compaction.version_result import version_result
from tui_chat.engine.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
)
from tui_chat.engine.files.attachments import AttachmentError
from tui_chat.store.errors import Conflict
from tui_chat.store.owners import new_owner
from tui_chat.store.summaries import SummaryStart

Listing = Callable[[str], Awaitable[tuple[tuple[Summary, ...], int | None]]]
"""Reads a conversation's versions (newest first) and the one in force."""

log = logging.getLogger(__name__)

LEASE_SECONDS = 90.0
BACKOFF_BASE_SECONDS = 5.0
BACKLOG_STEP_MESSAGES = 5_000
"""Most messages one compaction reads and folds. A longer backlog (an import, a conversation
never compacted) is folded one committed version per step: memory follows the step, not the
history, and a run that is killed resumes from the last version committed."""


class CompactionWorker:
    """Runs compactions for the conversations of one store, off the user's path."""

    def __init__(
        self,
        context: EngineContext,
        requests: Requests,
        *,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        """Create a worker.

        Args:
            context: The engine's store, client (Claude summaries), counter, policies and
                event bus (where compaction events go).
            requests: Builds a conversation's request: its projected size (the ``ratio``
                trigger) and, in a process that did not send the last chat request, that
                request again for a continuation summary.
            lease_seconds: Lease length; renewed every third of it while working.
        """
        self.store = context.store
        self.client = context.client
        self.counter = context.counter
        self.emit = context.bus.emit
        self.policy_for = context.policy_for
        self.info_for = context.info_for
        """A model's figures and prices (the configured overrides included)."""
        self.files = context.files
        self.requests = requests
        self.lease_seconds = lease_seconds
        self.owner = new_owner()  # host:pid:random, so a dead owner is seen at once
        self._tasks: dict[str, asyncio.Task[Summary | None]] = {}
        self.sent = SentTurns()
        """The last chat request of each conversation, for continuation summaries."""
        self._notices: dict[str, str] = {}
        self.listing: Listing | None = None
        """How a finished version's event reads the versions it carries (the summaries
        service hands its own, with the retention figures)."""

    # -- scheduling ----------------------------------------------------------------------

    def poke(self, conversation_id: str) -> None:
        """Check the triggers for a conversation in the background (after each reply)."""
        task = self._tasks.get(conversation_id)
        if task is not None and not task.done():
            return
        self._tasks[conversation_id] = asyncio.get_running_loop().create_task(
            self._auto(conversation_id), name=f"compaction-{conversation_id}"
        )

    async def wait(self, conversation_id: str | None = None) -> None:
        """Wait for background compactions (one conversation, or all) to finish."""
        tasks = [
            t for cid, t in self._tasks.items() if conversation_id is None or cid == conversation_id
        ]
        for task in tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task

    async def cancel_all(self) -> None:
        """Cancel background work (at shutdown); in-progress rows keep their lease to expire."""
        for task in self._tasks.values():
            task.cancel()
        await self.wait()

    async def _auto(self, conversation_id: str) -> Summary | None:
        try:
            return await self.maybe_compact(conversation_id)
        except Exception:  # the worker must never take the app down
            log.exception("auto compaction failed")
            return None

    # -- triggers ------------------------------------------------------------------------

    async def trigger_state(self, conversation: Conversation) -> TriggerState:
        """The figures the policy's triggers read."""
        active = await self.store.summaries.active(conversation.id)
        coverage = active.covers_to_message_id if active else 0
        _, tokens = await self.store.messages.stats(conversation.id, after_id=coverage)
        last = await self.store.messages.last(conversation.id)
        current_turn = last.turn if last else 0
        covered_turn = 0
        if active is not None:
            with contextlib.suppress(Exception):
                covered_turn = (await self.store.messages.get(active.covers_to_message_id)).turn
        complete_turns = max(0, current_turn - covered_turn)
        if last is not None and not (last.role == "assistant" and not last.has_tool_use):
            complete_turns = max(0, complete_turns - 1)
        projected, usable = await self.requests.projected(conversation)
        failures = await self.store.summaries.consecutive_failures(conversation.id)
        foldable = 0
        policy = self.policy_for(conversation)
        if policy.trigger == "cost":
            # What the next version would fold: planned on the same bounded window, so this
            # does not grow with an unsummarised backlog.
            raw = await self.planning_window(conversation.id, coverage)
            foldable = sum(m.token_count for m in raw[: plan_boundary(policy, raw)])
        last_turn = 0
        if policy.trigger == "budget" and last is not None:
            newest = await self.store.messages.history(conversation.id, limit=8, newest=True)
            last_turn = sum(m.token_count for m in newest if m.turn == last.turn)
        return TriggerState(
            unsummarized_tokens=tokens,
            unsummarized_turns=complete_turns,
            current_turn=current_turn,
            projected_tokens=projected,
            usable_window=usable,
            last_reduction=active.reduction if active else None,
            tokens_at_last_compaction=active.source_tokens if active else None,
            consecutive_failures=failures,
            foldable_tokens=foldable,
            summary_tokens=active.summary_tokens if active else 0,
            last_turn_tokens=last_turn,
            reserved_tokens=recall_reserve(policy, usable, active is not None, tokens),
        )

    async def backoff_remaining(self, conversation_id: str) -> float:
        """Seconds until the next automatic attempt may run after recent failures."""
        failures = await self.store.summaries.consecutive_failures(conversation_id)
        if failures == 0:
            return 0.0
        versions = await self.store.summaries.versions(conversation_id)
        newest = next((s for s in versions if s.status == "failed"), None)
        if newest is None or newest.completed_at is None:
            return 0.0
        failed_at = datetime.fromisoformat(newest.completed_at).timestamp()
        wait = BACKOFF_BASE_SECONDS * 2 ** (failures - 1)
        return float(max(0.0, failed_at + wait - time.time()))

    async def paused(self, conversation_id: str) -> bool:
        """True when auto-compaction is paused after three consecutive failures."""
        return await self.store.summaries.consecutive_failures(conversation_id) >= 3

    async def maybe_compact(self, conversation_id: str) -> Summary | None:
        """Take over an expired lease, or compact if the policy's trigger is due."""
        conversation = await self.store.conversations.get(conversation_id)
        taken = await self.store.summaries.take_over_expired(
            conversation_id, owner=self.owner, lease_seconds=self.lease_seconds
        )
        if taken is not None:
            return await self._work(conversation, taken)
        policy = self.policy_for(conversation)
        state = await self.trigger_state(conversation)
        reason = compaction_due(policy, state)
        if reason is None or await self.backoff_remaining(conversation_id) > 0:
            return None
        try:
            return await self.compact(conversation_id, trigger="auto")
        except CompactionError:
            return None

    # -- the work ------------------------------------------------------------------------

    async def compact(
        self,
        conversation_id: str,
        *,
        trigger: SummaryTrigger = "manual",
        instructions: str | None = None,
        regenerate: Summary | None = None,
        upto: int | None = None,
    ) -> Summary:
        """Run one compaction now and return the new version.

        Args:
            conversation_id: The conversation.
            trigger: Why it runs (``auto``, ``manual``, ``emergency``, ``regenerate``).
            instructions: User instructions for the summarizer.
            regenerate: Make a new version over this version's coverage, from its parent.
            upto: Fold every whole turn up to this message's turn ("compact up to here").

        Raises:
            CompactionError: nothing to fold, another compaction holds the lease, or the
                summary failed (the failure is recorded on the version row).
        """
        conversation = await self.store.conversations.get(conversation_id)
        policy = self.policy_for(conversation)
        # A version orphaned by a dead worker (expired lease) would block every new one:
        # finish it first, from the boundary it recorded.
        resumed: Summary | None = None
        taken = await self.store.summaries.take_over_expired(
            conversation_id, owner=self.owner, lease_seconds=self.lease_seconds
        )
        if taken is not None:
            with contextlib.suppress(CompactionError):
                resumed = await self._work(conversation, taken)
        span: list[Message] | None = None  # the span, when read here to plan it
        if regenerate is not None:
            parent_id = regenerate.parent_id
            parent = await self.store.summaries.get(parent_id) if parent_id else None
            covers_to = regenerate.covers_to_message_id
        else:
            parent = await self.store.summaries.active(conversation_id)
            after = parent.covers_to_message_id if parent else 0
            raw = (
                await self.planning_window(conversation_id, after)
                if upto is None
                else await self.store.messages.history(conversation_id, after_id=after)
            )
            if upto is not None:
                try:
                    count = boundary_upto(raw, upto, after)
                except BoundaryError as exc:
                    raise CompactionError(str(exc)) from None
            else:
                emergency = trigger == "emergency" and policy.trigger != "budget"
                count = plan_boundary(policy, raw, manual=trigger == "manual" or emergency)
            if count <= 0:
                if resumed is not None:
                    return resumed
                raise NothingToCompact("nothing to compact yet: too few complete turns")
            covers_to = raw[count - 1].id
            span = raw[:count]
        try:
            row = await self.store.summaries.begin(
                SummaryStart(
                    conversation_id,
                    parent_id=parent.id if parent else None,
                    strategy=policy.strategy,
                    covers_to_message_id=covers_to,
                    trigger=trigger,
                    owner=self.owner,
                    lease_seconds=self.lease_seconds,
                    instructions=instructions,
                )
            )
        except Conflict as exc:
            raise CompactionError(str(exc)) from None
        return await self._work(conversation, row, span)

    async def planning_window(self, conversation_id: str, after: int) -> list[Message]:
        """The messages after ``after`` that the next version may fold.

        All of them, unless there are more than :data:`BACKLOG_STEP_MESSAGES`: then the oldest
        that many (the policy then plans on that window, so the version ends on a whole turn
        inside it, and the next version goes on from there).
        """
        raw = await self.store.messages.history(
            conversation_id, after_id=after, limit=BACKLOG_STEP_MESSAGES + 1
        )
        return raw[:BACKLOG_STEP_MESSAGES]

    async def _work(
        self, conversation: Conversation, row: Summary, span: Sequence[Message] | None = None
    ) -> Summary:
        """Summarise the span a version row fixed, holding its lease.

        ``span``: the span's messages when the caller has just read them (they are read
        otherwise).
        """
        self.emit(CompactionStarted(conversation.id, row))
        renewer = asyncio.get_running_loop().create_task(self._renew(row.id))
        try:
            policy = self.policy_for(conversation)
            if row.trigger == "manual":
                # A compact the user asks for keeps a gist; recall carries the details.
                policy = gist(policy, window_for(self.info_for(conversation.model), policy).usable)
            parent = await self.store.summaries.get(row.parent_id) if row.parent_id else None
            after = parent.covers_to_message_id if parent else 0
            messages = span
            if messages is None:
                messages = await self.store.messages.history(
                    conversation.id, after_id=after, up_to_id=row.covers_to_message_id
                )
            if not messages:
                raise SummaryError("no messages in the span to summarise")
            # A failed or refused prompt stays out of the context, summaries included: a
            # summary that kept it would send it again in every later request (core/unanswered).
            messages = without_unanswered(messages, keep_last=False) or messages
            pinned = frozenset(await self.store.anchors.pinned_ids(conversation.id))
            used_ratio = 0.0
            # Only ``importance`` reads how full the window is: no request build otherwise.
            if policy.importance:
                projected, usable = await self.requests.projected(conversation)
                used_ratio = projected / usable if usable else 0.0
            chunks = chunk_turns(messages)
            later, rest = await self.store.messages.stats(conversation.id, after_id=messages[-1].id)
            sent = self.sent.get(conversation.id)
            carried = sum(m.token_count for m in messages) + rest
            if sent is None and len(chunks) == 1:
                sent = await self._rebuilt(conversation, policy, carried)
            sent = await self._as_sent(sent)
            output = await fold(
                self.summarizer_for(conversation, policy, chunks, later, sent),
                FoldRequest(conversation.id, policy, parent, row.instructions, pinned, used_ratio),
                chunks,
            )
            output = gate_summary(output, policy, self.counter)
            result = await asyncio.to_thread(
                version_result, output, messages, parent, self.counter, self.info_for
            )
            done, activated = await self.store.summaries.complete(
                row.id, result, owner=self.owner, activate_if_parent=True
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = str(exc) or type(exc).__name__
            failed: Summary | None = None
            with contextlib.suppress(Exception):
                failed = await self.store.summaries.fail(row.id, owner=self.owner, error=message)
            paused = await self.paused(conversation.id)
            self.emit(CompactionFailed(conversation.id, failed, message, paused))
            raise CompactionError(f"compaction failed: {message}") from exc
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        notice = self._notices.pop(conversation.id, None)
        versions, active = None, None
        if self.listing is not None:
            with contextlib.suppress(Exception):  # stored already: the event says it anyway
                versions, active = await self.listing(conversation.id)
        self.emit(CompactionFinished(conversation.id, done, activated, notice, versions, active))
        return done

    async def _renew(self, summary_id: int) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            if not await self.store.summaries.renew_lease(
                summary_id, owner=self.owner, lease_seconds=self.lease_seconds
            ):
                return

    def _request_room(self, policy: Policy, conversation: Conversation) -> int:
        """The most a chat request carries: the last one can only have held a span (and what
        follows it) up to this size, so a larger backlog is not rebuilt for nothing."""
        usable = self.info_for(conversation.model).usable_window
        return usable if policy.budget is None else min(usable, policy.budget)

    async def _as_sent(self, turn: SentTurn | None) -> SentTurn | None:
        """The turn as the API takes it: attached files' references replaced by their blocks
        (a turn whose files are gone or over a limit is not continued)."""
        if turn is None:
            return None
        try:
            # The files the chat request named by file_id are named again: the same prefix.
            return replace(turn, request=await self.files.expand(turn.request, upload=False))
        except AttachmentError:
            return None

    async def _rebuilt(
        self, conversation: Conversation, policy: Policy, carried: int
    ) -> SentTurn | None:
        """The last chat request rebuilt from the stored history, while its cache is warm
        (in a process that did not send it): only for a Claude summary, and only when that
        request can have carried the span and what follows it (``carried`` tokens)."""
        if not self.client.has_key:
            return None
        if policy.summarizer not in ("auto", "claude", "server"):
            return None
        if carried > self._request_room(policy, conversation):
            return None
        last = await self.store.messages.last(conversation.id)
        if last is None or last.role != "assistant":
            return None
        age = (datetime.now(UTC) - datetime.fromisoformat(last.created_at)).total_seconds()
        return rebuilt_turn(await self.requests.base(conversation), last, age)

    def summarizer_for(
        self,
        conversation: Conversation,
        policy: Policy,
        chunks: Sequence[Sequence[Message]],
        after: int = 0,
        sent: SentTurn | None = None,
    ) -> Summarizer:
        """The summarizer for one compaction (:mod:`.summarizers`); ``sent`` is
        the conversation's last chat request, when known (else the one this process sent)."""

        def server(fallback: Summarizer) -> Summarizer:
            async def render(request: SummaryInput) -> dict[str, object]:
                info = self.info_for(conversation.model)
                return await compaction_request(
                    self.store, conversation, policy, info, self.counter, request
                )

            def notify(model: str, reason: str) -> None:
                self._notices[conversation.id] = (
                    f"on-demand compaction is not available for {model} ({reason}); "
                    "the claude summarizer wrote this version and will from now on"
                )

            return ServerSummarizer(
                self.client,
                conversation.model,
                render,
                fallback,
                ListedSupport(self.store.compaction_support, self.info_for, notify),
                notify,
                policy.summarizer_timeout,
            )

        sent = sent or self.sent.get(conversation.id)
        return choose(self.client, conversation, policy, chunks, sent, server, after)
