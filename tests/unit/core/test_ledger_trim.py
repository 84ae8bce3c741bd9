"""The ledger section trimmed to its budget: the longest fitting prefix of the chosen entries,
found by counting O(log n) sections (one per dropped entry took 12 s on a 3,000-message
backlog's version: ``tui-chat compact`` printing its retention figure)."""

from __future__ import annotations

import math

from tui_chat.core import ledger
from tui_chat.core.tokens import TokenCounter


class SectionCounter(TokenCounter):
    """A token counter that tells how many whole sections it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.sections = 0

    def count(self, text: str) -> int:
        if text.startswith(ledger.LEDGER_HEADER):
            self.sections += 1
        return super().count(text)


def _entries(n: int) -> list[ledger.Entry]:
    # As a backlog's ledger holds them: durations and commit hashes, one message each.
    return [
        ledger.Entry(
            "number" if i % 2 else "hash",
            f"{i * 7} ms" if i % 2 else f"{i:07x}a",
            (i,),
            1,
        )
        for i in range(1, n + 1)
    ]


def test_a_ledger_over_its_budget_keeps_the_longest_prefix_that_fits() -> None:
    counter = SectionCounter()
    entries = _entries(3_000)
    budget = 4_000
    text, sent = ledger.render(entries, budget, counter, keep=False)
    assert sent and counter.count(text) <= budget
    # The entries sent are the best-ranked, and one more would not have fitted.
    order = ledger.ranked(entries)
    assert sent == order[: len(sent)]
    assert text == ledger._section(sent, set())
    more = ledger._section(order[: len(sent) + 1], set())
    assert counter.count(more) > budget
    # Finding that prefix counted a handful of sections, not one per entry dropped.
    assert counter.sections <= 2 * math.ceil(math.log2(len(entries))) + 6, counter.sections
