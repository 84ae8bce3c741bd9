"""What a reply searched and read (above its text) and the pages it cites (below it).

Claude's web tools run on Anthropic's side; the reply holds a ``server_tool_use`` block and its
result for each search or fetch, and ``citations`` on the text that uses them
(:mod:`tui_chat.core.web`). Each page is shown by title and domain; ``u`` in navigation mode
copies the URLs (:class:`ReplyKeys`), and the reply's text carries ``[n]`` after a cited
passage, matching the numbered sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textual.content import Content
from textual.widgets import Static

from tui_chat.core.web import activity, results, sources
from tui_chat.tui.text import inert_content

__all__ = ["WebActivity", "WebSources", "links"]

MAX_RESULTS_SHOWN = 5
"""Pages of one search listed under it (the rest are counted)."""


def links(content: Sequence[Mapping[str, Any]]) -> list[str]:
    """The URLs of a reply: the pages it cites, then the other pages it searched or read."""
    urls = [source.url for source in sources(content)]
    for block in content:
        urls += [r.url for r in results(block) if r.url not in urls]
    return urls


class WebActivity(Static):
    """One line per search or fetch of a reply, with the pages it found."""

    DEFAULT_CSS = """
    WebActivity { height: auto; color: $text-muted; margin: 0 0 1 0; }
    """

    def __init__(self, blocks: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(classes="web-activity")
        self.blocks: list[Mapping[str, Any]] = [b for b in blocks if activity(b) is not None]

    def on_mount(self) -> None:
        """Show the lines."""
        self.update(self.lines())

    def add(self, block: Mapping[str, Any]) -> None:
        """A search, a fetch or a result that arrived while the reply streams."""
        if activity(block) is not None:
            self.blocks.append(block)
            self.update(self.lines())

    def lines(self) -> Content:
        """The searches and fetches, each with what it found."""
        parts: list[Content] = []
        for block in self.blocks:
            line = activity(block) or ""
            mark = "→ " if block.get("type") == "server_tool_use" else "  ↳ "
            parts.append(inert_content(mark + line, "italic"))
            found = results(block) if block.get("type") == "web_search_tool_result" else []
            for result in found[:MAX_RESULTS_SHOWN]:
                title = result.title or result.url
                parts.append(
                    Content.assemble(
                        "    · ", inert_content(title), inert_content(f" — {result.domain}", "dim")
                    )
                )
            if len(found) > MAX_RESULTS_SHOWN:
                parts.append(Content(f"    · and {len(found) - MAX_RESULTS_SHOWN:,} more"))
        return Content("\n").join(parts)


class WebSources(Static):
    """The pages a reply cites, numbered as the ``[n]`` marks in its text."""

    DEFAULT_CSS = """
    WebSources { height: auto; color: $text-muted; margin: 0 0 1 0; }
    """

    def __init__(self, content: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(classes="web-sources")
        self.blocks = content

    def on_mount(self) -> None:
        """Show the sources."""
        self.update(self.lines())

    def lines(self) -> Content:
        """``Sources`` and one line per cited page: number, title, domain."""
        cited = sources(self.blocks)
        parts = [Content.styled("Sources (u copies the links)", "italic")]
        for source in cited:
            parts.append(
                Content.assemble(
                    (f"[{source.number}] ", "bold"),
                    inert_content(source.title or source.url),
                    inert_content(f" — {source.domain}", "dim"),
                )
            )
        return Content("\n").join(parts)
