"""A summary version's size change reads with one sign: smaller shows −, larger shows +."""

from __future__ import annotations

from tui_chat.core.models import Summary


def _summary(source: int, kept: int) -> Summary:
    return Summary(
        id=1,
        conversation_id="c",
        version=1,
        parent_id=None,
        strategy="prefix",
        text="",
        segments=[],
        covers_to_message_id=2,
        covered_messages=2,
        source_tokens=source,
        summary_tokens=kept,
        trigger="manual",
        summarizer="extractive",
        status="completed",
        created_at="2026-12-02T00:00:00",
    )


def test_a_smaller_summary_shows_a_minus_and_a_larger_one_a_plus_never_both() -> None:
    assert _summary(100, 42).change == "−58%"
    larger = _summary(19, 30).change
    assert larger == "+58%"
    assert "−-" not in larger
    assert _summary(0, 5).change == "−0%"
