"""One JSON shape per record: the export and the CLI's --json write a conversation and a message
from the same record (core/records.py), each adding only what it alone carries."""

from __future__ import annotations

from dataclasses import fields

from tui_chat.cli import render
from tui_chat.core.models import Conversation, Message, Usage
from tui_chat.core.records import conversation_record, message_record
from tui_chat.engine.transfer.transfer import export_head, message_export

CONVERSATION = Conversation(
    id="c1",
    title="Trip",
    model="claude-x",
    system_prompt="Be brief.",
    settings={"preset": "hybrid"},
    created_at="2026-01-01T00:00:00+00:00",
    updated_at="2026-01-02T00:00:00+00:00",
)
MESSAGE = Message(
    id=7,
    conversation_id="c1",
    role="assistant",
    content=[{"type": "text", "text": "Lisbon"}],
    text="Lisbon",
    turn=1,
    token_count=3,
    status="complete",
    created_at="2026-01-01T00:00:01+00:00",
    model="claude-x",
    usage=Usage(input_tokens=10, output_tokens=3),
    stop_reason="end_turn",
)


def test_every_message_field_but_the_conversation_is_in_the_record() -> None:
    expected = {f.name for f in fields(Message)} - {"conversation_id"}
    assert set(message_record(MESSAGE)) == expected


def test_show_json_and_the_export_write_a_message_alike() -> None:
    shown = render.message_json(MESSAGE, pinned={7})
    exported = message_export(MESSAGE, {7: "the city"})
    assert shown == {**message_record(MESSAGE), "pinned": True}
    assert exported == {**shown, "pin_note": "the city"}


def test_list_json_and_the_export_write_a_conversation_alike() -> None:
    listed = render.conversation_json(CONVERSATION)
    exported = export_head(CONVERSATION)["conversation"]
    assert exported == conversation_record(CONVERSATION)
    assert listed == {**exported, "archived": False, "active_summary_id": None}
