"""The screenshot of branches within a conversation (docs/tui.md, "Branches").

Usage::

    python screenshots/branches.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets one conversation whose second prompt was edited twice:
three branches of one family, one entry in the list (``⑂3``), the branch bar over the chat
and ``‹ n/m ›`` on the prompt where they part. Replies come from the test server
(``tests/fakes/fake_anthropic.py``). The app runs headless at 120x36 and ``branches.svg`` (and a PNG
copy when ``cairosvg`` is importable) is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screenshots._run import main, shoot

PROMPTS = (
    "We have four days in Lisbon in May. Where should we stay?",
    "Plan day two around the Belém monuments.",
    "And a dinner place near the river?",
)
EDITS = (
    "Plan day two around Sintra instead: the palaces, back by evening.",
    "Plan day two as a slow day: Alfama on foot, a tram ride, no museums.",
)


async def seed(service: object) -> str:
    """The conversation and its two edits; returns the branch to open (the second edit)."""
    from tui_chat.engine.service import ChatService

    assert isinstance(service, ChatService)
    conversation = await service.conversations.new("Lisbon trip")
    for prompt in PROMPTS:
        await service.send(conversation.id, prompt)
    second = [m for m in await service.messages.page(conversation.id) if m.role == "user"][1]
    shown = conversation.id
    for edit in EDITS:
        branch, _ = await service.branches.fork_for_edit(second.id)
        await service.send(branch.id, edit)
        shown = branch.id
    return shown


async def _scene(pilot: Any) -> None:
    from tui_chat.tui.widgets.sibling_switch import SiblingSwitch

    bar = pilot.app.main_screen.query_one(SiblingSwitch)
    while not (bar.display and bar.path is not None):
        await pilot.pause(0.05)
    await pilot.press("ctrl+b")  # the list: one entry for the three branches


async def generate(out: Path) -> list[Path]:
    """Run the app on the last edited branch and save the screenshot."""
    reply = "Stay in Príncipe Real: quiet streets, an easy walk down to Chiado."
    return await shoot(out, "branches", seed, _scene, reply_text=reply)


if __name__ == "__main__":
    raise SystemExit(main(__doc__, generate, None))
