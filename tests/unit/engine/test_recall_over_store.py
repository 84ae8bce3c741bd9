"""Recall over a real store: relevance, chit-chat, dates."""

from __future__ import annotations

from pathlib import Path

from tui_chat.core.tokens import get_counter
from tui_chat.engine.build.recall import recall
from tui_chat.store.repository import Store

COUNTER = get_counter()
CHAT = [
    ("user", "Hey! How was your weekend?", "2023-05-08"),
    ("assistant", "Great, thanks! We adopted a beagle puppy named Max.", "2023-05-08"),
    ("user", "haha nice, sounds good", "2023-05-08"),
    ("assistant", "ok thanks, see you tomorrow", "2023-05-08"),
    ("user", "We went camping at the lake.", "2023-06-12"),
    ("assistant", "Camping again? The lake is lovely.", "2023-07-03"),
]


async def _store(tmp_path: Path) -> tuple[Store, str, int]:
    store = await Store.open(tmp_path / "r.db")
    conv = await store.conversations.create(title="t", model="m")
    last = 0
    for role, text, day in CHAT:
        message = await store.messages.add(
            conv.id,
            role=role,  # type: ignore[arg-type]
            content=[{"type": "text", "text": text}],
            text=text,
            token_count=COUNTER.count(text) + 4,
            created_at=f"{day}T10:00:00+00:00",
        )
        last = message.id
    return store, conv.id, last


async def test_chit_chat_recalls_nothing_and_a_question_its_answer(tmp_path: Path) -> None:
    store, cid, last = await _store(tmp_path)
    try:
        for chat in ("haha nice", "ok thanks!", "see you tomorrow"):
            assert await recall(store, cid, chat, last, COUNTER) == [], chat
        passages = await recall(
            store, cid, "what is the name of the beagle we adopted?", last, COUNTER
        )
        best = passages[0]
        assert "beagle puppy named Max" in best.text
        assert best.relevance == 1.0
        assert all(0.0 <= p.relevance <= 1.0 for p in passages)
    finally:
        await store.close()


async def test_a_named_month_ranks_the_passages_written_then_first(tmp_path: Path) -> None:
    store, cid, last = await _store(tmp_path)
    try:
        june = await recall(store, cid, "where did we go camping in June?", last, COUNTER)
        july = await recall(store, cid, "where did we go camping in July?", last, COUNTER)
        assert june[0].text == "We went camping at the lake."
        assert july[0].text == "Camping again? The lake is lovely."
    finally:
        await store.close()


async def test_the_answer_two_messages_after_the_matching_one_is_recalled(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "r.db")
    try:
        conv = await store.conversations.create(title="t", model="m")
        chat = [
            "Dance is my go-to for stress relief. Got any fave styles?",
            "I love them all, but contemporary is my top pick. And yours?",
            "Me too! So expressive and graceful, it speaks to me.",
            "Let us meet on Friday then.",
            "Sure, Friday works.",
        ] + [f"Filler message number {i} about the weather." for i in range(6)]
        last = 0
        for index, text in enumerate(chat):
            message = await store.messages.add(
                conv.id,
                role="user" if index % 2 == 0 else "assistant",
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=COUNTER.count(text) + 4,
            )
            last = message.id
        passages = await recall(store, conv.id, "which dance styles do you like?", last, COUNTER)
        texts = [p.text for p in passages]
        # Two steps after the question's words: recalled, ranked above what lies further.
        assert chat[2] in texts
        assert chat[3] not in texts or texts.index(chat[2]) < texts.index(chat[3])
    finally:
        await store.close()


async def test_a_one_line_question_about_a_name_needs_the_whole_past(
    tmp_path: Path,
) -> None:
    from tui_chat.engine.build.recall import need

    store, cid, last = await _store(tmp_path)
    try:
        recent = ["We went camping at the lake.", "Camping again? The lake is lovely."]
        # Its words are in the recent turns, so by them alone the question needs nothing.
        assert await need(store, cid, "Was the lake lovely?", recent, last) == 0.0
        assert await need(store, cid, "Was the lake lovely for Max?", recent, last) == 1.0
    finally:
        await store.close()


async def test_a_question_s_larger_pool_takes_every_message_of_a_common_name(
    tmp_path: Path,
) -> None:
    from tui_chat.engine.build.recall import RECALL_MESSAGES

    store = await Store.open(tmp_path / "n.db")
    try:
        conv = await store.conversations.create(title="t", model="m")
        for index in range(200):
            text = f"John: note {index} about the garden."
            if index == 150:  # longer than the others: it ranks last for "John"
                text = "John: I'm off to do some taekwondo after a long day at the office!"
            message = await store.messages.add(
                conv.id,
                role="user" if index % 2 == 0 else "assistant",
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=COUNTER.count(text) + 4,
                created_at="2023-05-08T10:00:00+00:00",
            )
        last = message.id
        wide = 4 * RECALL_MESSAGES
        question = "What martial arts has John done?"
        found = await recall(store, conv.id, question, last, COUNTER, pool=wide)
        assert any("taekwondo" in p.text for p in found)
        ordinary = await recall(store, conv.id, question, last, COUNTER)
        assert not any("taekwondo" in p.text for p in ordinary)
    finally:
        await store.close()


async def test_a_message_that_asks_nothing_is_never_lifted_past_the_cost_cap(
    tmp_path: Path,
) -> None:
    from tui_chat.core.request.recall_need import NEED_FROM, NEED_FULL
    from tui_chat.engine.build.recall import need

    store, cid, last = await _store(tmp_path)
    try:
        recent = ["we talked about the weather forecast: rain"]
        told = await need(store, cid, "The beagle puppy loved camping.", recent, last)
        asked = await need(store, cid, "Where did the beagle puppy go camping?", recent, last)
        # Only what it asks counts: the weather is in the recent turns, the puppy is not.
        weather = await need(
            store,
            cid,
            "The beagle puppy loved camping. What does the weather forecast say, rain?",
            recent,
            last,
        )
    finally:
        await store.close()
    assert told == NEED_FROM  # its words are all missing, yet it asks nothing
    assert asked > NEED_FULL
    assert weather < NEED_FROM
