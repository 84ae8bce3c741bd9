"""Words related in meaning (core/related.py) and recall's hop through them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tui_chat.core import related
from tui_chat.core.tokens import get_counter
from tui_chat.engine.build.recall import recall
from tui_chat.store.repository import Store

COUNTER = get_counter()
CHAT = [
    ("user", "We finally got married last spring, a small ceremony by the sea."),
    ("assistant", "Congratulations! That sounds beautiful."),
    ("user", "I started learning to play the violin this winter."),
    ("assistant", "Lovely, string quartets next?"),
]


def test_related_words_are_near_in_meaning_and_not_forms_of_the_word() -> None:
    words = {r.word for r in related.related(["husband"])}
    assert {"wife", "married"} <= words
    assert not {"husband", "husbands"} & words
    assert all(r.similarity >= related.MIN_SIMILARITY for r in related.related(["guitar"]))
    assert not any(w.startswith("camp") for w in (r.word for r in related.related(["camping"])))
    assert related.related([]) == []


def test_the_vectors_are_read_from_the_package_files_without_its_code() -> None:
    assert related.package_root() is not None
    assert related.vectors() is not None
    # wordllama's own loader reaches for the network when a file is missing: never imported.
    assert "wordllama" not in sys.modules


async def _store(tmp_path: Path) -> tuple[Store, str, int]:
    store = await Store.open(tmp_path / "r.db")
    conv = await store.conversations.create(title="t", model="m")
    last = 0
    for role, text in CHAT:
        message = await store.messages.add(
            conv.id,
            role=role,  # type: ignore[arg-type]
            content=[{"type": "text", "text": text}],
            text=text,
            token_count=COUNTER.count(text) + 4,
            created_at="2023-05-08T10:00:00+00:00",
        )
        last = message.id
    return store, conv.id, last


async def test_recall_finds_evidence_that_shares_no_word_with_the_question(
    tmp_path: Path,
) -> None:
    store, cid, last = await _store(tmp_path)
    try:
        passages = await recall(store, cid, "When did I meet my husband's parents?", last, COUNTER)
        assert passages and passages[0].text.startswith("We finally got married")
        # Related words count for relevance too (0.3 of the word itself times similarity), so
        # a passage that answers with a related word passes the floor recall has where the
        # history could be carried.
        from tui_chat.core.request.recall_cost import RELEVANCE_FLOOR

        husband = await recall(store, cid, "How is my husband?", last, COUNTER)
        assert husband[0].text.startswith("We finally got married")
        assert husband[0].relevance >= RELEVANCE_FLOOR
    finally:
        await store.close()


async def test_a_word_a_little_less_near_is_searched_but_earns_no_relevance(
    tmp_path: Path,
) -> None:
    near = {r.word: r.similarity for r in related.related(["religious"])}
    assert related.MIN_SIMILARITY <= near["church"] < related.RELEVANCE_SIMILARITY
    store = await Store.open(tmp_path / "r.db")
    try:
        conv = await store.conversations.create(title="t", model="m")
        for text in ("I painted it for a local church.", "Lovely colours!"):
            message = await store.messages.add(
                conv.id,
                role="user",
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=COUNTER.count(text) + 4,
            )
        passages = await recall(store, conv.id, "is she religious?", message.id, COUNTER)
        church = next(p for p in passages if "church" in p.text)
        # Found through "church"; where recall is capped it still needs words of the question.
        assert church.relevance == 0.0
    finally:
        await store.close()


async def test_without_the_vectors_recall_searches_the_words_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(related, "vectors", lambda: None)
    store, cid, last = await _store(tmp_path)
    try:
        assert await recall(store, cid, "my husband's parents?", last, COUNTER) == []
        married = await recall(store, cid, "when did we get married?", last, COUNTER)
        assert married and married[0].text.startswith("We finally got married")
    finally:
        await store.close()


def test_a_small_window_spends_its_memory_block_on_the_summary_alone() -> None:
    from tui_chat.core.presets import PRESETS
    from tui_chat.core.request.budget import SMALL_WINDOW, for_window, ledger_budget

    adaptive = PRESETS["adaptive"]
    small = for_window(adaptive, 4_000)
    assert small.summary_max_tokens == 200  # 5 %, not 10 %
    assert ledger_budget(adaptive, 4_000) == 0
    big = for_window(adaptive, 2 * SMALL_WINDOW)
    assert big.summary_max_tokens == int(0.10 * 2 * SMALL_WINDOW)
    assert ledger_budget(adaptive, 2 * SMALL_WINDOW) == int(0.05 * 2 * SMALL_WINDOW)


async def test_a_word_that_drops_its_e_before_ing_finds_that_form(tmp_path: Path) -> None:
    from tui_chat.store import fts

    assert fts.recall_phrase("hike") == '"hike"* OR "hiking"'
    store = await Store.open(tmp_path / "h.db")
    try:
        conv = await store.conversations.create(title="t", model="m")
        for text in ("I went hiking in the hills last week.", "Sounds lovely."):
            last = await store.messages.add(
                conv.id,
                role="user",
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=COUNTER.count(text) + 4,
            )
        passages = await recall(store, conv.id, "Where did I hike?", last.id, COUNTER)
        assert passages and passages[0].text.startswith("I went hiking")
    finally:
        await store.close()


def test_top_is_the_full_sort_s_head_ties_included() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    for size, count in ((9000, 13), (20, 13), (13, 13), (5, 13)):
        scores = rng.random(size, dtype=np.float32)
        assert related.top(scores, count) == [int(i) for i in np.argsort(-scores)[:count]]
    tied = np.array([0.5, 0.9, 0.5, 0.7, 0.5, 0.1], dtype=np.float32)
    for count in (1, 2, 3, 4):  # ties inside the head and at its edge: the full sort's order
        assert related.top(tied, count) == [int(i) for i in np.argsort(-tied)[:count]]


def test_a_word_asked_again_is_not_worked_out_again_and_gives_the_same_words() -> None:
    vectors = related.vectors()
    assert vectors is not None
    first = vectors.related(["husband", "violin", "sea"])
    fresh = related.Vectors(related.package_root())  # type: ignore[arg-type]
    worked: list[str] = []
    original = fresh.vector

    def counted(word: str):  # type: ignore[no-untyped-def]
        worked.append(word)
        return original(word)

    fresh.vector = counted  # type: ignore[method-assign]
    assert fresh.related(["husband", "violin", "sea"]) == first
    assert sorted(worked) == ["husband", "sea", "violin"]
    # Kept words come from the list, new ones alone (even one) from a product: same figures.
    assert fresh.related(["sea", "husband", "guitar"]) == vectors.related(
        ["sea", "husband", "guitar"]
    )
    assert sorted(worked) == ["guitar", "husband", "sea", "violin"]
    assert fresh.related(["guitar"]) == vectors.related(["guitar"])
