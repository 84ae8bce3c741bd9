"""The compact preview: what a compact would fold, and the messages the next request needs
that it would drop, worked out before anything is written."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from tui_chat.engine.compaction import CompactPreview, LostMessage
from tui_chat.engine.compaction.preview import GATHER_DROPPED
from tui_chat.engine.service import ChatService

FACT = "My sister Marguerite moved to Lisbon last spring to learn violin making."
DRAFT = "Where did Marguerite move to learn violin making?"
FILLER = (
    "We decided to repaint the kitchen green and keep the old oak table.",
    "I prefer the early train because the later one is always crowded.",
    "We decided the garden party moves to Saturday because of the rain.",
    "I prefer tea over coffee in the evening, it helps me sleep better.",
)


def chat_export(path: Path) -> Path:
    """A chat whose oldest turn holds a fact, followed by turns about other things."""
    messages = [
        {"role": "user", "content": FACT},
        {"role": "assistant", "content": "That sounds like a wonderful adventure for her."},
    ]
    for turn in range(12):
        messages.append({"role": "user", "content": f"{FILLER[turn % 4]} (day {turn})"})
        messages.append({"role": "assistant", "content": f"Good to know, noted for day {turn}."})
    data = {
        "format": "tui-chat",
        "version": 1,
        "conversation": {"title": "t"},
        "messages": messages,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def chat_with_fact(service: ChatService, tmp_path: Path, recall: str) -> str:
    """The chat imported, compacted offline at a 4k window with ``recall`` on or off."""
    conversation = await service.transfer.import_file(chat_export(tmp_path / "chat.json"))
    for key, value in (
        ("summarizer", "extractive"),
        ("context_window", "4000"),
        ("recall", recall),
    ):
        await service.conversations.set_setting(conversation.id, key, value)
    return conversation.id


async def test_a_compact_that_drops_what_the_draft_needs_says_so_and_writes_nothing(
    make_service: Callable[..., Awaitable[ChatService]], tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    cid = await chat_with_fact(service, tmp_path, "off")
    found = await service.summaries.preview(cid, DRAFT)
    messages = await service.messages.history(cid)
    fact = next(m for m in messages if m.text == FACT)
    assert found.messages > 0 and found.covers_to is not None and found.covers_to >= fact.id
    assert [m.id for m in found.lost] == [fact.id]
    assert found.warning is not None
    assert f"#{fact.id}" in found.warning and "Marguerite" in found.warning
    assert "\n" not in found.warning  # one line
    assert found.after_tokens < found.before_tokens
    assert found.carried == found.messages and 1 <= found.dropped <= found.carried
    assert f"{found.dropped} of the {found.carried} folded messages" in found.lines()[1]
    assert found.lines()[-1] == found.warning
    assert await service.summaries.versions(cid) == []  # nothing compacted
    # A draft about nothing the chat said loses nothing.
    assert (await service.summaries.preview(cid, "What is the capital of Peru?")).lost == ()


async def test_a_pin_or_recall_keeps_the_needed_message_and_the_warning_goes(
    make_service: Callable[..., Awaitable[ChatService]], tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    cid = await chat_with_fact(service, tmp_path, "on")
    # Recall brings the fact back after the compact: nothing is lost.
    assert (await service.summaries.preview(cid, DRAFT)).warning is None
    await service.conversations.set_setting(cid, "recall", "off")
    lost = (await service.summaries.preview(cid, DRAFT)).lost
    assert len(lost) == 1
    await service.messages.pin(lost[0].id)
    assert (await service.summaries.preview(cid, DRAFT)).warning is None


async def test_without_a_draft_the_newest_user_message_stands_for_the_next_request(
    make_service: Callable[..., Awaitable[ChatService]], tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    cid = await chat_with_fact(service, tmp_path, "off")
    found = await service.summaries.preview(cid)
    assert found.query is not None and found.query.startswith(FILLER[11 % 4])


def test_the_warning_names_three_messages_and_counts_the_rest() -> None:
    lost = tuple(LostMessage(i, "user", f"message {i}") for i in range(1, 6))
    preview = CompactPreview(10, 500, 10, "q", 400, 100, lost=lost)
    warning = preview.warning
    assert warning is not None
    assert warning.startswith("Compacting would drop 5 messages the next request needs:")
    assert '#1 "message 1", #2 "message 2", #3 "message 3" and 2 more' in warning
    assert '#4 "' not in warning
    assert CompactPreview(10, 500, 10, "q").warning is None
    assert CompactPreview(0, 0, None, None).lines() == [
        "Nothing to compact yet: too few complete turns."
    ]
    assert preview.to_json()["dropped"] == 0
    assert preview.to_json()["lost"] == [
        {"id": i, "role": "user", "snippet": f"message {i}"} for i in range(1, 6)
    ]


async def test_a_draft_that_gathers_is_warned_when_most_of_what_it_reads_would_leave(
    make_service: Callable[..., Awaitable[ChatService]], tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    cid = await chat_with_fact(service, tmp_path, "off")  # what it reads leaves with the fold
    gathering = "What things have we decided so far, and which do both of us prefer?"
    found = await service.summaries.preview(cid, gathering)
    assert found.lost == () and found.gathering
    assert found.dropped >= GATHER_DROPPED * found.carried > 0
    assert found.warning is not None and "\n" not in found.warning
    assert f"take {found.dropped} of the {found.carried} folded messages" in found.warning
    assert found.to_json()["gathering"] is True
    # A lookup is warned about only by what it names (the oak table's messages); the newest
    # message standing in for a draft is no risk either (it has had its answer).
    lookup = await service.summaries.preview(cid, "Where is the oak table?")
    assert not lookup.gathering and lookup.lost
    assert not (await service.summaries.preview(cid)).gathering


def test_a_gathering_draft_is_no_risk_while_most_of_what_it_reads_stays() -> None:
    kept = CompactPreview(10, 500, 10, "q", 400, 300, carried=10, dropped=4, gathering=True)
    assert not kept.at_risk and kept.warning is None
    gone = replace(kept, dropped=5)
    assert gone.at_risk and gone.warning is not None
    assert not replace(gone, gathering=False).at_risk
