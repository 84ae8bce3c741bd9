"""A code block is highlighted again when the theme changes, not at every restyle: moving the
selection restyles the two messages it moves between (and every block in them), and each
press of a held arrow ran pygments over their code again."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical

from tui_chat.tui.widgets.stream_markdown import StreamFence, StreamMarkdown

CODE = "```python\ndef f(x):\n    return x + 1\n```\n"


class OneMessage(App[None]):
    CSS = "Vertical.-selected { background: $warning 10%; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield StreamMarkdown(f"Some code:\n\n{CODE}")


async def test_the_code_is_highlighted_again_for_a_new_theme_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = OneMessage()
    async with app.run_test() as pilot:
        await pilot.pause()
        fence = app.query_one(StreamFence)
        highlighted: list[str] = []
        original = StreamFence.highlight.__func__  # type: ignore[attr-defined]

        def counting(cls: type[StreamFence], code: str, *args: object, **kw: object) -> object:
            highlighted.append(code)
            return original(cls, code, *args, **kw)

        monkeypatch.setattr(StreamFence, "highlight", classmethod(counting))
        message = app.query_one(Vertical)
        for _ in range(3):  # the selection comes and goes
            message.toggle_class("-selected")
            await pilot.pause()
        assert fence.is_attached
        assert highlighted == []
        app.theme = "textual-light" if app.current_theme.dark else "textual-dark"
        await pilot.pause()
        assert highlighted  # highlighted for the new theme
