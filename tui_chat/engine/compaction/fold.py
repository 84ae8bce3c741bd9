"""Folding one version's span into its parent: whole-turn chunks, one summarizer call each.

A span longer than one summarizer call takes is cut into chunks of whole turns of at most
:data:`SUMMARIZER_CHUNK_TOKENS` tokens; each chunk is folded into what the chunks before it
made, and the last output is the version's content (with every call's usage added up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tui_chat.core.models import Message, Summary, SummaryTrigger, Usage
from tui_chat.core.policy import Policy
from tui_chat.core.summarize import SummaryError, SummaryInput, SummaryOutput
from tui_chat.core.turns import group_turns
from tui_chat.engine.compaction.summarizers import Summarizer

__all__ = ["SUMMARIZER_CHUNK_TOKENS", "FoldRequest", "blank_summary", "chunk_turns", "fold"]

SUMMARIZER_CHUNK_TOKENS = 60_000
"""Largest slice of history one summary call folds; longer spans are folded in chunks."""


def chunk_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """``messages`` cut into whole-turn chunks of at most :data:`SUMMARIZER_CHUNK_TOKENS`
    tokens (a single turn over that is a chunk of its own).

    Args:
        messages: The span, oldest first.

    Returns:
        The chunks in order (one empty chunk for an empty span).
    """
    chunks: list[list[Message]] = [[]]
    chunk_tokens = 0
    for turn in group_turns(messages):
        tokens = sum(m.token_count for m in turn)
        if chunks[-1] and chunk_tokens + tokens > SUMMARIZER_CHUNK_TOKENS:
            chunks.append([])
            chunk_tokens = 0
        chunks[-1].extend(turn)
        chunk_tokens += tokens
    return chunks


@dataclass(frozen=True)
class FoldRequest:
    """What every chunk's call shares."""

    conversation_id: str
    policy: Policy
    parent: Summary | None
    """The version the span is folded into (``None`` for the first one)."""
    instructions: str | None
    pinned: frozenset[int]
    """Ids of pinned messages."""
    used_ratio: float
    """The request's share of the usable window (read only with ``importance``)."""


async def fold(
    summarizer: Summarizer, request: FoldRequest, chunks: Sequence[Sequence[Message]]
) -> SummaryOutput:
    """Fold ``chunks`` into ``request.parent``, one summarizer call per chunk.

    Args:
        summarizer: Makes each chunk's content.
        request: The version's shared inputs.
        chunks: The span in whole-turn chunks (:func:`chunk_turns`), at least one message.

    Returns:
        The last chunk's output, with the usage of every call.

    Raises:
        SummaryError: a call failed, or returned an empty summary.
    """
    previous = request.parent
    output: SummaryOutput | None = None
    usage: Usage | None = None
    for chunk in chunks:
        output = await summarizer.summarize(
            SummaryInput(
                policy=request.policy,
                previous=previous,
                messages=chunk,
                instructions=request.instructions,
                pinned_ids=request.pinned,
                used_ratio=request.used_ratio,
            )
        )
        if not output.text.strip():
            raise SummaryError("the summarizer returned an empty summary")
        usage = _sum_usage(usage, output.usage)
        base = previous or blank_summary(request.conversation_id, request.policy)
        previous = replace(
            base,
            text=output.text,
            segments=list(output.segments),
            fields=dict(output.fields),
            covers_to_message_id=chunk[-1].id,
            compaction_block=output.compaction_block,
        )
    if output is None:
        raise SummaryError("no messages in the span to summarise")
    return replace(output, usage=usage)


def _sum_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    """Usage of every chunk's calls together."""
    if total is None or more is None:
        return more if total is None else total
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        cache_creation_input_tokens=total.cache_creation_input_tokens
        + more.cache_creation_input_tokens,
        cache_read_input_tokens=total.cache_read_input_tokens + more.cache_read_input_tokens,
        cache_creation_1h_input_tokens=total.cache_creation_1h_input_tokens
        + more.cache_creation_1h_input_tokens,
    )


def blank_summary(
    conversation_id: str, policy: Policy, trigger: SummaryTrigger = "auto"
) -> Summary:
    """An empty version of nothing: the parent a conversation's first version is folded
    into, between the chunks of one long compaction and in the compact preview's stand-in
    (``trigger="manual"``)."""
    return Summary(
        id=0,
        conversation_id=conversation_id,
        version=0,
        parent_id=None,
        strategy=policy.strategy,
        text="",
        segments=[],
        covers_to_message_id=0,
        covered_messages=0,
        source_tokens=0,
        summary_tokens=0,
        trigger=trigger,
        summarizer="",
        status="completed",
        created_at="",
    )
