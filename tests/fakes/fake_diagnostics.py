"""Cache diagnostics as the local server models them (Claude's cache-diagnostics page,
build-with-claude/cache-diagnostics, copies of 2026-11).

A request that carries ``diagnostics`` leaves a fingerprint under its reply's id: the model
and the request's cacheable blocks in order (tools, system, messages) with their token
counts. The next request names that id as ``diagnostics.previous_message_id``; its reply
carries ``diagnostics.cache_miss_reason``: the first place the prefix diverged (the model,
the system prompt, the tools, or the messages) with the previous request's tokens from there
on (``cache_missed_input_tokens``), ``previous_message_not_found`` for an unknown id, or
``null`` when nothing diverged. A request without the object stores nothing and gets none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_KINDS = {"tool": "tools_changed", "system": "system_changed"}


@dataclass(frozen=True)
class Fingerprint:
    """What the API keeps of a request for the next one to be compared with."""

    model: str
    blocks: tuple[tuple[str, int], ...]
    """``(key, tokens)`` of each cacheable block; a key starts with tool:, system:, user: …"""


class Diagnoses:
    """The fingerprints kept, and the comparison each diagnosed request gets."""

    def __init__(self, blocks: Callable[[dict[str, Any]], Sequence[tuple[str, int]]]) -> None:
        self._blocks = blocks
        self._kept: dict[str, Fingerprint] = {}

    def reset(self) -> None:
        """Forget every fingerprint (``/_fake/reset``)."""
        self._kept.clear()

    def diagnose(self, body: dict[str, Any], reply_id: str) -> dict[str, Any] | None:
        """The reply's ``diagnostics`` (``None``: the request asked for none)."""
        asked = body.get("diagnostics")
        if not isinstance(asked, dict):
            return None
        now = Fingerprint(str(body.get("model", "")), tuple(self._blocks(body)))
        self._kept[reply_id] = now
        previous = asked.get("previous_message_id")
        if previous is None:
            return {"cache_miss_reason": None}
        before = self._kept.get(str(previous))
        if before is None:
            return {"cache_miss_reason": {"type": "previous_message_not_found"}}
        return {"cache_miss_reason": _first_divergence(before, now)}


def _first_divergence(before: Fingerprint, now: Fingerprint) -> dict[str, Any] | None:
    total = sum(tokens for _, tokens in before.blocks)
    if before.model != now.model:
        return {"type": "model_changed", "cache_missed_input_tokens": total}
    for index, (key, _) in enumerate(before.blocks):
        if index < len(now.blocks) and now.blocks[index][0] == key:
            continue
        missed = sum(tokens for _, tokens in before.blocks[index:])
        kind = _KINDS.get(key.split(":", 1)[0], "messages_changed")
        return {"type": kind, "cache_missed_input_tokens": missed}
    return None
