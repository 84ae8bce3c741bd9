"""Cache diagnostics on every chat request, and what to do where an endpoint lacks them.

Claude's cache diagnostics (build-with-claude/cache-diagnostics, generally available in the
copies of 2026-11; the ``cache-diagnosis-2026-04-07`` beta header is no longer needed): a
request carrying ``diagnostics: {"previous_message_id": …}`` names the previous reply's id
(``null`` on a conversation's first turn, to opt in), and the reply's
``diagnostics.cache_miss_reason`` says where its prefix first diverged from that request's
(``model_changed``, ``system_changed``, ``tools_changed``, ``messages_changed``) or why it
could not compare (``previous_message_not_found``, ``unavailable``). The reason is kept in the
reply's usage (``Usage.cache_miss``) and shown in the Cache tab and ``tui-chat usage``
(:func:`tui_chat.engine.usage.usage_text.miss_line`).

A gateway that refuses the field (a 400 that names it) gets the request again without it, and
the client remembers not to send it to that endpoint again in this process.
"""

from __future__ import annotations

from typing import Any

from tui_chat.llm.client import StreamResult

__all__ = ["refused_diagnostics", "with_diagnostics"]


def with_diagnostics(request: dict[str, Any], previous: str | None) -> dict[str, Any]:
    """The request asking for cache diagnostics against the reply ``previous`` (``None``:
    the first turn, which opts in with ``null``)."""
    return {**request, "diagnostics": {"previous_message_id": previous}}


def refused_diagnostics(result: StreamResult) -> bool:
    """True when the endpoint refused the request for its ``diagnostics`` field."""
    error = result.error
    if error is None or error.status != 400 or result.content:
        return False
    return "diagnostics" in error.message.lower()
