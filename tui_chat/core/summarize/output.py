"""What both summarizers share to make a version: the request check and the final output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_chat.core.models import Segment, Usage
from tui_chat.core.summarize.fields import extract_fields, with_fields
from tui_chat.core.summarize.types import SummaryError, SummaryInput, SummaryOutput


def require_messages(request: SummaryInput) -> None:
    """Refuse a request with nothing to summarize.

    Args:
        request: The version being made.

    Raises:
        SummaryError: when it has no messages.
    """
    if not request.messages:
        raise SummaryError("no messages to summarize")


def finish(
    request: SummaryInput,
    body: str,
    segments: Sequence[Segment],
    summarizer: str,
    usage: Usage | None,
) -> SummaryOutput:
    """The new version's content: the body with the structured fields appended when enabled.

    Args:
        request: The version being made.
        body: The brief, or the joined segments.
        segments: The segments (empty for ``running``).
        summarizer: The model id, or ``extractive``.
        usage: Usage summed over the calls, if any.

    Returns:
        The output.

    Raises:
        SummaryError: when the text would be empty.
    """
    fields: dict[str, Any] = {}
    if request.policy.structured_fields:
        previous = request.previous.fields if request.previous is not None else None
        fields = extract_fields(request.messages, previous)
    text = with_fields(body.strip(), fields)
    if not text.strip():
        raise SummaryError("the summary is empty")
    return SummaryOutput(
        text=text, segments=tuple(segments), fields=fields, summarizer=summarizer, usage=usage
    )
