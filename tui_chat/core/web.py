"""Claude's web search and fetch blocks, read for display and export.

Shapes as Claude's docs give them ("Web search tool", "Web fetch tool", read 2026-11-26):
a ``server_tool_use`` block (``name`` ``web_search`` with ``input.query``, or ``web_fetch``
with ``input.url``), then its result in the same message: ``web_search_tool_result`` whose
``content`` is a list of ``web_search_result`` (``url``, ``title``, ``page_age``,
``encrypted_content``) or an error object (``web_search_tool_result_error``,
``error_code``); ``web_fetch_tool_result`` whose ``content`` is a ``web_fetch_result``
(``url``, ``content`` a document with a ``title``) or an error. Text that uses them carries
``citations`` (``web_search_result_location``: ``url``, ``title``, ``cited_text``; a fetched
page's ``char_location`` names its document by ``document_title``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tui_chat.core.recall_cites import block_marks, recalled_ids

__all__ = [
    "Source",
    "WebResult",
    "activity",
    "cited_text",
    "domain",
    "has_citations",
    "markdown_body",
    "results",
    "sources",
    "stream_note",
    "web_lines",
]


@dataclass(frozen=True, slots=True)
class WebResult:
    """One page a search found or a fetch read."""

    title: str
    url: str

    @property
    def domain(self) -> str:
        """The page's host without ``www.``."""
        return domain(self.url)


@dataclass(frozen=True, slots=True)
class Source:
    """A page the reply cites, numbered in the order first cited."""

    number: int
    title: str
    url: str
    cited: tuple[str, ...]
    """The cited passages (``cited_text``), in order."""

    @property
    def domain(self) -> str:
        """The page's host without ``www.``."""
        return domain(self.url)


def domain(url: str) -> str:
    """The host of a URL without ``www.`` (the URL itself when it has none)."""
    host = urlsplit(url).hostname or url
    return host.removeprefix("www.")


def activity(block: Mapping[str, Any]) -> str | None:
    """One line for a server tool call or result (``None`` for other blocks).

    Examples: ``searched the web: “rust 2024 edition”``, ``fetched https://…``,
    ``5 results``, ``search failed: max_uses_exceeded``.
    """
    kind = block.get("type")
    if kind == "server_tool_use":
        given = block.get("input")
        data: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if block.get("name") == "web_search":
            return f"searched the web: “{data.get('query', '')}”"
        if block.get("name") == "web_fetch":
            return f"fetched {data.get('url', '')}"
        return f"ran {block.get('name', 'a server tool')}"
    if kind in ("web_search_tool_result", "web_fetch_tool_result"):
        error = _error(block)
        what = "search" if kind == "web_search_tool_result" else "fetch"
        if error is not None:
            return f"{what} failed: {error}"
        found = results(block)
        if what == "fetch":
            return f"read {found[0].title or found[0].url}" if found else "read nothing"
        return f"{len(found)} result{'s' if len(found) != 1 else ''}"
    return None


def _error(block: Mapping[str, Any]) -> str | None:
    content = block.get("content")
    if isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error"):
        return str(content.get("error_code") or "error")
    return None


def results(block: Mapping[str, Any]) -> list[WebResult]:
    """The pages of a search or fetch result block (empty for an error or another block)."""
    content = block.get("content")
    if block.get("type") == "web_search_tool_result" and isinstance(content, list):
        return [
            WebResult(str(item.get("title") or ""), str(item.get("url") or ""))
            for item in content
            if isinstance(item, Mapping) and item.get("url")
        ]
    if block.get("type") == "web_fetch_tool_result" and isinstance(content, Mapping):
        url = str(content.get("url") or "")
        document = content.get("content")
        title = document.get("title") if isinstance(document, Mapping) else None
        return [WebResult(str(title or ""), url)] if url else []
    return []


def sources(content: Iterable[Mapping[str, Any]]) -> list[Source]:
    """The pages a message's text cites, numbered in the order first cited."""
    found: dict[str, tuple[str, list[str]]] = {}
    for block in content:
        if block.get("type") != "text":
            continue
        for citation in block.get("citations") or ():
            if not isinstance(citation, Mapping):
                continue
            url = str(citation.get("url") or "")
            if not url:
                continue
            title = str(citation.get("title") or citation.get("document_title") or "")
            entry = found.setdefault(url, (title, []))
            cited = str(citation.get("cited_text") or "").strip()
            if cited and cited not in entry[1]:
                entry[1].append(cited)
    return [
        Source(number, title, url, tuple(cited))
        for number, (url, (title, cited)) in enumerate(found.items(), start=1)
    ]


def has_citations(content: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a message's text cites web pages or recalled messages."""
    blocks = list(content)
    return bool(sources(blocks) or recalled_ids(blocks))


def cited_text(content: Iterable[Mapping[str, Any]]) -> str:
    """A message's text with ``[n]`` after each cited block (``n`` from :func:`sources`) and
    ``[#id]`` after each passage cited from recall (:mod:`tui_chat.core.recall_cites`)."""
    blocks = list(content)
    numbers = {source.url: source.number for source in sources(blocks)}
    parts: list[str] = []
    for block in blocks:
        if block.get("type") != "text":
            continue
        text = str(block.get("text") or "")
        marks = []
        for citation in block.get("citations") or ():
            number = (
                numbers.get(str(citation.get("url") or ""))
                if isinstance(citation, Mapping)
                else None
            )
            if number is not None and f"[{number}]" not in marks:
                marks.append(f"[{number}]")
        marks += block_marks(block)
        body = text.rstrip()
        parts.append(body + "".join(marks) + text[len(body) :])
    return "".join(parts)


def web_lines(content: Iterable[Mapping[str, Any]]) -> list[str]:
    """What a reply searched and read, one line per call or result (for exports and show)."""
    lines: list[str] = []
    for block in content:
        line = activity(block)
        if line is not None:
            lines.append(line)
    return lines


def markdown_body(content: Sequence[Mapping[str, Any]], text: str, *, markdown: bool = True) -> str:
    """A reply for an export (``markdown``) or ``tui-chat show`` (plain text).

    Markdown: thinking folded in ``<details>``, what the reply searched and read as quoted
    lines, its text with ``[n]`` citation marks, and the cited pages as reference links
    (``[n]: URL "title"``). Plain text: ``[thinking: N words]``, ``[searched …]`` lines, the
    marked text and ``[n] title — URL`` lines; a reply citing recalled passages has ``[#id]``
    after them and a line naming those messages. ``text`` alone when the reply has none of
    these.
    """
    thinking = "\n\n".join(
        str(b.get("thinking") or "") for b in content if b.get("type") == "thinking"
    ).strip()
    lines, cited, recalled = web_lines(content), sources(content), recalled_ids(content)
    if not thinking and not lines and not cited and not recalled:
        return text
    parts: list[str] = []
    if thinking and markdown:
        parts.append(f"<details><summary>Thinking</summary>\n\n{thinking}\n\n</details>")
    elif thinking:
        parts.append(f"[thinking: {len(thinking.split())} words]")
    if lines:
        parts.append("\n".join(f"> {line}" if markdown else f"[{line}]" for line in lines))
    parts.append(cited_text(content) if cited or recalled else text)
    if cited and markdown:
        parts.append("\n".join(f'[{s.number}]: {s.url} "{s.title}"' for s in cited))
    elif cited:
        parts.append("\n".join(f"[{s.number}] {s.title} — {s.url}" for s in cited))
    if recalled:
        ids = ", ".join(f"#{i}" for i in recalled)
        parts.append(f"{'> ' if markdown else ''}Cited from earlier in this conversation: {ids}")
    return "\n\n".join(part for part in parts if part)


def stream_note(block: Mapping[str, Any] | None) -> str:
    """A line for a server tool block while a reply streams (``""`` for other blocks)."""
    line = activity(block) if block is not None else None
    return f"[{line}]\n" if line else ""
