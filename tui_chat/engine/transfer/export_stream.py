"""This project's JSON and Markdown exports written as they are read, a page of messages at a
time.

The export of a 1,000,000-message conversation held every message, its JSON and the whole
text at once (7 GB). Here the conversation's head, then each page of messages, then the
summary versions, the fork and each attached file (once, base64, one at a time) go to
``write`` as they are made: memory stays flat in the conversation's length, and the text is
byte for byte one ``json.dumps(…, indent=2)`` of the whole export (a test holds the two
equal), with every control character escaped (:func:`dumps`). The Markdown export is written
the same way (:func:`write_markdown_export`): the heading, then each message as it is read, the
text :func:`export_markdown` makes of the whole.
"""

from __future__ import annotations

import base64
import json
import re
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

from tui_chat.core.attachments import refs
from tui_chat.engine.transfer.restore import fork_export, summary_export
from tui_chat.engine.transfer.transfer import (
    export_head,
    markdown_head,
    message_export,
    message_markdown,
)
from tui_chat.store.repository import Store

PAGE = 1_000
"""Messages read and written at a time."""


_UNESCAPED = re.compile(r"[\x7f-\x9f]")


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` with DEL and the C1 controls escaped
    too (``json`` escapes C0 only): the file holds no control character, and reads back the
    same text."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _value(value: Any) -> str:
    """``value`` as it appears at depth 1 of the indented export (its first line unindented)."""
    return textwrap.indent(dumps(value), "  ").lstrip()


def _item(value: Any) -> str:
    """``value`` as an element of a list at depth 1 (indented by four spaces)."""
    return textwrap.indent(dumps(value), "    ")


async def write_json_export(
    store: Store, conversation_id: str, write: Callable[[str], object], page: int = PAGE
) -> None:
    """Write the conversation's JSON export to ``write`` in pieces.

    Raises:
        NotFound: no such conversation.
    """
    conversation = await store.conversations.get(conversation_id)
    pinned = {a.message_id: a.note for a, _ in await store.anchors.pinned(conversation_id)}
    head = {**export_head(conversation), "messages": []}
    text = dumps(head)
    write(text[: text.rindex("[]")] + "[")
    files: dict[str, Mapping[str, Any]] = {}  # the references only, never the bytes
    after, first = 0, True
    while batch := await store.messages.history(conversation_id, after_id=after, limit=page):
        for message in batch:
            write(("\n" if first else ",\n") + _item(message_export(message, pinned)))
            first = False
            for ref in refs(message.content):
                files.setdefault(str(ref.get("sha256")), ref)
        after = batch[-1].id
    write("]" if first else "\n  ]")
    summaries = await store.summaries.versions(conversation_id)
    active = conversation.active_summary_id
    write(',\n  "summaries": ' + _value([summary_export(s, active) for s in summaries]))
    write(',\n  "fork": ' + _value(fork_export(await store.forks.get(conversation_id))))
    write(',\n  "attachments": [')
    first = True
    for sha, ref in files.items():
        data = (await store.attachments.data([sha])).get(sha)
        if data is None:
            continue
        entry = {
            "sha256": sha,
            "media_type": str(ref.get("media_type")),
            "size": len(data),
            "data": base64.b64encode(data).decode("ascii"),
        }
        write(("\n" if first else ",\n") + _item(entry))
        first = False
    write("]\n}" if first else "\n  ]\n}")


async def write_markdown_export(
    store: Store, conversation_id: str, write: Callable[[str], object], page: int = PAGE
) -> None:
    """Write the conversation's Markdown export to ``write`` in pieces, each ending with a
    newline (so a line's ``\\r\\n`` is never split between two): the text of
    :func:`~tui_chat.engine.transfer.transfer.export_markdown`.

    Raises:
        NotFound: no such conversation.
    """
    conversation = await store.conversations.get(conversation_id)
    pinned = {a.message_id: a.note for a, _ in await store.anchors.pinned(conversation_id)}
    write("\n".join(markdown_head(conversation)))  # ends with its blank line's newline
    after = 0
    while batch := await store.messages.history(conversation_id, after_id=after, limit=page):
        write("".join(f"\n{message_markdown(m, m.id in pinned)}\n" for m in batch))
        after = batch[-1].id
