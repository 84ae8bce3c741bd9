"""What a finished compaction stores: the summary, its figures and its identifier ledger.

Only the version's own span is read: the parent's ledger is carried forward and extended with
the span's identifiers, and the retention figure is over the parent's text and the span. Each
message text is scanned for identifiers once, for both (:class:`ScanMemo`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from tui_chat.core import ledger
from tui_chat.core.attachments import attachment_note
from tui_chat.core.blocks import message_body
from tui_chat.core.identifiers import ScanMemo, retention
from tui_chat.core.models import Message, Summary
from tui_chat.core.summarize import SummaryOutput
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.compaction.summarizers import call_cost
from tui_chat.llm.models import ModelInfo
from tui_chat.store.summaries import SummaryResult

__all__ = ["version_result"]


def version_result(
    output: SummaryOutput,
    messages: Sequence[Message],
    parent: Summary | None,
    counter: TokenCounter,
    info_for: Callable[[str], ModelInfo],
) -> SummaryResult:
    """The row content of a version that folded ``messages`` into ``parent``.

    Args:
        output: The summarizer's output, already gated to the budget.
        messages: The span the version folds in (after the parent's coverage).
        parent: The version it continues, if any.
        counter: The token counter.
        info_for: A model's figures and prices (for the cost of the calls).

    Returns:
        The text (with its attachment note), the figures and the ledger to store.
    """
    output = replace(output, text=attachment_note(output.text, messages))
    scans = ScanMemo()
    sources = [message_body(m) for m in messages]
    if parent is not None:
        sources.insert(0, parent.text)
    kept, total = retention(sources, output.text, scans)
    entries = ledger.build(messages, ledger.from_json(parent.ledger) if parent else (), scans)
    return SummaryResult(
        text=output.text,
        segments=output.segments,
        fields=output.fields,
        covered_messages=len(messages) + (parent.covered_messages if parent else 0),
        source_tokens=sum(m.token_count for m in messages)
        + (parent.summary_tokens if parent else 0),
        summary_tokens=counter.count(output.text),
        summarizer=output.summarizer,
        identifiers_kept=kept,
        identifiers_total=total,
        call=call_cost(output, info_for),
        compaction_block=output.compaction_block,
        ledger=ledger.to_json(entries),
    )
