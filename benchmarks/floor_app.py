"""The floor: the least a Textual chat client draws, started and measured as ``tui-chat`` is.

A header, the last 20 messages of the most recent conversation as Markdown (read from the
same database), a reply streamed with Textual's ``Markdown.get_stream`` from the same
Anthropic-compatible server, a ``TextArea`` composer (``enter`` sends, ``ctrl+l`` clears),
a gauge line and a footer. No store, no engine, no token counting, no SDK: whatever
``tui-chat`` takes beyond this app's time on the same screen, in the same run, is its own.
The benchmarks (:mod:`benchmarks.tui`, :mod:`benchmarks.tui_stream`) run it as
``python -m benchmarks.floor_app --db DB`` on the same pty beside the app, and report the
app's figures as ratios to this one's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Markdown, Static, TextArea
from textual.widgets.markdown import MarkdownStream

SHOWN = 20
"""Messages shown at start."""

CSS = """
#chat { height: 1fr; }
#chat Markdown { margin: 0 1; }
#composer { height: 5; border: round $primary; }
#gauge { height: 1; padding: 0 1; }
#chat Markdown.-selected { background: $warning 10%; }
"""


def last_messages(db: Path, count: int = SHOWN) -> list[tuple[str, str, int, str]]:
    """``(role, text, id, created_at)`` of the last ``count`` messages of the most recently
    updated conversation, oldest first (none if the file is missing or empty)."""
    if not db.exists():
        return []
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT role, text, id, created_at FROM messages WHERE conversation_id = "
            "(SELECT id FROM conversations ORDER BY updated_at DESC LIMIT 1) "
            "ORDER BY id DESC LIMIT ?",
            (count,),
        ).fetchall()
    except sqlite3.Error:
        return []
    finally:
        connection.close()
    return [(str(r), str(t), int(i), str(c)) for r, t, i, c in reversed(rows)]


def header(role: str, message_id: int, created_at: str) -> str:
    """The line above a message, in the app's form (``Claude  2025-01-01 12:00  #42``): the
    held-keys benchmark (:mod:`benchmarks.held_keys`) reads which messages are on screen."""
    who = "You" if role == "user" else "Claude"
    return f"{who}  {created_at[:10]} {created_at[11:16]}  #{message_id}"


class FloorApp(App[None]):
    """The similar-screen app (see the module's docstring)."""

    CSS = CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "send", "Send", priority=True),
        Binding("ctrl+l", "clear", "Clear", priority=True),
        Binding("f1", "help", "Help"),
        # Held keys (benchmarks.held_keys): the chat scrolls a page, or the highlight moves.
        Binding("pageup", "page(-1)", "Page up", priority=True, show=False),
        Binding("pagedown", "page(1)", "Page down", priority=True, show=False),
        Binding("up", "select(-1)", "Previous", priority=True, show=False),
        Binding("down", "select(1)", "Next", priority=True, show=False),
        Binding("f5", "select(0)", "Messages", priority=True, show=False),
        Binding("end", "select(1_000_000)", "Last", priority=True, show=False),
    ]

    def __init__(self, db: Path, shown: int = SHOWN) -> None:
        super().__init__()
        self.db = db
        self.shown = shown
        self.history: list[dict[str, str]] = []
        self.selected: int | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="chat"):
            for role, text, message_id, created_at in last_messages(self.db, self.shown):
                self.history.append({"role": role, "content": text})
                yield Markdown(f"{header(role, message_id, created_at)}\n\n{text}")
        composer = TextArea(id="composer", placeholder="Message Claude…", soft_wrap=True)
        composer.border_title = "Message"
        yield composer
        yield Static(f"tokens {len(self.history)} messages shown", id="gauge")
        yield Footer()

    def on_mount(self) -> None:
        """The composer has the focus; the chat starts at its end."""
        self.query_one("#composer", TextArea).focus()
        self.query_one("#chat", VerticalScroll).anchor()

    def action_clear(self) -> None:
        """Empty the composer."""
        self.query_one("#composer", TextArea).clear()

    def action_help(self) -> None:
        """Nothing: the footer shows the key."""

    def action_page(self, pages: int) -> None:
        """Scroll the chat ``pages`` pages (at once, as the app does)."""
        chat = self.query_one("#chat", VerticalScroll)
        lines = pages * chat.scrollable_content_region.height
        chat.scroll_to(y=chat.scroll_y + lines, animate=False, immediate=True)

    def action_select(self, step: int) -> None:
        """Highlight the message ``step`` from the highlighted one (first: the newest) and
        scroll it into view."""
        messages = list(self.query_one("#chat", VerticalScroll).query_children(Markdown))
        if not messages:
            return
        old = self.selected
        new = len(messages) - 1 if old is None else min(max(old + step, 0), len(messages) - 1)
        if old is not None:
            messages[old].remove_class("-selected")
        self.selected = new
        messages[new].add_class("-selected")
        self.query_one("#chat", VerticalScroll).scroll_to_widget(
            messages[new], animate=False, immediate=True
        )

    async def action_send(self) -> None:
        """Send the composer's text and stream the reply below it."""
        composer = self.query_one("#composer", TextArea)
        prompt = composer.text.strip()
        if not prompt:
            return
        composer.clear()
        chat = self.query_one("#chat", VerticalScroll)
        self.history.append({"role": "user", "content": prompt})
        reply = Markdown()
        await chat.mount_all([Markdown(prompt), reply])
        self._stream(Markdown.get_stream(reply))

    @work(exclusive=True)
    async def _stream(self, stream: MarkdownStream) -> None:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 32_000,
            "stream": True,
            "messages": self.history[-SHOWN:],
        }
        while body["messages"] and body["messages"][0]["role"] != "user":
            body["messages"].pop(0)
        text: list[str] = []
        async for event in _events(os.environ["ANTHROPIC_BASE_URL"], body):
            delta = event.get("delta", {})
            if event.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                text.append(delta["text"])
                await stream.write(delta["text"])
        await stream.stop()
        self.history.append({"role": "assistant", "content": "".join(text)})


async def _events(base_url: str, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """The server-sent events of one streamed ``POST /v1/messages`` (HTTP/1.1, chunked), read
    with asyncio's streams: no HTTP library to import."""
    url = urllib.parse.urlsplit(base_url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/messages HTTP/1.1\r\nhost: {url.netloc}\r\n"
        "content-type: application/json\r\nanthropic-version: 2023-06-01\r\n"
        f"x-api-key: {os.environ.get('ANTHROPIC_API_KEY', '')}\r\n"
        f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
    )
    writer.write(head.encode() + payload)
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")  # status line and headers
    pending = b""
    try:
        while size := int((await reader.readline()).strip() or b"0", 16):
            pending += await reader.readexactly(size)
            await reader.readline()  # the chunk's CRLF
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.startswith(b"data:"):
                    yield json.loads(line[5:])
    finally:
        writer.close()


def main() -> None:
    """``python -m benchmarks.floor_app --db DB``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--shown", type=int, default=SHOWN, help="messages mounted at start")
    args = parser.parse_args()
    FloorApp(args.db, args.shown).run()


if __name__ == "__main__":
    main()
