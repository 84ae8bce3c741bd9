"""Exporting a conversation: to text (Markdown, JSON, HTML), to a file, or to a stream; and
:class:`Transfer`, the use-case service that exports and imports (``service.transfer``).

Every format is written a page of messages at a time (memory flat in the conversation's
length, a test reads the pages). A file is written by the rule of :mod:`tui_chat.files`:
an existing file is refused unless replacing is asked, and then replaced atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tui_chat.core.inert import inert
from tui_chat.core.models import Conversation
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.transfer.export_stream import write_json_export, write_markdown_export
from tui_chat.engine.transfer.transfer import export_format, import_conversation
from tui_chat.files import check_target, replacing
from tui_chat.store.repository import Store

FORMATS = ("md", "json", "html")
"""Every export format; each is streamed."""


class UnknownFormat(ValueError):
    """An export format tui-chat does not write."""


def check_format(fmt: str) -> str:
    """``fmt`` if it is an export format. Raises :class:`UnknownFormat`."""
    if fmt not in FORMATS:
        raise UnknownFormat(f"unknown export format {fmt!r}; use json, md or html")
    return fmt


async def export_stream(
    store: Store, conversation_id: str, write: Callable[[str], object], fmt: str
) -> None:
    """Write the ``md``, ``json`` or ``html`` export to ``write`` a page at a time."""
    if check_format(fmt) == "html":
        # Markdown and Pygments load with the first HTML export, not with every command.
        from tui_chat.engine.transfer.export_html import write_html_export

        await write_html_export(store, conversation_id, write)
    elif fmt == "json":
        await write_json_export(store, conversation_id, write)
    else:
        # A file cats as the screen: stored text made inert piece by piece (each ends a line).
        await write_markdown_export(store, conversation_id, lambda piece: write(inert(piece)))


async def export_text(store: Store, conversation_id: str, fmt: str = "md") -> str:
    """The conversation as JSON (``json``), Markdown (``md``) or one HTML page (``html``)."""
    parts: list[str] = []
    await export_stream(store, conversation_id, parts.append, fmt)
    return "".join(parts)


async def export_file(
    store: Store, conversation_id: str, path: Path, fmt: str | None, *, force: bool
) -> None:
    """Write the conversation to ``path`` (format by its suffix unless ``fmt`` is given) as
    it is read, a page of messages at a time.

    Raises:
        UnknownFormat: nothing is written.
        TargetExistsError: ``path`` exists and ``force`` is not given.
        OSError: the file cannot be written (the old file, if any, is intact).
    """
    fmt = check_format(fmt or export_format(path))
    check_target(path, force=force)  # before the work of rendering the export
    with replacing(path, force=force) as tmp, tmp.open("w", encoding="utf-8") as out:
        await export_stream(store, conversation_id, out.write, fmt)


class Transfer:
    """Export conversations (Markdown, JSON, HTML; to text, a file or a stream) and import
    them (our JSON or an Anthropic Messages list)."""

    def __init__(self, store: Store, counter: TokenCounter, default_model: str) -> None:
        """Work on ``store``; imported messages are counted with ``counter``, and a file that
        names no model gets ``default_model``."""
        self.store = store
        self.counter = counter
        self.default_model = default_model

    async def export(self, conversation_id: str, fmt: str = "md") -> str:
        """The conversation as JSON (``json``), Markdown (``md``) or one HTML page (``html``)."""
        return await export_text(self.store, conversation_id, fmt)

    async def export_to(
        self, conversation_id: str, path: Path, fmt: str | None = None, *, force: bool = False
    ) -> None:
        """Write the conversation to a file (see :func:`export_file`)."""
        await export_file(self.store, conversation_id, path, fmt, force=force)

    async def export_stream(
        self, conversation_id: str, write: Callable[[str], object], fmt: str = "json"
    ) -> None:
        """Write the ``md``, ``json`` or ``html`` export to ``write`` a page of messages at a
        time."""
        await export_stream(self.store, conversation_id, write, fmt)

    async def import_file(
        self, path: Path, progress: Callable[[int], None] | None = None, *, force: bool = False
    ) -> Conversation:
        """Import our JSON or an Anthropic Messages list (``progress``: messages written;
        ``force``: import a file imported before again)."""
        return await import_conversation(
            self.store,
            path,
            default_model=self.default_model,
            counter=self.counter,
            progress=progress,
            force=force,
        )
