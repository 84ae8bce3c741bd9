"""Requests: the one front door of request building in the engine.

The exact next request (a send's, a preview's with a draft), the request without a draft the
gauge shows (kept while the conversation's revision in the store is the same, see
:meth:`TailCache.base <tui_chat.engine.build.tail.TailCache.base>`) and the projected size the
compaction triggers read. The chat session and the compaction worker are handed this object;
neither calls back into the service. The front ends reach it as ``service.requests``:
:meth:`Requests.context` (the exact next request, as the preview shows it) and
:meth:`Requests.gauge` (the token breakdown per keystroke).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tui_chat.core.attachments import Attachment
from tui_chat.core.models import Conversation, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request import Breakdown, BuiltRequest, draft_breakdown
from tui_chat.core.tokens import update_calibration
from tui_chat.engine.build.assemble import assemble
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.build.tail import TailCache
from tui_chat.engine.files.attachments import expand_request
from tui_chat.llm.errors import ChatError
from tui_chat.store.rows import clean_text


class Requests:
    """Builds the requests of every conversation of one engine, reusing what earlier builds
    prepared (one :class:`TailCache` entry per conversation)."""

    def __init__(self, context: EngineContext) -> None:
        self._engine = context
        self.tails = TailCache()  # what request builds reuse (engine/build/tail.py)

    async def build(
        self,
        conversation: Conversation,
        draft: str | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> BuiltRequest:
        """The exact request the next send would make (with ``draft`` and the files attached
        to it as the new message)."""
        policy = self._engine.policy_for(conversation)
        summary = await self._engine.store.summaries.active(conversation.id)
        return await self.build_with(conversation, policy, summary, draft, attachments)

    async def build_with(
        self,
        conversation: Conversation,
        policy: Policy,
        summary: Summary | None,
        draft: str | None,
        attachments: Sequence[Attachment] = (),
    ) -> BuiltRequest:
        """:meth:`build` with the policy and the active summary already read."""
        context = self._engine
        off = await context.tools_off(conversation.id)
        ratio, counted = await context.count_basis(conversation.model)
        built = await assemble(
            context.store,
            conversation,
            tools=context.tools.definitions(off),
            policy=policy,
            info=context.info_for(conversation.model),
            counter=context.counter,
            new_text=draft,
            summary=summary,
            calibration=ratio,
            new_files=[a.ref() for a in attachments],
            cache=self.tails,
        )
        return replace(built, breakdown=replace(built.breakdown, counted=counted))

    async def base(self, conversation: Conversation) -> BuiltRequest:
        """The next request without a draft, kept while the conversation's revision in the
        store (every write that can change a request counts it up, in any process), the
        conversation as given, the model's calibration and figures stay the same."""
        context = self._engine
        stamp = (
            await context.store.conversations.revision(conversation.id),
            conversation,
            await context.count_basis(conversation.model),
            context.info_for(conversation.model),
            context.tools.stamp(await context.tools_off(conversation.id)),
        )
        return await self.tails.base(conversation.id, stamp, lambda: self.build(conversation))

    async def projected(self, conversation: Conversation) -> tuple[int, int]:
        """``(request tokens, usable window)``: what the next request would be if nothing
        were dropped to fit, in calibrated tokens (the compaction triggers read it)."""
        built = await self.base(conversation)
        b = built.breakdown
        # The whole unsummarised history, not only the part the request had room for.
        store = self._engine.store
        active = await store.summaries.active(conversation.id)
        _, unsummarized = await store.messages.stats(
            conversation.id, after_id=active.covers_to_message_id if active else 0
        )
        local = b.input_tokens - b.sections.get("recent", 0) + unsummarized
        # Large tool results of older turns are cut before anything is folded: counted cut.
        local -= b.results_cuttable
        ratio = b.calibrated_tokens / b.input_tokens if b.input_tokens else 1.0
        # The same figure as the gauge and the fit check (Breakdown.used): never below local.
        return max(local, round(local * ratio)), b.usable

    async def context(
        self, conversation_id: str, draft: str | None = None, attachments: Sequence[Attachment] = ()
    ) -> BuiltRequest:
        """The exact next request (``draft`` and its attached files as the new message)."""
        store = self._engine.store
        conversation = await store.conversations.get(conversation_id)
        # Cleaned as a sent message is stored (no NUL, no lone surrogate); files alone are sent.
        text = None if draft is None and not attachments else clean_text(draft or "")
        if text is None:
            built = await self.base(conversation)  # the gauge's, kept by the revision
        else:
            built = await self.build(conversation, text, attachments)
        if not built.attachments:
            return built  # nothing to expand (the scan of every block is skipped)
        # Attached files as they are sent, not as the references stored: by ``file_id`` those
        # the endpoint already has (the Files API; nothing is uploaded for a preview), the
        # others as base64.
        ids = await self._engine.files.file_ids(built.request, upload=False)
        request = await expand_request(store, built.request, attachments, file_ids=ids)
        return replace(built, request=request)

    async def gauge(
        self, conversation_id: str, draft: str = "", attachments: Sequence[Attachment] = ()
    ) -> Breakdown:
        """The token breakdown with ``draft`` and the files attached to it counted; cheap
        enough to call per keystroke."""
        conversation = await self._engine.store.conversations.get(conversation_id)
        base = await self.base(conversation)  # kept while the revision is the same
        counter = self._engine.counter
        files = counter.count_content([a.ref() for a in attachments])
        return draft_breakdown(base, (counter.count(draft) if draft else 0) + files)

    async def check_count(self, conversation_id: str, draft: str = "") -> int | None:
        """Have the API count the next request (``count_tokens``, where a key is set) and
        fold the count into the model's calibration, so the gauge shows a learnt figure
        before the first reply on a model.

        Args:
            conversation_id: The conversation.
            draft: The composer's text, counted as the new message (a conversation with no
                message and no draft has nothing to count).

        Returns:
            The API's count, or ``None`` without a key, with nothing to count, or when the
            endpoint cannot count (a gateway without ``count_tokens``): the estimate then
            stays as it was.
        """
        context = self._engine
        if not context.client.has_key:
            return None
        built = await self.context(conversation_id, draft if draft.strip() else None)
        if not built.request.get("messages"):
            return None
        try:
            actual = await context.client.count_tokens(built.request)
        except ChatError:
            return None
        model = str(built.request.get("model") or "")
        ratio, samples = await context.store.calibration(model)
        if samples <= 0:
            ratio = await context.calibration(model)
        ratio, samples = update_calibration(ratio, samples, built.breakdown.input_tokens, actual)
        await context.store.set_calibration(model, ratio, samples)
        return actual
