"""One stored message in the chat pane: role, time, markers and the (inert) text."""

from __future__ import annotations

import asyncio

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Markdown, Static

from tui_chat.core.attachments import chip, refs, typed_text
from tui_chat.core.models import Message
from tui_chat.core.unanswered import refusal_category, refused
from tui_chat.engine.events import ReplyDelta
from tui_chat.tui import gc_pause
from tui_chat.tui.action_types import on_screen
from tui_chat.tui.after_frame import after_frame
from tui_chat.tui.text import clock_time, inert, inert_content
from tui_chat.tui.widgets import reply_parts
from tui_chat.tui.widgets.fold import HeadFold
from tui_chat.tui.widgets.reply_stream import ReplyStream
from tui_chat.tui.widgets.stream_markdown import StreamMarkdown
from tui_chat.tui.widgets.tool_rows import result_rows

GC_DELAY = 1.0
"""Seconds after a reply is finished before the full garbage collection held back during its
stream runs (see :mod:`~tui_chat.tui.gc_pause`): after its final frame, while it is read."""

FOLD_BATCH = 12
"""Least blocks of a streaming reply hidden at a time once they are a screen above the view
(see :mod:`~tui_chat.tui.widgets.fold`)."""

FOLD_EVERY = 4
"""New blocks between two looks for blocks to fold (a look reads the geometry of the screen,
which can cost a walk over every widget)."""


class MessageView(Vertical):
    """A message: a header line (role · time · markers), the body, and a status line.

    Assistant text is rendered as Markdown (code blocks highlighted); user text is shown as
    typed. Both go through :func:`~tui_chat.tui.text.inert` first, so markup and escape
    sequences in them are displayed, never interpreted.

    A streaming reply is appended to its Markdown body as it arrives (a few times a second,
    see :class:`~tui_chat.tui.widgets.reply_stream.ReplyStream`), so finishing it re-renders
    nothing when the stored text is what was streamed. The body's top-level blocks use the
    ``stream`` layout, which keeps the placement of every block above the one that changed.
    While the chat follows a streaming reply, its blocks more than a screen above the view are
    folded away (:class:`~tui_chat.tui.widgets.fold.HeadFold`), so a frame's layout does not
    grow with the reply's length; scrolling up or a new width unfolds them.

    Args:
        message: The stored message.
        pinned: Whether the message is a pinned anchor.
        mark: ``‹ n/m ›`` when other branches show another version of it.
    """

    DEFAULT_CSS = """
    MessageView {
        height: auto;
        padding: 0 1;
        border-left: outer $secondary;
        /* Markdown blocks end with a blank line of margin; plain user text needs one. */
        &.-user { border-left: outer $primary; background: $boost; margin-bottom: 1; }
        &.-selected { border-left: outer $warning; background: $warning 10%; }
        & > .header { height: 1; color: $text-muted; }
        & > .user-text { height: auto; }
        & > .chips { height: auto; color: $text-accent; }
        /* The stream layout gives every block its content height: the rule's blank line
           above it is content here instead of a padding line inside a fixed height. */
        & > Markdown { margin: 0; padding: 0; layout: stream; }
        & > Markdown > MarkdownHorizontalRule { height: auto; padding-top: 0; }
        & > .status { height: auto; color: $text-warning; display: none; }
        & > .status.-error { color: $text-error; }
        & > Horizontal { height: auto; }
        & > #retry { display: none; }
        &.-failed > .status { display: block; }
        &.-left-out { border-left: outer $error 50%; }
        &.-left-out > .status { display: block; }
        &.-failed.-last > #retry { display: block; }
    }
    """

    def __init__(self, message: Message, *, pinned: bool = False, mark: str = "") -> None:
        super().__init__(classes=f"-{message.role}")
        self.message = message
        self.pinned = pinned
        self.error_text: str | None = None
        self.left_out = False
        self.branch_mark = mark
        """``‹ n/m ›`` when other branches show another version here (sibling_switch.py)."""
        self._stream: ReplyStream | None = None
        self._holds_gc = False
        self._fold: HeadFold | None = None
        self._fold_due = False
        self._fold_seen = 0  # blocks the last look for blocks to fold saw

    @property
    def message_id(self) -> int:
        """The stored message's id."""
        return self.message.id

    @property
    def body_text(self) -> str:
        """The text shown in the body (and copied to the clipboard)."""
        return typed_text(self.message.content, self.message.text)

    def compose(self) -> ComposeResult:
        """Header, body, status line and the Retry button."""
        yield Static(self._header(), classes="header")
        if self.message.role == "assistant":
            yield from reply_parts.parts_above(self.message)  # thinking, web searches
            yield StreamMarkdown(inert(reply_parts.shown_text(self.message)))
            yield from reply_parts.parts_below(self.message)  # cited pages
        elif self.message.has_tool_result:  # the results of the reply's tool calls
            yield from result_rows(self.message.content)
        else:
            yield Static(inert_content(self.body_text), classes="user-text")
            if attached := refs(self.message.content):
                yield Static(inert_content("   ".join(chip(r) for r in attached)), classes="chips")
        yield Static(self._status(), classes="status")
        if self.message.role == "assistant":
            yield Button(
                "Retry",
                id="retry",
                compact=True,
                variant="warning",
                action=on_screen("messages.retry"),
            )

    def on_mount(self) -> None:
        """Apply the status classes once the children exist."""
        self._apply_status()

    async def on_unmount(self) -> None:
        """A pruned or replaced view stops its stream (the reply itself goes on being saved)."""
        try:
            await self._stop_stream()
        finally:
            self._release_gc(now=True)

    async def _stop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            await stream.stop()
        except asyncio.CancelledError:
            # A cancelled append must not end this widget's (and the screen's) message loop.
            # Only a cancellation of this task itself goes on.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        # The full collection held back while streaming runs once the end has been shown.
        after_frame(self, self.set_timer, GC_DELAY, self._release_gc)

    def _release_gc(self, *, now: bool = False) -> None:
        """Give back this view's hold on full collections (unless it streams again)."""
        if self._holds_gc and (now or self._stream is None):
            self._holds_gc = False
            gc_pause.release()

    def _header(self) -> Content:
        role = "You" if self.message.role == "user" else "Claude"
        if self.message.has_tool_result:
            role = "Tools"
        parts: list[Content | tuple[str, str] | str] = [
            (role, "bold $text-primary" if self.message.role == "user" else "bold $text-accent"),
            f"  {clock_time(self.message.created_at)}",
            f"  #{self.message.id}",
        ]
        if self.message.role == "assistant" and self.message.model:
            parts.append(inert_content(f"  {self.message.model}"))
        if self.branch_mark:
            parts.append((f"  {self.branch_mark}", "bold $text-accent"))
        if self.pinned:
            parts.append(("  📌 pinned", "bold $text-warning"))
        if refused(self.message):
            category = refusal_category(self.message)
            parts.append((f"  ⊘ refused ({category})", "bold $text-error"))
        elif self.message.status == "streaming":
            parts.append(("  ● streaming", "$text-success"))
        elif self.message.status == "incomplete":
            parts.append(("  ◐ incomplete", "bold $text-warning"))
        elif self.message.status == "error":
            parts.append(("  ✗ error", "bold $text-error"))
        return Content.assemble(*parts)

    def _status(self) -> Content:
        if self.left_out and self.message.role == "user":
            return inert_content(
                "Left out of the context: its reply failed before any text or was refused, so "
                "later messages are sent without it. To ask it again, copy it (f5, c) and send it."
            )
        retry = "" if self.left_out else " Press ctrl+r to retry."
        if refused(self.message):
            # The stored reason names the category and says the turn is left out.
            return inert_content(_sentence(self.message.error or "Claude refused to answer."))
        if self.message.status == "incomplete":
            reason = (
                self.error_text or self.message.error or "The reply was cut off before it finished."
            )
            return inert_content(f"{_sentence(reason)}{retry}")
        if self.message.status == "error":
            kind = (self.message.stop_reason or "").removeprefix("error:").replace("_", " ")
            known = (
                f"The reply failed ({kind})." if kind and kind != "None" else "The reply failed."
            )
            reason = self.error_text or self.message.error or known
            return inert_content(f"{_sentence(reason)}{retry}")
        return Content("")

    def _apply_status(self) -> None:
        failed = self.message.status in ("incomplete", "error")
        self.set_class(failed, "-failed")
        status = self.query_one(".status", Static)
        status.set_class(self.message.status == "error", "-error")
        status.update(self._status())

    def set_pinned(self, pinned: bool) -> None:
        """Show or hide the pinned marker."""
        self.pinned = pinned
        self.query_one(".header", Static).update(self._header())

    def set_branch_mark(self, mark: str) -> None:
        """Show ``‹ n/m ›`` (other versions of this message in other branches), or not."""
        self.branch_mark = mark
        self.query_one(".header", Static).update(self._header())

    def set_left_out(self, left_out: bool) -> None:
        """Mark a message of a turn left out of the context (its reply failed)."""
        if left_out != self.left_out:
            self.left_out = left_out
            self.set_class(left_out, "-left-out")
            self._apply_status()

    def set_selected(self, selected: bool) -> None:
        """Show the selection's highlight (its border and background), or not.

        Only this box's styles are matched again: no rule of the blocks inside it depends on
        the selection, and the class set the Textual way restyled every block of the message
        (each repaint asking the screen's map for a block off screen rebuilt the map of every
        widget mounted), at each press of a held arrow. The blocks are drawn again on the new
        background: each keeps the background it blends its text on until told its styles
        changed (or the old highlight stays drawn behind the text of the message left)."""
        if self.has_class("-selected") == selected:
            return
        self.set_class(selected, "-selected", update=False)
        if not self.is_attached:
            return  # styled as it is mounted
        self.app.stylesheet.update_nodes([self], animate=True)
        for widget in self.walk_children(Widget):
            widget.notify_style_update()
            widget.refresh()

    def set_last(self, last: bool) -> None:
        """Mark the newest message (only it offers Retry)."""
        self.set_class(last, "-last")

    def on_resize(self, event: events.Resize) -> None:
        """Blocks folded at another width would leave the wrong space: show them again."""
        if self._fold is not None:
            self._fold.check_width()

    def unfold(self) -> None:
        """Show every block of the reply again (the chat is scrolled up)."""
        if self._fold is not None:
            self._fold.unfold()

    def _appended(self) -> None:
        if self._fold is None or self._fold_due or self._fold.blocks < self._fold_seen + FOLD_EVERY:
            return
        self._fold_seen = self._fold.blocks
        self._fold_due = True
        after_frame(self, self._fold_head)

    def _fold_head(self) -> None:
        """Fold the blocks a screen above the view, if the chat follows this streaming reply."""
        self._fold_due = False
        pane = self.parent
        if self._fold is None or self._stream is None or not isinstance(pane, Widget):
            return
        if pane.is_vertical_scroll_end and pane.is_anchored:
            view = pane.region
            self._fold.fold_above(view.y - view.height, least=FOLD_BATCH)

    async def start_stream(self) -> ReplyStream:
        """Start streaming reply text into the Markdown body."""
        if self._stream is None:
            markdown = self.query_one(Markdown)
            self._fold = self._fold or HeadFold(markdown)
            self._stream = ReplyStream(markdown, on_append=self._appended)
            if not self._holds_gc:
                self._holds_gc = True
                gc_pause.hold()
        return self._stream

    async def write(self, text: str) -> None:
        """Append a chunk of reply text (made inert when it is appended)."""
        stream = await self.start_stream()
        stream.write(text)

    async def take(self, delta: ReplyDelta) -> None:
        """Show a streamed piece: text, thinking (folded above the text) or a web search's
        call or result."""
        if delta.kind == "thinking":
            await reply_parts.write_thinking(self, delta.text)
        elif delta.block is not None:
            if note := await reply_parts.take_note(self, delta.block, self.message.model):
                await self.write(note)  # text between tool calls, come as thinking
            await reply_parts.add_block(self, delta.block)
        else:
            await self.write(delta.text)

    async def finish(self, message: Message, error_text: str | None = None) -> None:
        """Stop the stream and show the stored message's final text and status.

        The stream is always stopped, and the body replaced by the stored text when they
        differ, so what is shown is exactly what was saved.
        """
        await self._stop_stream()
        self.message = message
        self.error_text = error_text
        if message.role == "assistant":
            markdown = self.query_one(Markdown)
            if markdown.source != inert(shown := reply_parts.shown_text(message)):
                self.unfold()
                await markdown.update(inert(shown))
            await reply_parts.finish_parts(self, message)
        self.query_one(".header", Static).update(self._header())
        self._apply_status()


def _sentence(text: str) -> str:
    """``text`` ending with a full stop, so the retry hint after it reads as a new sentence."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."
