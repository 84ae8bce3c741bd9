"""Make untrusted text (model output, titles, search snippets) inert before it is displayed.

Model output is data. Rich/Textual markup in it must be shown, never parsed, and terminal
control sequences must never reach the terminal. Every widget that shows such text goes
through :func:`~tui_chat.core.inert.inert` (plain text for ``Markdown``/``Content``) or
:func:`inert_content`.
"""

from __future__ import annotations

from datetime import datetime

from textual.content import Content

from tui_chat.core.inert import inert

__all__ = ["age", "clock_time", "inert", "inert_content", "one_line", "parse_time", "tokens"]


def inert_content(text: str, style: str = "") -> Content:
    """Untrusted text as a :class:`Content` that is never parsed as markup.

    Args:
        text: Untrusted text.
        style: Optional style for the whole text.
    """
    content = Content(inert(text))
    return content.stylize(style) if style else content


def one_line(text: str, width: int) -> str:
    """Collapse whitespace and cut ``text`` to ``width`` characters with an ellipsis."""
    flat = " ".join(inert(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def tokens(count: int | float) -> str:
    """Format a token count compactly: 950, 12.3k, 1.2M."""
    value = float(count)
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if abs(value) >= 10_000:
        return f"{value / 1_000:.0f}k"
    if abs(value) >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{int(value)}"


def parse_time(stamp: str) -> datetime | None:
    """Parse an ISO-8601 time from the database (``None`` when it cannot be read)."""
    try:
        return datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None


def clock_time(stamp: str) -> str:
    """Local ``YYYY-MM-DD HH:MM`` of a stored UTC time."""
    moment = parse_time(stamp)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "?"


def age(stamp: str, now: datetime) -> str:
    """How long ago ``stamp`` was, relative to ``now``: ``just now``, ``5m ago``, ``3d ago``."""
    moment = parse_time(stamp)
    if moment is None:
        return "?"
    seconds = max(0.0, (now - moment).total_seconds())
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"  # pragma: no cover - unreachable
