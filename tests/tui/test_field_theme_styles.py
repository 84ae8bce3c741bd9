"""The composer's theme takes its styles once per change of them, and follows every change."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui_chat.tui.inert_fields import InertTextArea


class _Field(App[None]):
    CSS = "InertTextArea.-tinted { background: red; }"

    def compose(self) -> ComposeResult:
        yield InertTextArea("hello")


async def test_the_theme_follows_a_style_change_and_the_app_theme() -> None:
    async with _Field().run_test() as pilot:
        field = pilot.app.query_one(InertTextArea)
        await pilot.pause()
        before = field.rich_style.bgcolor
        assert field.styled_theme is not None  # styled by its first frame
        field.add_class("-tinted")
        await pilot.pause()
        for _ in range(1_000):  # until a frame styled the theme again
            if field.styled_theme is not None:
                break
            await pilot.pause()
        assert field.rich_style.bgcolor != before
        assert field.theme_base_style.bgcolor == field.rich_style.bgcolor
        pilot.app.theme = "textual-light" if pilot.app.theme != "textual-light" else "nord"
        await pilot.pause()
        for _ in range(1_000):
            if field.styled_theme is not None and (
                field.theme_base_style.bgcolor == field.rich_style.bgcolor
            ):
                break
            await pilot.pause()
        assert field.theme_base_style.bgcolor == field.rich_style.bgcolor
