"""The screenshot of a reply citing recalled messages (docs/tui.md, "Cited recall").

Usage::

    python screenshots/recall_cites.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets one conversation about a kitchen renovation, written over
two weeks and folded by the offline summarizer; the question sent after the fold recalls
passages of it as ``search_result`` blocks, and the reply comes from the test server
(``tests/fakes/fake_anthropic.py``), which cites the passages it was asked to remember. The app runs
headless at 120x36 with the reply selected in navigation mode, and ``recall-cites.svg`` (and a
PNG copy when ``cairosvg`` is importable) is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screenshots._run import main, shoot, until_gauge

FACTS = [
    ("user", "We picked the 20x20 terracotta tiles from Casa Ceramica, 38 euros a square metre."),
    ("assistant", "Noted: terracotta 20x20, 38 euros per square metre, about 14 square metres."),
    ("user", "Marta the electrician can only come on Thursdays, before noon."),
    ("assistant", "Then the wiring goes first, on a Thursday morning."),
]
FILLER = [
    ("user", "What should the worktop be made of if we cook a lot? We bake bread most weekends."),
    (
        "assistant",
        "Quartz resists stains and heat better than laminate, and a floured surface wipes "
        "clean; oak is warmer to the touch but needs oiling every few months and marks under "
        "a hot tray. For bread, a cool stretch of stone by the window is the nicest to knead on.",
    ),
    ("user", "How much space should we leave in front of the oven, with two of us cooking?"),
    (
        "assistant",
        "About 120 cm lets the door open fully with someone passing behind it; 100 cm is the "
        "least that works for one cook. With two, keep the fridge out of that aisle so nobody "
        "waits for the oven door to close before reaching the milk.",
    ),
    ("user", "Is a window above the sink worth moving the plumbing for?"),
    (
        "assistant",
        "Only if the wall is not load-bearing and the drain can keep its fall: a plumber's "
        "visit will tell both. Moving a sink a metre along the same wall is usually a day's "
        "work; turning it to another wall means opening the floor.",
    ),
]
QUESTION = "Do you remember which tiles we picked and when Marta can come?"


async def _conversation(service: object) -> str:
    import json
    import tempfile

    from tui_chat.engine.service import ChatService

    assert isinstance(service, ChatService)
    turns = FACTS + FILLER * 15
    messages = [
        {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "created_at": f"2026-11-{3 + i // 8:02d}T1{i % 10}:0{i % 6}:00+00:00",
            "status": "complete",
        }
        for i, (role, text) in enumerate(turns)
    ]
    data = {
        "format": "tui-chat",
        "version": 1,
        "conversation": {"title": "Kitchen renovation"},
        "messages": messages,
    }
    with tempfile.TemporaryDirectory() as folder:  # imported as a person's export would be
        path = Path(folder) / "kitchen.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        conversation = await service.transfer.import_file(path)
    for key, value in (("summarizer", "extractive"), ("context_window", "3000")):
        await service.conversations.set_setting(conversation.id, key, value)
    await service.summaries.compact(conversation.id)
    await service.send(conversation.id, QUESTION)
    return conversation.id


async def _scene(pilot: Any) -> None:
    from tui_chat.tui.widgets.chat_pane import ChatPane
    from tui_chat.tui.widgets.recall_chips import RecallChips

    await until_gauge(pilot)
    await pilot.press("f5")
    pane = pilot.app.main_screen.query_one(ChatPane)
    assert pane.selected is not None
    assert pane.views[-1].query(RecallChips), "the reply cites nothing"


async def generate(out: Path) -> list[Path]:
    """Run the app over the folded conversation and save the screenshot."""
    return await shoot(out, "recall-cites", _conversation, _scene)


if __name__ == "__main__":
    raise SystemExit(main(__doc__, generate, None))
