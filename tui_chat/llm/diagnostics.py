"""A reply's cache diagnostics, read from the SDK's message (or a plain dict).

Claude's cache diagnostics (build-with-claude/cache-diagnostics, copies of 2026-11): a reply to
a request that named ``diagnostics.previous_message_id`` carries
``diagnostics.cache_miss_reason``: its ``type`` (``model_changed``, ``system_changed``,
``tools_changed``, ``messages_changed``, ``previous_message_not_found``, ``unavailable``) and,
for a divergence, ``cache_missed_input_tokens`` (the SDK's ``anthropic.types.Diagnostics``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["cache_miss"]


def cache_miss(diagnostics: Any) -> dict[str, Any]:
    """``Usage``'s ``cache_miss`` and ``cache_missed_tokens`` from a reply's ``diagnostics``
    (cache diagnostics: ``diagnostics.cache_miss_reason`` with its ``type`` and, for a
    divergence, ``cache_missed_input_tokens``); empty when the reply has none."""
    reason = _field(diagnostics, "cache_miss_reason")
    kind = _field(reason, "type")
    if not isinstance(kind, str) or not kind:
        return {}
    missed = _field(reason, "cache_missed_input_tokens")
    count = missed if isinstance(missed, int) and not isinstance(missed, bool) else 0
    return {"cache_miss": kind, "cache_missed_tokens": max(0, count)}


def _field(part: Any, name: str) -> Any:
    if part is None:
        return None
    return part.get(name) if isinstance(part, dict) else getattr(part, name, None)
