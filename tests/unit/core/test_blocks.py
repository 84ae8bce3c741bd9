"""The one block renderer shared by the request builder, summaries, imports and the preview."""

from __future__ import annotations

from tui_chat.core.blocks import block_kind, block_text, content_text, message_body
from tui_chat.core.models import ContentBlock, Message


def message(text: str, content: list[ContentBlock]) -> Message:
    return Message(
        id=1,
        conversation_id="c",
        role="assistant",
        content=content,
        text=text,
        turn=1,
        token_count=0,
        status="complete",
        created_at="2026-01-01T00:00:00Z",
    )


def test_every_kind_of_block_renders_by_one_rule() -> None:
    call = {"type": "mcp_tool_use", "id": "m", "name": "grep", "input": {"z": 1, "a": "é"}}
    hits = {
        "type": "web_search_tool_result",
        "tool_use_id": "s",
        "content": [
            {"type": "web_search_result", "title": "Docs", "url": "https://d.org"},
            {"type": "text", "text": "inline"},
            {"type": "image", "source": {}},
        ],
    }
    assert block_text({"type": "text", "text": "hi"}) == "hi"
    assert block_text({"type": "thinking", "thinking": "SECRET"}) == ""
    assert block_text(call) == '[tool call grep] {"a": "é", "z": 1}'
    assert block_text(hits) == "[tool result] Docs (https://d.org)\ninline\n[image]"
    error = {"type": "tool_result", "tool_use_id": "t", "content": "boom", "is_error": True}
    assert block_text(error) == "[tool error] boom"
    assert block_text({"type": "document", "title": "spec.pdf"}) == "[document: spec.pdf]"
    assert block_text({"type": "document"}) == "[document]"
    assert block_text({"type": "container_upload", "file_id": "f"}) == "[container_upload]"
    assert [block_kind(b) for b in (call, hits, error)] == [
        "tool_use",
        "tool_result",
        "tool_result",
    ]


def test_blank_blocks_are_left_out_and_the_separator_is_the_callers() -> None:
    content: list[ContentBlock] = [
        {"type": "text", "text": "one"},
        {"type": "text", "text": "  "},
        {"type": "redacted_thinking", "data": "x"},
        {"type": "text", "text": "two"},
    ]
    assert content_text(content) == "one\ntwo"
    assert content_text(content, sep="\n\n") == "one\n\ntwo"
    assert message_body(message("stored", content), sep="\n\n") == "one\n\ntwo"
    assert message_body(message("stored text", [{"type": "thinking", "thinking": "x"}])) == (
        "stored text"
    )
