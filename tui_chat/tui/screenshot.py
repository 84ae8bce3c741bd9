"""The palette's Screenshot: an SVG of the screen saved in the export folder, with its path.

Textual's own command saves into the user's Downloads folder, which a fresh home does not
have (the command then fails without a word); this one writes where exports go and says where.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand


def save_screenshot(app: App[Any], folder: Path) -> None:
    """Save an SVG of the current screen in ``folder`` and tell the user where (or why not).

    Args:
        app: The running app.
        folder: Where to write the file (created if missing).
    """
    from textual._files import generate_datetime_filename

    from tui_chat.files import write_file

    path = folder / generate_datetime_filename(app.title, ".svg")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # Private (0600) like exports: the screen shows the conversation.
        write_file(path, app.export_screenshot())
    except OSError as exc:
        app.notify(
            f"Cannot save a screenshot in {folder}: {exc.strerror or exc}",
            title="Screenshot",
            severity="error",
            markup=False,
        )
        return
    app.notify(f"Saved {path}", title="Screenshot", markup=False)


def with_screenshot(
    app: App[Any], commands: Iterable[SystemCommand], folder: Path
) -> Iterable[SystemCommand]:
    """Textual's system commands, with Screenshot replaced by :func:`save_screenshot`.

    Args:
        app: The running app.
        commands: What ``App.get_system_commands`` yields.
        folder: The export folder.
    """
    for command in commands:
        if command.title != "Screenshot":
            yield command
            continue
        yield SystemCommand(
            "Screenshot",
            f"Save an SVG 'screenshot' of the current screen in {folder}",
            # After the palette has closed, so it is not in the picture.
            lambda: app.set_timer(0.1, lambda: save_screenshot(app, folder)),
        )
