"""A summary made by the server's compaction, sent in its text form where the endpoint refuses
its compaction block.

A changed or damaged block (an "invalid signature") is not covered: its refusal names the
version and the roll back (``engine/failures.py``). A ``server`` version is sent back as the
API returned it: its signed ``compaction`` block, first in ``messages``
(``llm/compaction.py``). An endpoint without that feature answers 400. The version's text
is the same summary: the send goes out again with it in the memory block, says so in the request's
warnings, and the session sends the text form from then on (while the process runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tui_chat.core.models import Summary
from tui_chat.core.request import BuiltRequest
from tui_chat.llm.client import StreamResult
from tui_chat.llm.compaction import has_compaction_block

__all__ = ["block_refused", "fallback_note", "text_form", "with_note"]


def text_form(summary: Summary | None) -> Summary | None:
    """``summary`` without its compaction block (its text is sent instead)."""
    if summary is None or summary.compaction_block is None:
        return summary
    return replace(summary, compaction_block=None)


def block_refused(result: StreamResult, request: Mapping[str, Any]) -> bool:
    """Whether the API refused a request that sends a compaction block back, before any text
    (a 400: the block is what an endpoint without the feature cannot take)."""
    error = result.error
    messages = request.get("messages")
    return (
        error is not None
        and error.kind == "bad_request"
        and not result.content
        and not result.text
        and isinstance(messages, list)
        and has_compaction_block(messages)
        and "signature" not in error.message.lower()  # a damaged block is named, not hidden
    )


def fallback_note(summary: Summary, refusal: str) -> str:
    """The warning that names why the text form of ``summary`` was sent."""
    return (
        f"this endpoint refused the compaction block of summary v{summary.version} (made by "
        f"the server's compaction: {refusal}); its text form was sent instead"
    )


def with_note(built: BuiltRequest, note: str) -> BuiltRequest:
    """``built`` with ``note`` among its warnings."""
    breakdown = replace(built.breakdown, warnings=(*built.breakdown.warnings, note))
    return replace(built, breakdown=breakdown)
