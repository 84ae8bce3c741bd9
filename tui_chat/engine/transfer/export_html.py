"""A conversation as one self-contained HTML page, written a page of messages at a time.

The page needs nothing but itself to be read: the style and the code highlighting (Pygments)
are inline, attached images are embedded as ``data:`` URIs, and a Content-Security-Policy
forbids every fetch and every script, so a link or an image the model wrote cannot call out
when the file is opened. Messages are rendered from Markdown with raw HTML escaped
(``markdown-it-py`` with ``html`` off, the library Textual itself renders Markdown with):
model output stays inert text, and every control character is made a visible stand-in
(:func:`~tui_chat.core.inert.inert`): the page never carries one.

Pins, failed or refused replies and the messages the active summary covers are marked; the
summary versions are listed at the top (the active one open). Memory stays flat in the
conversation's length, as for the JSON export (:mod:`tui_chat.engine.transfer.export_stream`).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from tui_chat.core.attachments import ref_label, refs
from tui_chat.core.inert import inert
from tui_chat.core.models import Conversation, Message, Summary
from tui_chat.engine.transfer.export_web import reply_html
from tui_chat.store.repository import Store

PAGE = 1_000
"""Messages read and written at a time."""

EMBEDDED_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types a browser shows from a ``data:`` URI (anything else is named, not embedded)."""

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""Nothing is fetched and nothing runs: the page is read, never executed."""

_FORMATTER = HtmlFormatter(nowrap=True, classes=True)
_CODE_STYLE: str = _FORMATTER.get_style_defs("pre")  # type: ignore[no-untyped-call]

_STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #6e7781;
  --line: #d0d7de; --user: #f6f8fa; --pin: #9a6700; --fold: #8250df; --bad: #cf222e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0;
  --line: #30363d; --user: #161b22; --pin: #d29922; --fold: #a371f7; --bad: #f85149; } }
body { font: 15px/1.55 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  max-width: 52rem; margin: 2rem auto; padding: 0 1rem; }
header.conv { border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
.meta, .head { color: var(--muted); font-size: 0.85rem; }
.system { white-space: pre-wrap; border-left: 3px solid var(--line); padding-left: 0.75rem; }
article.msg { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 1rem;
  margin: 0.75rem 0; }
article.user { background: var(--user); }
article.pinned { border-left: 4px solid var(--pin); }
article.folded { border-style: dashed; }
article.failed, article.refused { border-left: 4px solid var(--bad); }
.badge { display: inline-block; border: 1px solid currentColor; border-radius: 3px;
  padding: 0 0.3rem; margin-left: 0.4rem; font-size: 0.75rem; }
.badge.pin { color: var(--pin); } .badge.fold { color: var(--fold); }
.badge.bad { color: var(--bad); }
pre { overflow-x: auto; padding: 0.6rem; border: 1px solid var(--line); border-radius: 4px;
  background: #f6f8fa; color: #1f2328; }
code { font: 0.9em ui-monospace, monospace; }
img.attached { max-width: 100%; display: block; margin: 0.5rem 0; }
.file { color: var(--muted); font-size: 0.85rem; }
details.summary { border: 1px solid var(--fold); border-radius: 6px; padding: 0.4rem 0.8rem;
  margin: 0.5rem 0; }
details.summary .text { white-space: pre-wrap; }
table { border-collapse: collapse; } td, th { border: 1px solid var(--line); padding: 0 0.4rem; }
"""


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Fenced code coloured by Pygments; an unknown or missing language is left plain."""
    try:
        lexer = get_lexer_by_name(lang.strip()) if lang.strip() else None
    except ClassNotFound:
        lexer = None
    return str(highlight(code, lexer, _FORMATTER)) if lexer is not None else ""


_MARKDOWN = (
    MarkdownIt("commonmark", {"html": False, "highlight": _highlight, "linkify": False})
    .enable("table")
    .enable("strikethrough")
    .disable("image")  # an image the model names stays a link: opening the page fetches nothing
)


def markdown_html(text: str) -> str:
    """``text`` (Markdown) as HTML with any raw HTML in it escaped, never passed through."""
    return str(_MARKDOWN.render(text))


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _when(iso: str) -> str:
    """``2026-03-14T09:00:00.000000+00:00`` as ``2026-03-14 09:00 UTC`` (as stored: UTC)."""
    return f"{iso[:10]} {iso[11:16]} UTC" if len(iso) >= 16 else iso


def page_head(conversation: Conversation) -> str:
    """The page from ``<!doctype>`` to the end of the conversation's header."""
    code_style = _CODE_STYLE
    system = conversation.system_prompt
    return "".join(
        [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{_e(conversation.title)}</title>\n",
            f"<style>{_STYLE}\n{code_style}\n</style>\n</head>\n<body>\n",
            f'<header class="conv">\n<h1>{_e(conversation.title)}</h1>\n',
            f'<p class="meta">Model <code>{_e(conversation.model)}</code>'
            f" · started {_e(_when(conversation.created_at))} · id {_e(conversation.id)}</p>\n",
            f'<div class="system"><b>System:</b> {_e(system)}</div>\n' if system else "",
            "</header>\n",
        ]
    )


def summaries_html(summaries: list[Summary], active_id: int | None) -> str:
    """Every summary version, newest first; the active one open and marked."""
    if not summaries:
        return ""
    parts = ['<section class="summaries">\n<h2>Summaries</h2>\n']
    for summary in sorted(summaries, key=lambda s: s.version, reverse=True):
        active = summary.id == active_id
        label = f"v{summary.version}{' · active' if active else ''} · {_e(summary.status)}"
        parts.append(
            f'<details class="summary" id="s{summary.version}"{" open" if active else ""}>'
            f"<summary>{label} · covers up to "
            f'<a href="#m{summary.covers_to_message_id}">#{summary.covers_to_message_id}</a>'
            f" ({summary.covered_messages} messages, {summary.summary_tokens} tokens,"
            f" {_e(summary.summarizer)})</summary>\n"
            f'<div class="text">{_e(summary.text)}</div>\n</details>\n'
        )
    parts.append("</section>\n")
    return "".join(parts)


def _attachment_html(ref: Mapping[str, Any], data: bytes | None) -> str:
    media = str(ref.get("media_type") or "")
    if data is not None and media in EMBEDDED_IMAGES:
        uri = f"data:{media};base64,{base64.b64encode(data).decode('ascii')}"
        return f'<img class="attached" alt="{_e(ref.get("name") or "image")}" src="{uri}">\n'
    return f'<p class="file">{_e(ref_label(ref).splitlines()[0])}</p>\n'


def message_html(
    message: Message,
    pinned: dict[int, str],
    folded_by: int | None,
    files: Mapping[str, bytes],
) -> str:
    """One message as an ``<article>`` with its marks (pinned, folded, failed) and files."""
    classes = ["msg", message.role]
    badges: list[str] = []
    if message.id in pinned:
        classes.append("pinned")
        note = f": {_e(pinned[message.id])}" if pinned[message.id] else ""
        badges.append(f'<span class="badge pin">pinned{note}</span>')
    if folded_by is not None:
        classes.append("folded")
        badges.append(f'<a class="badge fold" href="#s{folded_by}">in summary v{folded_by}</a>')
    if message.status != "complete":
        classes.append(message.status)
        badges.append(f'<span class="badge bad">{_e(message.status)}</span>')
    head = (
        f'<div class="head"><a href="#m{message.id}">#{message.id}</a> '
        f"<b>{_e(message.role.title())}</b> · {_e(_when(message.created_at))}"
        f"{''.join(badges)}</div>\n"
    )
    body = [head, reply_html(message, markdown_html)]  # thinking, searches, sources
    for ref in refs(message.content):
        body.append(_attachment_html(ref, files.get(str(ref.get("sha256")))))
    if message.error:
        body.append(f'<p class="file">{_e(message.error)}</p>\n')
    return f'<article class="{" ".join(classes)}" id="m{message.id}">\n{"".join(body)}</article>\n'


async def write_html_export(
    store: Store, conversation_id: str, write: Callable[[str], object], page: int = PAGE
) -> None:
    """Write the conversation as one HTML page to ``write`` in pieces.

    Raises:
        NotFound: no such conversation.
    """
    conversation = await store.conversations.get(conversation_id)

    def put(text: str) -> None:  # the page never carries a control character
        write(inert(text))

    pinned = {a.message_id: a.note for a, _ in await store.anchors.pinned(conversation_id)}
    summaries = await store.summaries.versions(conversation_id)
    active = next((s for s in summaries if s.id == conversation.active_summary_id), None)
    put(page_head(conversation))
    put(summaries_html(summaries, conversation.active_summary_id))
    put('<main class="messages">\n')
    after, count = 0, 0
    while batch := await store.messages.history(conversation_id, after_id=after, limit=page):
        for message in batch:
            images = [
                str(ref.get("sha256"))
                for ref in refs(message.content)
                if str(ref.get("media_type") or "") in EMBEDDED_IMAGES
            ]
            files = await store.attachments.data(images) if images else {}
            folded = (
                active.version
                if active is not None and message.id <= active.covers_to_message_id
                else None
            )
            put(message_html(message, pinned, folded, files))
        after, count = batch[-1].id, count + len(batch)
    put(f'</main>\n<footer class="meta"><p>{count} messages · exported by tui-chat</p></footer>\n')
    put("</body>\n</html>\n")
