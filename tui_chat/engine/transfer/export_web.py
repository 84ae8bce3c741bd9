"""A reply's thinking, web searches and cited pages in the HTML export.

The thinking is folded in a ``<details>`` (as the summaries are), the searches and fetches are
listed before the text, the text carries ``[n]`` after cited passages, and the numbered
sources follow as links (only ``http``/``https`` ones; the page forbids scripts anyway); the
messages cited from recall (``[#id]`` in the text) are linked to their place on the page.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from tui_chat.core.models import Message
from tui_chat.core.recall_cites import recalled_ids
from tui_chat.core.web import cited_text, sources, web_lines

__all__ = ["reply_html"]


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def reply_html(message: Message, markdown_html: Callable[[str], str]) -> str:
    """The body of a message: its text as Markdown, with a reply's thinking, searches and
    sources around it when it has them."""
    cited = sources(message.content) if message.role == "assistant" else []
    recalled = recalled_ids(message.content) if message.role == "assistant" else []
    text = cited_text(message.content) if cited or recalled else message.text
    parts: list[str] = []
    thinking = "\n\n".join(
        str(b.get("thinking") or "") for b in message.content if b.get("type") == "thinking"
    ).strip()
    if thinking and message.role == "assistant":
        parts.append(
            '<details class="summary"><summary>Thinking</summary>\n'
            f'<div class="text">{_e(thinking)}</div>\n</details>\n'
        )
    if message.role == "assistant":
        parts += [f'<p class="file">{_e(line)}</p>\n' for line in web_lines(message.content)]
    parts.append(markdown_html(text))
    if cited:
        items = []
        for source in cited:
            title = _e(source.title or source.url)
            link = (
                f'<a href="{_e(source.url)}">{title}</a>'
                if source.url.startswith(("https://", "http://"))
                else title
            )
            items.append(f"<li>{link} — {_e(source.domain)}</li>")
        parts.append(f'<ol class="file">{"".join(items)}</ol>\n')
    if recalled:  # each message is an <article id="m<id>"> of the same page
        links = ", ".join(f'<a href="#m{i}">#{i}</a>' for i in recalled)
        parts.append(f'<p class="file">Cited from earlier in this conversation: {links}</p>\n')
    return "".join(parts)
