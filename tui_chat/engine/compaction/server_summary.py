"""The ``server`` summarizer: Claude's on-demand compaction, run by the compaction worker.

The worker already follows the documented background pattern ("Compaction in the
background"): the boundary is fixed when the work starts, the conversation goes on with the
full history meanwhile, no second compaction starts, and the new version replaces exactly the
messages it covers when it arrives, the turns that came meanwhile staying after it.

The compaction request is the chat request's shape for the covered span: the same ``system``
(base prompt and memory block), the parent version's block first when the parent is a
``server`` version, and the span's messages as the chat sends them. The returned block is
stored with the version and sent back unchanged while the version is active; its text is what
the timeline, the inspector, diffs and search show. Regenerate instructions are passed as the
request's ``instructions``, which the API documents as replacing its summarization prompt.

A model or endpoint without the feature (:class:`ChatError` ``unsupported``: it refused the
parameter, or it ignored it and answered with a plain reply) is remembered per
model, announced once, and the ``claude`` summarizer writes this version instead; later
versions for that model go straight to ``claude``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from tui_chat.core.models import Conversation
from tui_chat.core.policy import Policy
from tui_chat.core.request import ContextInputs, build_request, fresh_timeline
from tui_chat.core.summarize import SummaryError, SummaryInput, SummaryOutput
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.compaction.summarizers import Summarizer
from tui_chat.engine.files.attachments import expand_request
from tui_chat.llm.client import ClaudeClient
from tui_chat.llm.errors import ChatError
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store

__all__ = ["CompactionSupport", "ServerSummarizer", "compaction_request"]


class CompactionSupport(Protocol):
    """Where the models without on-demand compaction are remembered."""

    async def unsupported(self, model: str) -> str | None:
        """Why ``model`` cannot compact on the server, or ``None`` when it is not known to fail."""
        ...

    async def remember(self, model: str, reason: str) -> None:
        """Record that ``model`` cannot compact on the server."""
        ...


async def compaction_request(
    store: Store,
    conversation: Conversation,
    policy: Policy,
    info: ModelInfo,
    counter: TokenCounter,
    request: SummaryInput,
) -> dict[str, Any]:
    """The compaction request for a span: the chat request's shape up to its last message.

    Args:
        store: The open store (pinned messages).
        conversation: The conversation.
        policy: Its policy (recall is left out: the span itself is sent).
        info: Its model's figures.
        counter: The token counter.
        request: The version being made (parent and span).
    """
    inputs = ContextInputs(
        model=conversation.model,
        context_window=info.context_window,
        max_output=policy.summarizer_max_tokens,
        system_prompt=conversation.system_prompt,
        policy=replace(policy, recall=False, single_user_message=False),
        summary=request.previous,
        anchors=await store.anchors.pinned(conversation.id),
        recalled=[],
        raw_messages=list(request.messages),
        new_message=None,
        counter=counter,
    )
    built = build_request(inputs, fresh_timeline(inputs))
    return await expand_request(store, built.request)


class ServerSummarizer:
    """On-demand compaction behind the summarizer interface, with its ``claude`` fallback.

    Args:
        client: The Claude client.
        model: The conversation's model (the one that compacts).
        render: Builds the compaction request for a version.
        fallback: The ``claude`` summarizer used when compaction is unsupported.
        support: Remembers unsupported models.
        notify: Told once, with the model and the reason, when compaction falls back.
        timeout: Seconds before the call is abandoned.
    """

    def __init__(
        self,
        client: ClaudeClient,
        model: str,
        render: Callable[[SummaryInput], Awaitable[dict[str, Any]]],
        fallback: Summarizer,
        support: CompactionSupport,
        notify: Callable[[str, str], None],
        timeout: float,
    ) -> None:
        self._client = client
        self._model = model
        self._render = render
        self._fallback = fallback
        self._support = support
        self._notify = notify
        self._timeout = timeout
        self.name = f"server:{model}"

    async def summarize(self, request: SummaryInput) -> SummaryOutput:
        """Compact on the server, or let ``claude`` write the version when unsupported.

        Raises:
            SummaryError: When the compaction fails for any other reason (recorded on the
                version; the history is kept as it is).
        """
        if await self._support.unsupported(self._model) is not None:
            return await self._fallback.summarize(request)
        body = await self._render(request)
        try:
            async with asyncio.timeout(self._timeout):
                result = await self._client.compact(body, instructions=request.instructions)
        except ChatError as exc:
            if exc.kind != "unsupported":
                raise SummaryError(f"{exc.message} ({exc.kind})") from None
            await self._support.remember(self._model, exc.message)
            self._notify(self._model, exc.message)
            return await self._fallback.summarize(request)
        except TimeoutError:
            raise SummaryError(f"the compaction timed out after {self._timeout:g} s") from None
        return SummaryOutput(
            text=result.text,
            segments=(),
            summarizer=self.name,
            usage=result.usage,
            compaction_block=result.block,
            call_model=self._model,
        )
