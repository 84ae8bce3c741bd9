"""Choosing the pins and the recalled passages a request carries, within their budgets."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from tui_chat.core.models import Anchor, Message
from tui_chat.core.policy import Policy
from tui_chat.core.request.clip import fit_text
from tui_chat.core.request.recall import Passage
from tui_chat.core.request.render import (
    RECALL_HEADER,
    anchor_entry,
    day_header,
    day_of,
    passage_entry,
    recall_section,
)
from tui_chat.core.tokens import TokenCounter


@dataclass(frozen=True)
class Recalled:
    """One recalled passage as the request carries it."""

    passage: Passage
    """The passage (its message, part and score)."""
    text: str
    """Its entry text (see :func:`~.render.passage_entry`)."""
    tokens: int
    """Tokens of ``text`` plus its day line when it opens a day."""

    @property
    def message(self) -> Message:
        """The stored message the passage comes from."""
        return self.passage.message


@dataclass(frozen=True)
class Entry:
    """One pin or excerpt as the request carries it."""

    message: Message
    """The stored message it comes from."""
    text: str
    """Its entry text (see :func:`~.render.anchor_entry`)."""
    tokens: int
    """Tokens of ``text``."""


class Selector:
    """Picks pins and excerpts for one build; pin entries are rendered and counted once.

    Args:
        policy: Budgets and limits.
        counter: Counts entry tokens.
        anchors: Every pinned message of the conversation, in conversation order.
        recalled: Candidate passages, best first.
    """

    def __init__(
        self,
        policy: Policy,
        counter: TokenCounter,
        anchors: Sequence[tuple[Anchor, Message]],
        recalled: Sequence[Passage],
    ) -> None:
        self.policy = policy
        self.counter = counter
        self.anchors = anchors
        self.recalled = recalled
        self._entries: dict[int, Entry] = {}
        self._recall_cache: dict[tuple[frozenset[int], int, int], list[Recalled]] = {}

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

    def memory_anchors(self, kept_ids: Container[int]) -> tuple[list[Entry], int]:
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

    def _passage(self, passage: Passage, budget: int, header: int) -> Recalled | None:
        """The entry of one passage within ``budget`` tokens (``header``: its day line, when
        it opens a new day), cut when it must be. A whole message is sized from its stored
        count (the section is counted exactly once chosen); a cut one is counted."""
        text = passage.text.strip()
        if not text:
            return None
        entry = passage_entry(passage, text)
        # Counted exactly (with its line break): a message's stored count carries message and
        # block overheads a recalled line does not, and would leave room unused at 2k.
        tokens = self.counter.count(entry) + 1 + header
        if tokens > budget:
            label = self.counter.count(passage_entry(passage, "")) + header
            short = fit_text(text, budget - label, self.counter)
            if not short:
                return None
            entry = passage_entry(passage, short)
            tokens = self.counter.count(entry) + 1 + header
            if tokens > budget:
                return None
        return Recalled(passage, entry, tokens)

    def recall(self, excluded: set[int], limit: int, summary_text: str = "") -> list[Recalled]:
        """Recalled passages, best first, within ``limit`` tokens and the excerpt count.

        Nothing already in the request is recalled again: passages of messages sent or pinned
        (``excluded``) and passages the summary carries word for word are skipped.

        Args:
            excluded: Messages already in the request (sent or pinned).
            limit: Tokens the recall section may take (header included).
            summary_text: The summary section sent with it.

        Returns:
            The chosen passages; empty when recall is off.
        """
        policy = self.policy
        if not policy.recall or policy.recall_max_excerpts <= 0 or limit <= 0:
            return []
        key = (frozenset(excluded), limit, len(summary_text))
        cached = self._recall_cache.get(key)
        if cached is not None:
            return cached
        budget = limit - self.counter.count(RECALL_HEADER)
        summary = " ".join(summary_text.split())
        chosen: list[Recalled] = []
        seen: set[tuple[int, int]] = set()
        days: set[str] = set()
        # The excerpt count grows with a limit past the ordinary maximum (a question's).
        most = max(1, policy.recall_max_tokens)
        excerpts = max(policy.recall_max_excerpts, policy.recall_max_excerpts * limit // most)
        for passage in self.recalled:
            if len(chosen) >= excerpts or budget <= 0:
                break
            if passage.message.id in excluded or passage.key in seen:
                continue
            seen.add(passage.key)
            if summary and " ".join(passage.text.split()) in summary:
                continue
            day = day_of(passage.message)
            header = 0 if day in days else self.counter.count(day_header(day)) + 1
            entry = self._passage(passage, budget, header)
            if entry is not None:
                days.add(day)
                chosen.append(entry)
                budget -= entry.tokens
        # Entries were sized one by one (whole messages from their stored counts): the
        # section is counted once, and the least relevant passages go until it fits.
        while chosen and self.counter.count(recall_text(chosen)) > limit:
            chosen.pop()
        self._recall_cache[key] = chosen
        return chosen


def recall_text(chosen: Sequence[Recalled]) -> str:
    """The recall section of chosen passages (see :func:`~.render.recall_section`)."""
    return recall_section([(entry.passage, entry.text) for entry in chosen])
