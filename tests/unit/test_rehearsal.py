"""The warm-up's rehearsal streams its canned reply whole through the SDK's own parsing."""

from __future__ import annotations

from tui_chat.llm.rehearsal import rehearse


async def test_the_rehearsal_streams_a_whole_reply_from_memory() -> None:
    # Through ClaudeClient.stream and the SDK: text, thinking, a search's call and result, the
    # usage and message_stop, from an in-memory transport (nothing leaves the process).
    assert await rehearse()
