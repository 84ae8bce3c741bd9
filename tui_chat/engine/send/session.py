"""Sending a turn: persist the user's message first, stream the reply, store it honestly.

Nothing the user typed is ever lost: the user message is committed before any network call.
The reply row exists from the first moment (``streaming``), partial text is flushed while it
streams, and the row ends ``complete``, ``incomplete`` (cut off, cancelled, dropped, the
process told to stop) or ``error`` (nothing arrived). A message bigger than the usable window
is refused before anything is stored or sent (:class:`MessageTooLarge`), and one conversation
takes one send at a time, across processes (:class:`~tui_chat.engine.send.lock.SendLock`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from tui_chat.core.attachments import Attachment, AttachmentError, check_request, message_text
from tui_chat.core.models import ContentBlock, Conversation, Message, MessageStatus
from tui_chat.core.policy import Policy
from tui_chat.core.request import BuiltRequest
from tui_chat.core.request.bound_thinking import bind
from tui_chat.core.tokens import update_calibration
from tui_chat.core.triggers import emergency_due
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.build.requests import Requests
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.engine.conversations.drafts import Drafts
from tui_chat.engine.events import (
    EventCallback,
    FileUploading,
    ReplyDelta,
    ReplyFinished,
    ReplyStarted,
    SendWaiting,
    UserMessageSaved,
)
from tui_chat.engine.failures import explain_refusal
from tui_chat.engine.files.attachments import store_attachments
from tui_chat.engine.send.diagnostics import refused_diagnostics, with_diagnostics
from tui_chat.engine.send.lock import SendLock
from tui_chat.engine.send.partial import PartialReply
from tui_chat.engine.send.paused import stream_to_end
from tui_chat.engine.send.text_form import block_refused, fallback_note, text_form, with_note
from tui_chat.engine.send.tool_turns import (
    CANCELLED,
    CUT_OFF,
    MAX_TOOL_ROUNDS,
    ROUND_LIMIT,
    ToolTurns,
    asks_for_tools,
    with_loop_thinking,
)
from tui_chat.engine.tools.calls import Approver
from tui_chat.engine.usage.usage import conversation_costs
from tui_chat.llm.client import StreamResult
from tui_chat.llm.errors import ChatError

FLUSH_SECONDS = 0.5
"""How often partial reply text is written to the database while streaming."""


LARGE_MESSAGE_TOKENS = 1_000
"""Below this many tokens a message cannot outgrow a usable window; above it, it is checked."""


class EmptyMessage(ValueError):
    """The user tried to send nothing."""


class MessageTooLarge(ValueError):
    """The message alone is bigger than the usable window; nothing was sent, and its text (and
    files) are kept as the conversation's draft (:attr:`text`)."""

    def __init__(self, text: str, tokens: int, usable: int, window: int, max_output: int) -> None:
        super().__init__(
            f"the message is {tokens:,} tokens, more than the {usable:,} tokens this "
            f"conversation's model can take (window {window:,} - reply {max_output:,}); "
            "nothing was sent and the message is kept as the conversation's draft — "
            "split it or shorten it"
        )
        self.text = text
        self.tokens = tokens
        self.usable = usable


@dataclass(frozen=True, slots=True)
class SendOutcome:
    """What a send produced."""

    user: Message | None
    reply: Message
    error: ChatError | None
    request: BuiltRequest
    notice: str | None = None
    """Something the sender should hear although the reply came (the text form of a summary
    sent where the endpoint refused its compaction block)."""


class ChatSession:
    """Sends turns of conversations held in one store."""

    def __init__(
        self, context: EngineContext, requests: Requests, worker: CompactionWorker
    ) -> None:
        """Create a session.

        Args:
            context: The engine's store, client, counter, policies and catalog (the endpoint's
                model list, read again before a send when a day old).
            requests: Builds the requests it sends.
            worker: The compaction worker (emergency compaction, poke after replies).
        """
        self.store = context.store
        self.client = context.client
        self.counter = context.counter
        self.worker = worker
        self.text_form_only = False
        """The endpoint refused a summary's compaction block: versions are sent as text."""
        self.requests = requests
        self.policy_for = context.policy_for
        self.info_for = context.info_for
        self.catalog = context.catalog
        self.files = context.files
        self.send_lock = SendLock(context.store.send_leases)
        self.tool_turns = ToolTurns(context.store, context.counter, context.tool_calls)

    async def send(
        self,
        conversation_id: str,
        text: str,
        on_event: EventCallback | None = None,
        attachments: Sequence[Attachment] = (),
        approve: Approver | None = None,
    ) -> SendOutcome:
        """Store the user's message (with its attached files), then stream and store the reply
        (and, while the model asks for tools, their results and the next reply; a call runs
        only with ``approve``'s or a standing approval).

        Raises:
            EmptyMessage: ``text`` is blank and nothing is attached (nothing is stored).
            AttachmentError: the files break a per-request limit (nothing is stored).
        """
        if not text.strip() and not attachments:
            raise EmptyMessage("the message is empty")
        refs = [a.ref() for a in attachments]
        check_request(refs)
        # Files first: Claude reads images and documents best before the question.
        content = [*refs, *([{"type": "text", "text": text}] if text.strip() else [])]
        tokens = self.counter.count_message("user", content)
        if tokens > LARGE_MESSAGE_TOKENS:
            await self._check_size(conversation_id, text, tokens, attachments)
        async with self._turn(conversation_id, on_event):
            await store_attachments(self.store, attachments)
            user = await self.store.messages.add(
                conversation_id,
                role="user",
                content=content,
                text=message_text(text, refs),
                token_count=tokens,
                clear_draft=True,  # the sent prompt never comes back to the composer
            )
            if on_event:
                on_event(UserMessageSaved(user))
            outcome = await self._replies(conversation_id, on_event, approve)
        return SendOutcome(user, outcome.reply, outcome.error, outcome.request, outcome.notice)

    async def reply(
        self,
        conversation_id: str,
        on_event: EventCallback | None = None,
        approve: Approver | None = None,
    ) -> SendOutcome:
        """Stream a reply to the stored history (retry), holding the send lease."""
        async with self._turn(conversation_id, on_event):
            return await self._replies(conversation_id, on_event, approve)

    async def _replies(
        self, conversation_id: str, on_event: EventCallback | None, approve: Approver | None
    ) -> SendOutcome:
        """The reply, and the tool rounds it starts (engine/send/tool_turns.py)."""
        turns = self.tool_turns
        try:
            outcome = await self._reply(conversation_id, on_event)
            notice = outcome.notice  # said once, whichever round of tools follows
            for round_ in range(MAX_TOOL_ROUNDS + 1):
                if not asks_for_tools(outcome.reply):
                    break
                if round_ == MAX_TOOL_ROUNDS:  # answered, and one more reply to wrap up
                    await turns.close(conversation_id, outcome.reply, ROUND_LIMIT, None, on_event)
                else:
                    await turns.answer(conversation_id, outcome.reply, approve, on_event)
                outcome = await self._reply(conversation_id, on_event)
            if outcome.reply.has_tool_use:  # cut off, or past the limit: answered all the same
                reason = ROUND_LIMIT if asks_for_tools(outcome.reply) else CUT_OFF
                await turns.close(conversation_id, outcome.reply, reason, None, on_event)
        except BaseException:
            await asyncio.shield(turns.close_last(conversation_id, CANCELLED, on_event))
            raise
        return replace(outcome, notice=outcome.notice or notice)

    def _turn(
        self, conversation_id: str, on_event: EventCallback | None
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """This conversation's send lease; a sender that must wait says so first."""

        def waiting(holder: str) -> None:
            if on_event:
                on_event(SendWaiting(conversation_id, holder))

        return self.send_lock.hold(conversation_id, waiting)

    async def _check_size(
        self, conversation_id: str, text: str, tokens: int, attachments: Sequence[Attachment]
    ) -> None:
        """Refuse a message the usable window cannot hold (the request builder never cuts
        the new message, so it would be sent whole and refused by the API)."""
        conversation = await self.store.conversations.get(conversation_id)
        built = await self.requests.build(conversation, text, attachments)
        b = built.breakdown
        needed = max(tokens, b.sections.get("new_message", 0))
        limit = b.window - b.max_output  # the model's limit: a budget only shapes the rest
        if needed <= limit:
            return
        # Never lost: the text becomes the draft (after any draft already there).
        kept = await self.store.drafts.get(conversation_id)
        if kept.strip() and kept != text:
            text = f"{kept}\n\n{text}"
        await self.store.drafts.set(conversation_id, text)
        if attachments:  # and the files stay attached to it
            await Drafts(self.store).add_files(conversation_id, attachments)
        raise MessageTooLarge(text, needed, limit, b.window, b.max_output)

    async def _reply(self, conversation_id: str, on_event: EventCallback | None) -> SendOutcome:
        """Stream a reply to the stored history (the caller holds the send lease)."""
        if self.catalog is not None:  # the model's window and output limit, at most daily
            await self.catalog.refresh_when_due()
        conversation = await self.store.conversations.get(conversation_id)
        policy = self.policy_for(conversation)
        summary = await self.store.summaries.active(conversation_id)
        if self.text_form_only:  # the endpoint refused a compaction block (send/text_form)
            summary = text_form(summary)
        built = await self.requests.build_with(conversation, policy, summary, None)
        if self.client.has_key and (
            not built.fits
            or built.dropped_message_ids  # compaction gets its chance before turns are left out
            or emergency_due(policy, built.breakdown.used, built.breakdown.usable)
        ):
            built = await self._emergency(conversation, policy, built)
        built = await with_loop_thinking(self.store, built)  # a tool loop's, where still bound
        reply = await self.store.messages.add(
            conversation_id,
            role="assistant",
            content=[],
            text="",
            token_count=0,
            status="streaming",
            model=conversation.model,
        )
        if on_event:
            on_event(ReplyStarted(reply))
        chunks: list[str] = []
        notice: str | None = None  # the text form sent for a refused compaction block
        partial = PartialReply()
        last_flush = time.monotonic()

        async def flush(delta: str, kind: Literal["text", "thinking"]) -> None:
            nonlocal last_flush
            partial.add(delta, kind)
            if kind == "text":
                chunks.append(delta)
            if on_event:
                on_event(ReplyDelta(reply.id, delta, kind))
            if time.monotonic() - last_flush >= FLUSH_SECONDS:
                last_flush = time.monotonic()
                await self.store.messages.keep_partial(reply.id, partial.content(), "".join(chunks))

        async def on_text(delta: str) -> None:
            await flush(delta, "text")

        async def on_thinking(delta: str) -> None:
            await flush(delta, "thinking")

        def on_block(block: ContentBlock) -> None:
            partial.add_block(block)
            if on_event:
                on_event(ReplyDelta(reply.id, "", "block", block))

        try:
            try:
                request = built.request
                if built.attachments:  # uploaded once where the endpoint has the Files API

                    def uploading(name: str, problem: str | None) -> None:
                        if on_event:
                            on_event(FileUploading(reply.id, name, problem))

                    request = await self.files.expand(built.request, on_upload=uploading)
            except AttachmentError as exc:
                problem = ChatError("too_large", str(exc), "fork before that file or remove it")
                result = StreamResult(content=[], text="", error=problem)
            else:
                # Cache diagnostics against the previous reply (engine/send/diagnostics.py).
                plain = request
                if self.client.diagnostics:
                    previous = await self.store.messages.api_id(built.sent_message_ids)
                    request = with_diagnostics(request, previous)
                # A reply its server tools paused (pause_turn) is continued (engine/send/paused.py).
                result = await stream_to_end(self.client, request, on_text, on_thinking, on_block)
                if refused_diagnostics(result):  # a gateway without them: never again here
                    self.client.diagnostics = False
                    request = plain
                    result = await stream_to_end(
                        self.client, request, on_text, on_thinking, on_block
                    )
                for inline in (False, True):  # a file_id the endpoint lost: upload again, inline
                    if not self.files.stale(result, request):
                        break
                    request = await self.files.renewed(built.request, request, inline=inline)
                    result = await stream_to_end(
                        self.client, request, on_text, on_thinking, on_block
                    )
                if block_refused(result, request) and (
                    (active := await self.store.summaries.active(conversation_id)) is not None
                ):  # an endpoint without server compaction: the version's text form instead
                    self.text_form_only = True
                    notice = fallback_note(active, result.error.message if result.error else "")
                    built = await self.requests.build_with(
                        conversation, policy, text_form(active), None
                    )
                    built = with_note(built, notice)
                    request = built.request
                    if built.attachments:
                        request = await self.files.expand(built.request)
                    result = await stream_to_end(
                        self.client, request, on_text, on_thinking, on_block
                    )
                if result.error is not None:  # a refused file or summary block is named
                    result.error = await explain_refusal(
                        self.store, conversation_id, result.error, built.request
                    )
        except BaseException as exc:
            # Cancelled (escape, a signal) or broken: keep every character that arrived.
            cancelled = isinstance(exc, asyncio.CancelledError)
            reason = (
                "the reply was cancelled"
                if cancelled
                else f"the reply stopped: {exc or type(exc).__name__}"
            )
            cut = StreamResult(
                content=partial.content(),  # thinking cut short has no signature: never sent
                text="".join(chunks),
                error=ChatError("incomplete", reason, "retry to ask again"),
            )
            finish = self._finish(conversation, reply, cut, built, on_event, cancelled=cancelled)
            await asyncio.shield(finish)
            raise
        # Its thinking is bound to this request's model and prefix (core/request/bound_thinking).
        result.content = bind(result.content, built.request)
        # Shielded too: a cancel that comes once the reply is stored (the sender saw it end)
        # never cuts the calibration or the compaction poke short.
        finish = self._finish(conversation, reply, result, built, on_event)
        finished = await asyncio.shield(finish)
        return SendOutcome(None, finished, result.error, built, notice)

    async def _emergency(
        self, conversation: Conversation, policy: Policy, built: BuiltRequest
    ) -> BuiltRequest:
        """Compact before sending a request that would not fit; rebuild afterwards."""
        await self.worker.wait(conversation.id)
        with contextlib.suppress(CompactionError):
            await self.worker.compact(conversation.id, trigger="emergency")
        summary = await self.store.summaries.active(conversation.id)
        if self.text_form_only:
            summary = text_form(summary)
        # The builder drops the oldest raw turns if even this does not fit.
        return await self.requests.build_with(conversation, policy, summary, None)

    async def _finish(
        self,
        conversation: Conversation,
        reply: Message,
        result: StreamResult,
        built: BuiltRequest,
        on_event: EventCallback | None,
        *,
        cancelled: bool = False,
    ) -> Message:
        status: MessageStatus
        if result.ok:
            status = "complete"
        elif result.text or result.content:
            status = "incomplete"
        else:
            status = "error"
        stop_reason = result.stop_reason
        # A refusal keeps its stop reason: it marks the turn refused (core/unanswered).
        if status == "error" and result.error is not None and result.error.kind != "refused":
            stop_reason = f"error:{result.error.kind}"
        stored = await self.store.messages.update(
            reply.id,
            content=result.content,
            text=result.text,
            token_count=self.counter.count_message("assistant", result.content),
            status=status,
            model=result.model or conversation.model,
            usage=result.usage if result.usage.total_input or result.usage.output_tokens else None,
            stop_reason=stop_reason,
            error=f"{result.error.message} — {result.error.hint}" if result.error else None,
            api_id=result.message_id,
        )
        # The reply is shown as stored at once; the calibration below never changes it.
        if on_event:
            costs = await conversation_costs(self.store, self.info_for, [conversation.id])
            on_event(
                ReplyFinished(
                    stored,
                    result.error,
                    cancelled,
                    result.usage_note,
                    breakdown=built.breakdown,
                    cost=costs[conversation.id],
                )
            )
        if result.usage.total_input > 0:
            ratio, samples = await self.store.calibration(conversation.model)
            ratio, samples = update_calibration(
                ratio, samples, built.breakdown.input_tokens, result.usage.total_input
            )
            await self.store.set_calibration(conversation.model, ratio, samples)
        # A continuation summary repeats this request, so its prefix is read from the cache.
        self.worker.sent.remember(conversation.id, built, stored)
        if status == "complete":
            self.worker.poke(conversation.id)
        return stored
