"""The context preview: the exact request the next send would make, and its token breakdown."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from tui_chat.core.blocks import block_text
from tui_chat.core.reply_options import describe
from tui_chat.engine.usage import miss_line
from tui_chat.tui.actions import bindings
from tui_chat.tui.text import inert, inert_content, tokens
from tui_chat.tui.widgets.token_gauge import SECTIONS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tui_chat.core.models import Message
    from tui_chat.core.request import Breakdown, BuiltRequest
    from tui_chat.tui.widgets.pages import MessageSource


def breakdown_table(breakdown: Breakdown) -> Content:
    """Window, sections, totals, trigger and warnings as aligned lines."""
    rows: list[tuple[str, str, str]] = [
        ("window", tokens(breakdown.window), ""),
        ("max output", tokens(breakdown.max_output), ""),
        ("budget" if breakdown.budget is not None else "usable", tokens(breakdown.usable), ""),
        ("cache lifetime", breakdown.cache_ttl, ""),
    ]
    for key, label, style in SECTIONS:
        if key == "tools" and not breakdown.sections.get(key):
            continue  # no tools switched on: no line
        rows.append((label, f"{int(breakdown.sections.get(key, 0)):,}", style))
    rows.append(("input (local)", f"{breakdown.input_tokens:,}", "bold"))
    rows.append(("calibrated", f"{breakdown.calibrated_tokens:,}", "bold"))
    if breakdown.trigger_tokens:
        rows.append(("compacts at", f"{breakdown.trigger_tokens:,}", "$text-error"))
    rows.append(("warns at", f"{breakdown.warn_tokens:,}", "$text-warning"))
    lines = [
        Content.assemble(
            (
                "■ "
                if style.startswith("$") and label not in ("compacts at", "warns at")
                else "  ",
                style,
            ),
            f"{label:<14}",
            (f"{value:>10}", "bold"),
        )
        for label, value, style in rows
    ]
    for warning in breakdown.warnings:
        lines.append(inert_content("⚠ " + warning, "$text-warning"))
    return Content("\n").join(lines)


def _cache_mark(blocks: list[Any]) -> str:
    marked = any(isinstance(b, dict) and "cache_control" in b for b in blocks)
    return " · cache breakpoint" if marked else ""


def message_labels(
    request: dict[str, Any], sent: Sequence[Message], *, new_message: bool
) -> list[str]:
    """What each message of the request carries, by stored ``#id``.

    A request message holds the run of stored messages of its role that comes next in
    ``sent`` (the builder merges consecutive ones); the last one holds the message being
    written too. A message whose share cannot be told is numbered by its place instead.

    Args:
        request: The request.
        sent: The stored messages it sends, in order (``BuiltRequest.sent_message_ids``).
        new_message: Whether the request ends with the message being written.
    """
    messages = request.get("messages", [])
    queue = list(sent)
    labels = []
    for index, message in enumerate(messages, start=1):
        ids = []
        while queue and queue[0].role == message.get("role"):
            ids.append(queue.pop(0).id)
        parts = [f"#{ids[0]}…#{ids[-1]} ({len(ids)} messages)"] if len(ids) > 3 else []
        parts = parts or [f"#{i}" for i in ids]
        if new_message and index == len(messages):
            parts.append("new message")
        labels.append(" + ".join(parts) or f"message {index}")
    if queue:  # not the shape the builder makes: say only where each message is
        return [f"message {index}" for index in range(1, len(messages) + 1)]
    return labels


async def sent_labels(
    source: MessageSource, conversation_id: str, built: BuiltRequest, *, new_message: bool
) -> list[str]:
    """:func:`message_labels` of a built request, its stored messages read from ``source``.

    The messages it sends lie in one stretch of ids (the raw window), read in one call.
    """
    ids = set(built.sent_message_ids)
    if not ids:
        return message_labels(built.request, [], new_message=new_message)
    first, last = min(ids), max(ids)
    stretch = await source.page(conversation_id, after_id=first - 1, limit=last - first + 1)
    by_id = {m.id: m for m in stretch}
    if not ids <= by_id.keys():
        return []  # changed meanwhile: numbered by place
    sent = [by_id[i] for i in built.sent_message_ids]
    return message_labels(built.request, sent, new_message=new_message)


def readable(request: dict[str, Any], labels: Sequence[str] = ()) -> Content:
    """The request as a reader sees it: system blocks, then each message, real line breaks.

    Args:
        request: The request.
        labels: What each message carries (:func:`message_labels`); by place without them.
    """
    parts: list[Content] = []
    if options := describe(request):  # thinking, effort, web tools
        parts += [
            Content.styled(f"── the reply may use: {options}", "bold $text-accent"),
            Content(""),
        ]
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for index, block in enumerate(system, start=1):
        cached = (
            " · cache breakpoint" if isinstance(block, dict) and "cache_control" in block else ""
        )
        parts.append(Content.styled(f"── system block {index}{cached}", "bold $text-accent"))
        parts.append(inert_content(block_text(block)))
        parts.append(Content(""))
    for index, message in enumerate(request.get("messages", []), start=1):
        role = str(message.get("role", "?"))
        content = message.get("content", [])
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        style = "bold $text-primary" if role == "user" else "bold $text-secondary"
        label = labels[index - 1] if index <= len(labels) else f"message {index}"
        parts.append(Content.styled(f"── {label} · {role}{_cache_mark(blocks)}", style))
        for block in blocks:
            parts.append(inert_content(block_text(block)))
        parts.append(Content(""))
    return Content("\n").join(parts)


def cache_table(replies: Sequence[Message]) -> Content:
    """What the prompt cache did on each recent turn: read, written, sent uncached.

    A turn that read nothing from the cache is a miss (its whole prefix written again); where
    the reply's cache diagnostics said why, the line says so (model, system, tools or messages
    changed).
    """
    lines = [Content.styled("turn    read   written  uncached", "bold")]
    for reply in replies:
        usage = reply.usage
        if usage is None or reply.role != "assistant":
            continue
        hour = " (1h)" if usage.cache_creation_1h_input_tokens else ""
        miss = "  miss" if usage.cache_read_input_tokens == 0 else ""
        if usage.cache_miss:
            miss = f"  miss: {miss_line(usage.cache_miss, usage.cache_missed_tokens)}"
        lines.append(
            Content.assemble(
                f"#{reply.id:<5}{tokens(usage.cache_read_input_tokens):>6} "
                f"{tokens(usage.cache_creation_input_tokens):>8}{hour}"
                f" {tokens(usage.input_tokens):>8}",
                (miss, "$text-warning"),
            )
        )
    if len(lines) == 1:
        lines.append(Content.styled("no reply with usage yet", "$text-muted"))
    return Content("\n").join(lines)


SHOWN_DATA_CHARS = 64
"""Base64 characters of an attached file shown on screen (the copied JSON has them all)."""


def shown(value: Any) -> Any:
    """The request as the JSON tab shows it: attached files' base64 cut to a few characters
    with their length, so a 5 MB image does not fill the screen (copy gives everything)."""
    if isinstance(value, list):
        return [shown(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: shown(item) for key, item in value.items()}
    data = value.get("data")
    if value.get("type") == "base64" and isinstance(data, str) and len(data) > SHOWN_DATA_CHARS:
        out["data"] = f"{data[:SHOWN_DATA_CHARS]}… ({len(data):,} base64 characters; c copies all)"
    return out


class ContextPreviewScreen(Screen[None]):
    """Full screen: breakdown on the left, the pretty-printed JSON request on the right.

    Args:
        built: The request as built by the engine for the current draft.
        recent: The newest messages, oldest first: the Cache tab shows their replies' reads,
            writes and misses.
        labels: What each request message carries, by ``#id`` (:func:`message_labels`).
        path: Which branch of its conversation is sent, and where it parts.
    """

    CSS_PATH = "context_preview.tcss"

    BINDINGS: ClassVar[list[BindingType]] = bindings("preview")

    def __init__(
        self,
        built: BuiltRequest,
        recent: Sequence[Message] = (),
        labels: Sequence[str] = (),
        path: str = "",
    ) -> None:
        super().__init__()
        self.built = built
        self.path = path
        self.recent = list(recent)
        self.labels = list(labels)
        self.request_json = inert(json.dumps(built.request, ensure_ascii=False, indent=2))

    def compose(self) -> ComposeResult:
        """Header, breakdown | JSON, footer."""
        yield Header(icon="◆")
        with Horizontal(id="preview-body"):
            with VerticalScroll(id="preview-breakdown"):
                if self.path:
                    yield Static(f"Path: {self.path}", id="preview-path", markup=False)
                yield Static(breakdown_table(self.built.breakdown))
            with TabbedContent(id="preview-tabs", initial="readable"):
                with TabPane("Readable", id="readable"), VerticalScroll():
                    yield Static(readable(self.built.request, self.labels), id="request-readable")
                with TabPane("JSON", id="json"), VerticalScroll(id="preview-json"):
                    yield Static(
                        Syntax(
                            inert(
                                json.dumps(shown(self.built.request), ensure_ascii=False, indent=2)
                            ),
                            "json",
                            theme="ansi_dark",
                            word_wrap=True,
                        ),
                        id="request-json",
                    )
                with TabPane("Cache", id="cache"), VerticalScroll():
                    yield Static(cache_table(self.recent), id="request-cache")
        yield Footer()

    def on_mount(self) -> None:
        """Title the screen."""
        self.title = "Context preview"
        self.sub_title = "the exact next request"
        self.query_one("#readable VerticalScroll").focus()

    def action_show_tab(self, tab: str) -> None:
        """Switch between the readable view and the raw JSON."""
        self.query_one(TabbedContent).active = tab

    def action_copy(self) -> None:
        """Copy the request JSON to the clipboard."""
        self.app.copy_to_clipboard(self.request_json)
        self.notify("Request JSON copied.")

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
