"""Choosing the pins and the recalled excerpts a request carries, within their budgets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.core.models import Anchor, Message
from tui_chat.core.policy import Policy
from tui_chat.core.request.clip import fit_text
from tui_chat.core.request.render import (
    RECALL_HEADER,
    anchor_entry,
    excerpt_entry,
    message_text,
    recall_section,
)
from tui_chat.core.tokens import TokenCounter


@dataclass(frozen=True)
class Entry:
    """One pin or excerpt as the request carries it."""

    message: Message
    """The stored message it comes from."""
    text: str
    """Its entry text (see :func:`~.render.anchor_entry`, :func:`~.render.excerpt_entry`)."""
    tokens: int
    """Tokens of ``text``."""


class Selector:
    """Picks pins and excerpts for one build; pin entries are rendered and counted once.

    Args:
        policy: Budgets and limits.
        counter: Counts entry tokens.
        anchors: Every pinned message of the conversation, in conversation order.
        recalled: Candidate excerpts, best first.
    """

    def __init__(
        self,
        policy: Policy,
        counter: TokenCounter,
        anchors: Sequence[tuple[Anchor, Message]],
        recalled: Sequence[Message],
    ) -> None:
        self.policy = policy
        self.counter = counter
        self.anchors = anchors
        self.recalled = recalled
        self._entries: dict[int, Entry] = {}

    def anchor(self, anchor: Anchor, message: Message) -> Entry:
        """The memory-block entry of one pin (an empty text when there is nothing to send).

        Args:
            anchor: The pin.
            message: The pinned message.

        Returns:
            The entry, cached by message id.
        """
        entry = self._entries.get(message.id)
        if entry is None:
            text = anchor_entry(anchor, message)
            entry = Entry(message, text, self.counter.count(text) if text else 0)
            self._entries[message.id] = entry
        return entry

    def memory_anchors(self, kept_ids: set[int]) -> tuple[list[Entry], int]:
        """Pins older than the raw window, oldest first, within the anchor budget.

        Args:
            kept_ids: Messages sent as messages (their pins need no entry).

        Returns:
            The chosen entries and how many pins were left out over budget.
        """
        budget = self.policy.anchor_budget_tokens
        limit = self.policy.max_anchors
        candidates = [
            entry
            for entry in (self.anchor(a, m) for a, m in self.anchors if m.id not in kept_ids)
            if entry.text
        ]
        chosen: list[Entry] = []
        spent = 0
        for entry in candidates:
            if (limit is not None and len(chosen) >= limit) or spent + entry.tokens > budget:
                break
            chosen.append(entry)
            spent += entry.tokens
        return chosen, len(candidates) - len(chosen)

    def _excerpt(self, message: Message, budget: int) -> Entry | None:
        """The excerpt of one message within ``budget`` tokens, cut when it must be."""
        text = message_text(message).strip()
        if not text:
            return None
        entry = excerpt_entry(message, text)
        tokens = self.counter.count(entry)
        if tokens > budget:
            label_tokens = self.counter.count(excerpt_entry(message, ""))
            short = fit_text(text, budget - label_tokens, self.counter)
            if not short:
                return None
            entry = excerpt_entry(message, short)
            tokens = self.counter.count(entry)
            if tokens > budget:
                return None
        return Entry(message, entry, tokens)

    def recall(self, excluded: set[int]) -> list[Entry]:
        """Recalled excerpts, best first, within the recall budget and count.

        Args:
            excluded: Messages already in the request (sent or pinned).

        Returns:
            The chosen excerpts; empty when recall is off.
        """
        policy = self.policy
        if not policy.recall or policy.recall_max_excerpts <= 0:
            return []
        budget = policy.recall_budget_tokens - self.counter.count(RECALL_HEADER)
        chosen: list[Entry] = []
        seen: set[int] = set()
        for message in self.recalled:
            if len(chosen) >= policy.recall_max_excerpts or budget <= 0:
                break
            if message.id in excluded or message.id in seen:
                continue
            seen.add(message.id)
            entry = self._excerpt(message, budget)
            if entry is not None:
                chosen.append(entry)
                budget -= entry.tokens
        # Entries were counted one by one; each join can add a token, which matters only
        # when the budget is nearly spent.
        if budget < 2 * len(chosen):
            limit = max(0, policy.recall_budget_tokens)
            while chosen:
                joined = recall_section([entry.text for entry in chosen])
                if self.counter.count(joined) <= limit:
                    break
                chosen.pop()
        return chosen
