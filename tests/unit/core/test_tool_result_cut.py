"""Large tool results of older turns are what gives way first when a request is over its
budget: cut to their head, a marker and the identifiers they held, oldest first, before any
turn is left out (and so before anything is folded); the newest turn's results stay whole.
Recall takes a long result by parts."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from tests.unit.core.test_request_builder import (
    COUNTER,
    WINDOW,
    History,
    build_alone,
    inputs,
    tool_result,
    tool_use,
)
from tui_chat.core.models import Message
from tui_chat.core.request import BuiltRequest
from tui_chat.core.request.recall import PASSAGE_TOKENS, split_passages
from tui_chat.core.request.shrink import HEAD_CHARS, cut_result_text


def _body(n: int) -> str:
    """A file read: about 20,000 characters, its identifiers far past the head."""
    filler = "".join(f"    line {i}: value = compute(value) + offset\n" for i in range(200))
    return (
        f"# src/app/module_{n}.py\n{filler}"
        f"ORDER_ID = 'ORD-{n}0427'  # see /srv/data/orders_{n}.csv\n"
        f"TIMEOUT_MS = {n}750\n{filler}{filler}"
    )


def _reads(turns: int) -> list[Message]:
    h = History()
    for n in range(1, turns + 1):
        h.add("user", f"read module {n}")
        h.add("assistant", f"Reading module {n}.", tool_use(f"r{n}", "files__read_file"))
        h.add("user", tool_result(f"r{n}", _body(n)))
        h.add("assistant", f"Module {n} sets its order id and timeout.")
    return h.messages


def _results(built: BuiltRequest) -> list[str]:
    """The text of each tool result sent, in order."""
    out = []
    for message in built.request["messages"]:
        for block in message["content"]:
            if block.get("type") == "tool_result":
                inner = block["content"]
                out.append(inner if isinstance(inner, str) else inner[0]["text"])
    return out


def _build(raw: list[Message], budget: int | None) -> BuiltRequest:
    return build_alone(inputs(raw, "what next?", policy=replace(WINDOW, budget=budget)))


def test_below_the_budget_every_result_is_sent_whole() -> None:
    raw = _reads(6)
    built = _build(raw, None)
    assert _results(built) == [_body(n) for n in range(1, 7)]
    assert not any("tool result" in w for w in built.breakdown.warnings)
    # What cutting would save is known all the same: the triggers count the history so.
    assert built.breakdown.results_cuttable > 5 * 4_000


def test_over_the_budget_the_older_results_are_cut_before_any_turn_is_left_out() -> None:
    raw = _reads(6)
    free = _build(raw, None).breakdown
    budget = free.input_tokens - free.results_cuttable + 500  # every older result must go
    built = _build(raw, budget)
    assert built.fits and not built.dropped_message_ids  # nothing left out, nothing to fold
    assert built.breakdown.input_tokens <= budget
    sent = _results(built)
    assert sent[-1] == _body(6)  # the newest turn's result stays whole
    results = [m for m in raw if m.has_tool_result]
    for n, (text, message) in enumerate(zip(sent[:-1], results, strict=False), start=1):
        assert text.startswith(_body(n)[:HEAD_CHARS])
        assert f"message #{message.id}" in text and "cut to fit" in text
        # What the result established stays in the request: its path, id and figures.
        for held in (f"/srv/data/orders_{n}.csv", f"ORD-{n}0427", f"{n}750"):
            assert held in text, (n, held)
    assert any("tool results" in w for w in built.breakdown.warnings)
    # Every call is still answered by its result, in the next message.
    messages = built.request["messages"]
    for before, after in pairwise(messages):
        uses = {b["id"] for b in before["content"] if b.get("type") == "tool_use"}
        answered = {b["tool_use_id"] for b in after["content"] if b.get("type") == "tool_result"}
        assert uses <= answered


def test_only_as_many_results_as_the_excess_needs_are_cut_oldest_first() -> None:
    raw = _reads(6)
    free = _build(raw, None).breakdown
    # About two of the five older results' worth over the budget.
    built = _build(raw, free.input_tokens - free.results_cuttable * 2 // 5)
    sent = _results(built)
    cut = [text != _body(n) for n, text in enumerate(sent, start=1)]
    assert cut[0] and not cut[-1]
    assert cut == sorted(cut, reverse=True)  # the oldest first, then whole ones
    assert 1 <= sum(cut) < 5
    assert not built.dropped_message_ids


def test_when_cutting_is_not_enough_turns_give_way_after_it() -> None:
    raw = _reads(6)
    built = _build(raw, 9_000)
    assert built.dropped_message_ids  # the oldest turns leave (a send compacts first) …
    sent = _results(built)
    assert sent[-1] == _body(6)
    assert all("cut to fit" in text for text in sent[:-1])  # … and the rest are cut


def test_a_short_result_is_never_cut() -> None:
    assert cut_result_text("x" * 100, 7) is None
    text = cut_result_text("a" * 7_000 + " /etc/app.conf", 7)
    assert text is not None and "/etc/app.conf" in text and "7,014" in text


def test_a_long_result_of_lines_is_recalled_by_parts() -> None:
    # A file read is one paragraph of many lines: recall takes a part of it, not the file
    # (whole, it would not fit the recall budget and the hit would be lost).
    text = "[tool result] " + _body(2)
    parts = split_passages(text, COUNTER)
    # About a passage's size each (its lines are counted apart: the breaks add a few tokens).
    assert len(parts) > 10 and all(COUNTER.count(p) <= PASSAGE_TOKENS * 1.25 for p in parts)
    assert "\n".join(parts) == text.strip()  # lines kept in order, none lost
    (hit,) = [p for p in parts if "ORD-20427" in p]
    assert "/srv/data/orders_2.csv" in hit
    # A paragraph of a single line stays whole, as before.
    assert split_passages("word " * 400, COUNTER) == [("word " * 400).strip()]
