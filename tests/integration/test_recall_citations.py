"""Cited recall: recalled passages go as ``search_result`` blocks, a reply's
citations of them are stored, shown as ``[#id]`` chips, exported, and a key jumps to them.

Shapes follow Claude's "Search results" docs as read on 2026-11-26 (see
``tui_chat/core/request/render.py`` and ``tests/fakes/fake_recall.py``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tui_chat.core.models import Message
from tui_chat.core.recall_cites import cited_ids, recalled_ids
from tui_chat.core.request.recall import Passage
from tui_chat.core.request.render import (
    RECALL_HEADER,
    passage_entry,
    recall_blocks,
    recall_section,
)
from tui_chat.core.tokens import BLOCK_OVERHEAD_TOKENS, get_counter
from tui_chat.core.web import cited_text, markdown_body
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.cited_jump import Trail, next_stop

Make = Callable[..., Awaitable[ChatService]]


def _message(mid: int, role: str, text: str, day: str) -> Message:
    return Message(
        id=mid,
        conversation_id="c",
        role=role,  # type: ignore[arg-type]
        content=[{"type": "text", "text": text}],
        text=text,
        token_count=10,
        turn=mid,
        status="complete",
        created_at=f"{day} 10:00:00",
    )


def _passage(message: Message) -> tuple[Passage, str]:
    passage = Passage(message, 0, 1, message.text, 1.0)
    return passage, passage_entry(passage, message.text)


# -- the request -----------------------------------------------------------------------------


def test_recall_blocks_are_a_legend_then_one_search_result_of_the_passages_in_order() -> None:
    a = _message(3, "user", "the boat is blue", "2024-01-02")
    b = _message(9, "assistant", "noted: blue boat", "2024-01-02")
    c = _message(20, "user", "we moved to Oslo", "2024-02-10")
    blocks = recall_blocks([_passage(c), _passage(a), _passage(b)])
    assert blocks == [
        {"type": "text", "text": RECALL_HEADER.split("\n", 1)[1]},
        {
            "type": "search_result",
            "source": "recall",
            "title": "Recalled from the summarized part",
            "content": [
                {"type": "text", "text": "[2024-01-02]\n#3 user: the boat is blue"},
                {"type": "text", "text": "#9 assistant: noted: blue boat"},
                {"type": "text", "text": "[2024-02-10]\n#20 user: we moved to Oslo"},
            ],
            "citations": {"enabled": True},
        },
    ]
    # Deterministic: the same passages in any order give the same bytes.
    again = recall_blocks([_passage(a), _passage(b), _passage(c)])
    assert json.dumps(again) == json.dumps(blocks)
    assert recall_blocks([]) == []
    # And no dearer than the text form they replace.
    entries = [_passage(a), _passage(b), _passage(c)]
    counter = get_counter()
    assert counter.count_content(blocks) <= counter.count(recall_section(entries))


def test_the_counter_counts_a_search_result_by_what_the_model_reads() -> None:
    counter = get_counter()
    block = recall_blocks([_passage(_message(3, "user", "the boat is blue", "2024-01-02"))])[1]
    expected = (
        BLOCK_OVERHEAD_TOKENS
        + counter.count("recall")
        + counter.count("Recalled from the summarized part")
        + counter.count("[2024-01-02]\n#3 user: the boat is blue")
    )
    assert counter.count_block(block) == expected
    # Not the JSON of the block (what any other unknown block would be counted as).
    assert counter.count_block(block) < counter.count(json.dumps(block))


def test_a_search_result_reads_as_its_passages_in_the_preview_and_summaries() -> None:
    from tui_chat.core.blocks import block_text

    block = recall_blocks([_passage(_message(3, "user", "the boat is blue", "2024-01-02"))])[1]
    assert block_text(block) == (
        "[search result: Recalled from the summarized part (recall)]\n"
        "[2024-01-02]\n#3 user: the boat is blue"
    )


# -- the fake server refuses what the docs say the API refuses -------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"title": None}, "title"),
        ({"content": []}, "content"),
        ({"content": [{"type": "image"}]}, "only text blocks"),
        ({"content": [{"type": "text", "text": ""}]}, "non-empty"),
        ({"citations": {"enabled": "yes"}}, "citations"),
    ],
)
def test_a_bad_search_result_is_a_400(
    fake_anthropic: FakeAnthropic, change: dict[str, Any], message: str
) -> None:
    block: dict[str, Any] = {
        "type": "search_result",
        "source": "2024-01-02",
        "title": "recalled",
        "content": [{"type": "text", "text": "#3 user: the boat is blue"}],
        "citations": {"enabled": True},
    }
    block.update(change)
    block = {k: v for k, v in block.items() if v is not None}
    client = anthropic.Anthropic(api_key="sk-ant-x", base_url=fake_anthropic.base_url)
    with pytest.raises(anthropic.BadRequestError, match=message):
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=[{"role": "user", "content": [block, {"type": "text", "text": "hi"}]}],  # type: ignore[list-item]
        )


def test_mixed_citation_settings_and_a_result_in_a_reply_are_refused(
    fake_anthropic: FakeAnthropic,
) -> None:
    def result(enabled: bool) -> dict[str, Any]:
        return {
            "type": "search_result",
            "source": "s",
            "title": "t",
            "content": [{"type": "text", "text": "x"}],
            "citations": {"enabled": enabled},
        }

    client = anthropic.Anthropic(api_key="sk-ant-x", base_url=fake_anthropic.base_url)
    with pytest.raises(anthropic.BadRequestError, match="all search results"):
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=[{"role": "user", "content": [result(True), result(False)]}],  # type: ignore[list-item]
        )
    with pytest.raises(anthropic.BadRequestError, match="only allowed in user messages"):
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [result(True)]},  # type: ignore[list-item]
                {"role": "user", "content": "again"},
            ],
        )


# -- reading citations -----------------------------------------------------------------------


def _citation(cited: str, source: str = "recall") -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": "Recalled from the summarized part",
        "cited_text": cited,
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def test_cited_messages_come_from_the_labels_and_a_message_source() -> None:
    assert cited_ids(_citation("#3 user: the boat is blue")) == [3]
    assert cited_ids(_citation("[2024-01-02]\n#3 user: the boat is blue")) == [3]
    assert cited_ids(_citation("#3 user: blue.#9 2/3 assistant: noted")) == [3, 9]
    assert cited_ids(_citation("a #5 that is no label", "tui-chat://message/12")) == [12]
    assert cited_ids({"type": "web_search_result_location", "cited_text": "#3 user: x"}) == []
    content = [
        {"type": "text", "text": "Before: "},
        {"type": "text", "text": "the boat is blue.", "citations": [_citation("#3 user: b")]},
        {"type": "text", "text": " And Oslo.", "citations": [_citation("#20 user: Oslo")]},
    ]
    assert recalled_ids(content) == [3, 20]
    assert cited_text(content) == "Before: the boat is blue.[#3] And Oslo.[#20]"
    shown = markdown_body(content, "plain", markdown=False)
    assert "the boat is blue.[#3]" in shown
    assert shown.endswith("Cited from earlier in this conversation: #3, #20")


def test_the_jump_cycles_through_the_cited_messages_and_back_to_the_reply() -> None:
    first = next_stop(None, 50, [3, 20])
    assert first == Trail(50, (3, 20), 0)
    second = next_stop(first, 3, [])
    assert second == Trail(50, (3, 20), 1)
    back = next_stop(second, 20, [])
    assert back is not None and back.at == -1  # to the reply again
    assert next_stop(back, 50, [3, 20]) == Trail(50, (3, 20), 0)
    assert next_stop(None, 7, []) is None
    # Moved elsewhere by hand: the trail is forgotten.
    assert next_stop(first, 8, []) is None


# -- end to end through the real SDK ---------------------------------------------------------


async def _folded(service: ChatService) -> str:
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "summarizer", "extractive")
    await service.conversations.set_setting(conv.id, "context_window", "3000")
    for i in range(24):
        for role in ("user", "assistant"):
            text = f"{role} note {i}: the crate number {1000 + i} went to dock {i % 7}. " * 4
            await engine_of(service).store.messages.add(
                conv.id,
                role=role,  # type: ignore[arg-type]
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=engine_of(service).counter.count(text),
            )
    await service.summaries.compact(conv.id)
    return conv.id


async def test_a_reply_cites_recalled_messages_stored_shown_exported_and_imported(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    cid = await _folded(service)
    outcome = await service.send(cid, "Do you remember where crate number 1003 went?")
    assert outcome.error is None, outcome.error
    body = fake_anthropic.message_requests[-1].body
    last = body["messages"][-1]["content"]
    results = [b for b in last if b["type"] == "search_result"]
    assert results and all(r["citations"] == {"enabled": True} for r in results)
    # Streamed as citations_delta, accumulated by the SDK, stored with the reply.
    content = outcome.reply.content
    cited = recalled_ids(content)
    assert cited, content
    crate = [m for m in await service.messages.page(cid) if "crate number 1003" in m.text]
    assert crate[0].id in cited
    assert f"[#{cited[0]}]" in cited_text(content)
    md = await service.transfer.export(cid, "md")
    assert f"[#{cited[0]}]" in md and "Cited from earlier in this conversation" in md
    html = await service.transfer.export(cid, "html")
    assert f'<a href="#m{cited[0]}">#{cited[0]}</a>' in html
    # The citations survive export -> import, and go back in the next request unchanged.
    path = tmp_path / "conv.json"
    path.write_text(await service.transfer.export(cid, "json"))
    imported = await service.transfer.import_file(path)
    reply = (await service.messages.page(imported.id))[-1]
    assert reply.content == content
    assert (await service.send(cid, "thanks")).error is None
    sent_back = fake_anthropic.message_requests[-1].body["messages"]
    assert any(m["content"] == content for m in sent_back if m["role"] == "assistant")


async def test_without_a_fold_nothing_is_recalled_and_nothing_is_cited(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    outcome = await service.send(conv.id, "Do you remember the crate?")
    assert outcome.error is None
    body = fake_anthropic.message_requests[-1].body
    assert not any(b["type"] == "search_result" for m in body["messages"] for b in m["content"])
    assert recalled_ids(outcome.reply.content) == []
