"""A conversation's request depends on that conversation alone: importing others into the same
database leaves every byte of it as it was (recall's ranking counts its own messages only)."""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from pathlib import Path

from tui_chat.engine.service import ChatService

MakeService = Callable[..., Awaitable[ChatService]]

TOPICS = (
    "beagle puppy Max adopted from the shelter",
    "camping trip at the lake with the tent",
    "pottery class and a blue glazed bowl",
    "marathon training and new running shoes",
    "guitar lessons and the band rehearsal",
    "garden tomatoes and the basil seedlings",
    "painting a sunset over the harbour",
    "volunteering at the animal shelter",
    "job interview at the design studio",
    "grandmother's recipe for apple pie",
)
QUESTIONS = (
    "What was the name of the beagle puppy we adopted from the shelter?",
    "Where did we go camping with the tent?",
    "What colour was the bowl from the pottery class?",
    "How is the marathon training going with the new shoes?",
    "What did the grandmother's apple pie recipe need?",
)


def _export(path: Path, title: str, seed: int, turns: int) -> Path:
    """A tui-chat JSON export of ``turns`` user/assistant pairs about :data:`TOPICS`."""
    pick = random.Random(seed)
    messages = []
    for i in range(turns):
        topic = pick.choice(TOPICS)
        other = pick.choice(TOPICS)
        day = f"2024-{1 + i % 12:02d}-{1 + i % 27:02d}T10:00:00+00:00"
        messages.append(
            {"role": "user", "content": f"About the {topic}: {other}?", "created_at": day}
        )
        reply = f"Turn {i} of {title}: the {topic}, and {pick.choice(TOPICS)} too."
        messages.append({"role": "assistant", "content": reply, "created_at": day})
    data = {"format": "tui-chat", "version": 1, "conversation": {"title": title}}
    data["messages"] = messages  # type: ignore[assignment]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def _requests(service: ChatService, cid: str) -> list[str]:
    out = []
    for question in QUESTIONS:
        built = await service.requests.context(cid, question)
        assert built.breakdown.sections["recall"] > 0, question  # recall is in play
        out.append(json.dumps(built.request, sort_keys=True, ensure_ascii=False))
    return out


async def test_importing_other_conversations_leaves_a_request_byte_for_byte(
    make_service: MakeService, tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    own = await service.transfer.import_file(_export(tmp_path / "own.json", "own", 1, 150))
    cid = own.id
    for key, value in (("summarizer", "extractive"), ("context_window", "5000")):
        await service.conversations.set_setting(cid, key, value)
    await service.summaries.compact(cid)
    before = await _requests(service, cid)
    # Others that use the same words, far more often and in other proportions.
    for n in range(2):
        other = _export(tmp_path / f"other{n}.json", f"other {n}", 10 + n, 200 + 100 * n)
        await service.transfer.import_file(other)
    after = await _requests(service, cid)
    for question, old, new in zip(QUESTIONS, before, after, strict=True):
        assert new == old, question
