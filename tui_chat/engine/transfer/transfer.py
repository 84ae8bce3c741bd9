"""Export and import of conversations.

Export: this project's JSON (everything: messages with content blocks, pins, summary versions
with the active one, where a fork came from; :mod:`tui_chat.engine.transfer.restore`) or Markdown.
Import: our JSON, or a plain Anthropic Messages list
``{"title"?, "system"?, "messages": [{"role", "content"}]}``. An import is validated whole
before anything is written, and a failure while writing removes what was written: nothing is
half-imported. A file imported before (the same bytes) is refused unless forced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_chat.core.blocks import content_text
from tui_chat.core.models import ContentBlock, Conversation, Message, Usage, utc_now
from tui_chat.core.records import conversation_record, message_record
from tui_chat.core.settings_check import settings_problems
from tui_chat.core.tokens import TokenCounter, pieces
from tui_chat.core.web import markdown_body
from tui_chat.engine.transfer.attachment_transfer import (
    AttachmentImportError,
    check_refs,
    import_attachments,
    parse_attachments,
)
from tui_chat.engine.transfer.restore import (
    RestoreError,
    parse_fork,
    parse_summaries,
    restore,
)
from tui_chat.store.repository import Store

EXPORT_FORMAT = "tui-chat"
EXPORT_VERSION = 1
MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_IMPORT_MESSAGES = 200_000
MAX_IMPORT_DEPTH = 100
MAX_MESSAGE_CHARS = 8_000_000
"""A message's text is at most this long (about 2 million tokens, twice the largest context
window: a longer one could never be sent). A 60 MB message was imported at 2.9 GB; refused,
an import stays within 300 MB for any file accepted."""
_BLOCK_TYPES: dict[str, str | None] = {
    "attachment": None,
    "text": "text",
    "image": None,
    "document": None,
    "tool_use": "id",
    "tool_result": "tool_use_id",
    "thinking": None,
    "redacted_thinking": None,
    "server_tool_use": None,
    "web_search_tool_result": None,
    "web_fetch_tool_result": None,
}
"""The content block types an import may hold, and the string field each one needs."""
_STATUSES = {
    "complete": "complete",
    "incomplete": "incomplete",
    "error": "error",
    "streaming": "incomplete",
}
"""A message's status as exported, and as stored: a reply exported while it streamed is
imported ``incomplete``."""


class ImportError_(ValueError):
    """A file that cannot be imported; the message says where and why."""


class AlreadyImported(ImportError_):
    """The same file (the same bytes) was imported before and its conversation is here."""

    def __init__(self, path: Path, earlier: Conversation, when: str) -> None:
        super().__init__(
            f"{path} was already imported on {when[:16].replace('T', ' ')} UTC as conversation "
            f"{earlier.id} “{earlier.title}”; nothing was imported (--force imports another copy)"
        )
        self.conversation = earlier


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One validated message ready to store."""

    role: str
    content: list[dict[str, Any]]
    text: str
    created_at: str | None
    status: str
    pinned_note: str | None
    exported: dict[str, Any] | None = None
    """Our export's id, model, usage, stop reason and error of the message (one slot: a
    100,000-message import holds one of these per message)."""


def export_head(conversation: Conversation) -> dict[str, Any]:
    """The start of this project's JSON export: format, version, time and the conversation."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": utc_now(),
        "conversation": conversation_record(conversation),
    }


def message_export(m: Message, pinned: dict[int, str]) -> dict[str, Any]:
    """One message of this project's JSON export: its record, whether it is pinned and the note."""
    return {**message_record(m), "pinned": m.id in pinned, "pin_note": pinned.get(m.id)}


def markdown_head(conversation: Conversation) -> list[str]:
    """The lines of the Markdown export before its first message: title, model, system."""
    lines = [f"# {conversation.title}", "", f"Model: `{conversation.model}`", ""]
    if conversation.system_prompt:
        lines += ["> System: " + conversation.system_prompt.replace("\n", "\n> "), ""]
    return lines


def export_markdown(
    conversation: Conversation, messages: list[Message], pinned: dict[int, str]
) -> str:
    """The conversation as readable Markdown."""
    lines = markdown_head(conversation)
    for message in messages:
        lines += [message_markdown(message, message.id in pinned), ""]
    return "\n".join(lines)


def message_markdown(message: Message, pinned: bool = False) -> str:
    """One message as the Markdown export writes it: a heading (role, time, marks) and its
    text with thinking, searches and sources (the TUI's copy as Markdown too)."""
    marks = ["pinned"] if pinned else []
    if message.status != "complete":
        marks.append(message.status)
    suffix = f" ({', '.join(marks)})" if marks else ""
    body = markdown_body(message.content, message.text)  # thinking, searches, sources
    return f"## {message.role.title()} · {message.created_at}{suffix}\n\n{body}"


def export_format(path: Path) -> str:
    """The export format a file name asks for: ``json`` for ``.json``, ``html`` for
    ``.html``/``.htm``, else ``md``."""
    suffix = path.suffix.lower()
    return {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "md")


def _depth_over(value: Any, limit: int) -> bool:
    """True when lists/objects in ``value`` nest more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _fail(where: str, why: str) -> ImportError_:
    return ImportError_(f"{where}: {why}")


def _blocks(raw: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [{"type": "text", "text": raw}]
    if not isinstance(raw, list):
        raise _fail(where, "content must be a string or a list of content blocks")
    for index, block in enumerate(raw):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _fail(f"{where}[{index}]", "a content block must be an object with a type")
        kind = block["type"]
        if kind not in _BLOCK_TYPES:
            raise _fail(f"{where}[{index}]", f"unknown content block type {kind!r}")
        needs = _BLOCK_TYPES[kind]
        if needs is not None and not isinstance(block.get(needs), str):
            raise _fail(f"{where}[{index}]", f"a {kind} block needs a string {needs!r}")
    return raw


def file_hash(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _exported(item: dict[str, Any], where: str) -> dict[str, Any]:
    """What our export keeps of a message beyond its content (id, model, usage, end)."""
    out: dict[str, Any] = {}
    for key in ("model", "stop_reason", "error"):
        if isinstance(item.get(key), str):
            out[key] = item[key]
    if isinstance(item.get("id"), int) and not isinstance(item["id"], bool):
        out["id"] = item["id"]
    if isinstance(item.get("usage"), dict):
        try:
            out["usage"] = Usage.from_dict(item["usage"])
        except (TypeError, ValueError):
            raise _fail(where, "usage must hold token counts") from None
    return out


def _read_json(path: Path) -> Any:
    """The file's JSON: readable, within the size limit, UTF-8, valid and not too deep."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportError_(f"{path}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_IMPORT_BYTES:
        raise ImportError_(
            f"{path}: file is {size / 1e6:.0f} MB; imports are limited to "
            f"{MAX_IMPORT_BYTES // 2**20} MB"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ImportError_(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ImportError_(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise ImportError_(f"{path}: JSON nested too deeply") from None
    if _depth_over(data, MAX_IMPORT_DEPTH):
        # Deeper values parse, but storing and sending them recurses past Python's limit.
        raise ImportError_(f"{path}: JSON nested too deeply (more than {MAX_IMPORT_DEPTH} levels)")
    return data


def _head(data: Any, path: Path, ours: bool) -> tuple[dict[str, Any], list[Any]]:
    """The conversation's title and system prompt, and its list of raw messages."""
    if not isinstance(data, dict):
        raise ImportError_(f"{path}: expected a JSON object with a 'messages' list")
    conv = data.get("conversation") if ours else data
    if not isinstance(conv, dict):
        raise ImportError_(f"{path}: 'conversation' must be an object")
    title = conv.get("title") or path.stem
    system = conv.get("system") or ""
    if isinstance(system, list):  # Anthropic system blocks
        system = "\n\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    if not isinstance(title, str) or not isinstance(system, str):
        raise ImportError_(f"{path}: 'title' and 'system' must be strings")
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise ImportError_(f"{path}: 'messages' must be a non-empty list")
    if len(raw_messages) > MAX_IMPORT_MESSAGES:
        raise ImportError_(f"{path}: more than {MAX_IMPORT_MESSAGES} messages")
    return {"title": title, "system": system}, raw_messages


def _message(item: Any, where: str, ours: bool, files: dict[str, bytes]) -> ImportedMessage:
    """One raw message checked and converted; a plain Messages list gives role and content only."""
    if not isinstance(item, dict):
        raise _fail(where, "must be an object with role and content")
    role = item.get("role")
    if role not in ("user", "assistant"):
        raise _fail(where, f"role must be 'user' or 'assistant', not {role!r}")
    content = _blocks(item.get("content"), f"{where}.content")
    try:
        check_refs(content, files, f"{where}.content")
    except AttachmentImportError as exc:
        raise ImportError_(str(exc)) from None
    text = content_text(content)
    if len(text) > MAX_MESSAGE_CHARS:
        raise _fail(
            where,
            f"holds {len(text) / 1e6:.0f} million characters; a message holds at most "
            f"{MAX_MESSAGE_CHARS / 1e6:.0f} million (about twice the largest context window)",
        )
    if not ours:
        return ImportedMessage(role, content, text, None, "complete", None)
    status = item.get("status", "complete")
    if not isinstance(status, str) or status not in _STATUSES:
        raise _fail(where, f"unknown status {status!r}")
    created = item.get("created_at")
    if created is not None and not isinstance(created, str):
        raise _fail(where, "created_at must be a string")
    note = item.get("pin_note")
    if note is not None and not isinstance(note, str):
        raise _fail(where, "pin_note must be a string")
    return ImportedMessage(
        role=role,
        content=content,
        text=text,
        created_at=created,
        status=_STATUSES[status],
        pinned_note=(note or "") if item.get("pinned") else None,
        exported=_exported(item, where),
    )


def _ours(data: dict[str, Any], path: Path, messages: list[ImportedMessage]) -> dict[str, Any]:
    """What only our export holds: summary versions, the fork origin, model and settings."""
    conv = data["conversation"]
    fields: dict[str, Any] = {}
    try:
        ids = [m.exported.get("id") if m.exported else None for m in messages]
        fields["summaries"] = parse_summaries(data.get("summaries"), ids, str(path))
        fields["fork"] = parse_fork(data.get("fork"), str(path))
    except RestoreError as exc:
        raise ImportError_(f"{exc}; nothing was imported") from None
    if isinstance(conv.get("model"), str):
        fields["model"] = conv["model"]
    if "settings" in conv:
        # All or nothing: a bad setting would make the conversation fail to open later.
        problems = settings_problems(conv["settings"])
        if problems:
            raise ImportError_(
                f"{path}: conversation.settings: {'; '.join(problems)}; nothing was imported"
            )
        fields["settings"] = conv["settings"]
    return fields


def parse_import(path: Path) -> tuple[dict[str, Any], list[ImportedMessage]]:
    """Read and validate an import file completely.

    Returns:
        ``(conversation fields, messages)``.

    Raises:
        ImportError_: with the file name and what is wrong.
    """
    data = _read_json(path)
    ours = isinstance(data, dict) and data.get("format") == EXPORT_FORMAT
    fields, raw_messages = _head(data, path, ours)
    try:
        files = parse_attachments(data.get("attachments") if ours else None, str(path))
    except AttachmentImportError as exc:
        raise ImportError_(str(exc)) from None
    messages: list[ImportedMessage] = []
    for index, item in enumerate(raw_messages):
        # Each raw entry is dropped once read: the file's objects and the validated messages
        # are never both held whole (the peak of a large import).
        raw_messages[index] = None
        messages.append(_message(item, f"{path}: messages[{index}]", ours, files))
    fields["attachments"] = files
    if ours:
        fields.update(_ours(data, path, messages))
    elif isinstance(data.get("model"), str):
        fields["model"] = data["model"]
    return fields, messages


YIELD_CHARS = 65_536
"""Text blocks longer than this are counted a piece at a time, the event loop let in after
each piece (a signal, a key, a frame); shorter messages are counted at once."""


async def count_cooperatively(counter: TokenCounter, content: list[ContentBlock]) -> int:
    """:meth:`TokenCounter.count_message` of a message, yielding to the event loop between
    the pieces of a long text (the same figure: a long text is counted in these pieces)."""
    long_texts = [
        b for b in content if b.get("type") == "text" and len(str(b.get("text"))) > YIELD_CHARS
    ]
    if not long_texts:
        return counter.count_message("user", content)
    short = [b for b in content if not any(b is t for t in long_texts)]
    total = counter.count_message("user", short)
    for block in long_texts:
        for piece in pieces(str(block["text"])):
            total += counter.count(piece)
            await asyncio.sleep(0)
    return total


async def import_conversation(
    store: Store,
    path: Path,
    *,
    default_model: str,
    counter: TokenCounter,
    progress: Callable[[int], None] | None = None,
    force: bool = False,
) -> Conversation:
    """Validate and import a file as a new conversation (all or nothing).

    Args:
        store: The open store.
        path: The file.
        default_model: The model when the file names none.
        counter: Counts each message as it is written.
        progress: Called with the number of messages written so far (a batch at a time).
        force: Import a file that was imported before (another copy).

    Raises:
        ImportError_: the file cannot be imported (nothing was written).
        AlreadyImported: the same file made a conversation that is still here.
    """
    try:
        digest: str | None = file_hash(path)
    except OSError:
        digest = None  # parse_import says what is wrong with it
    if digest is not None and not force:
        found = await store.imports.find(digest)
        if found is not None:
            earlier = await store.conversations.get(found[0])
            raise AlreadyImported(path, earlier, found[1])
    fields, messages = parse_import(path)
    conversation = await store.conversations.create(
        title=fields["title"],
        model=fields.get("model", default_model),
        system_prompt=fields["system"],
        settings=fields.get("settings", {}),
        importing=True,  # hidden until done; a killed import is removed at the next open
    )
    try:
        try:
            await import_attachments(store, fields["attachments"])
        except AttachmentImportError as exc:
            raise ImportError_(str(exc)) from None
        # Counted first, a piece at a time with the loop let in between (a 60 MB message held
        # it for minutes, deaf to SIGTERM); then rows are made as they are written (a batch at
        # a time), and pins find their messages by position: nothing holds the history twice.
        counts = [await count_cooperatively(counter, m.content) for m in messages]
        rows = (
            {
                "role": m.role,
                "content": m.content,
                "text": m.text,
                "token_count": count,
                "status": m.status,
                "created_at": m.created_at,
                **{k: v for k, v in (m.exported or {}).items() if k != "id"},
            }
            for m, count in zip(messages, counts, strict=True)
        )
        await store.messages.add_many(conversation.id, rows, progress=progress)
        pins = [(at, m.pinned_note) for at, m in enumerate(messages) if m.pinned_note is not None]
        if pins:
            ids = await store.messages.ids(conversation.id)
            for at, note in pins:
                await store.anchors.pin(ids[at], note)
        await restore(store, conversation.id, fields.get("summaries", []), fields.get("fork"))
        if digest is not None:
            await store.imports.record(conversation.id, digest)
        await store.conversations.imported(conversation.id)
    except BaseException:
        await store.conversations.delete(conversation.id)
        raise
    return await store.conversations.get(conversation.id)
