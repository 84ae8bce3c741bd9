"""Attached files between the disk, the database and the request.

:func:`read_attachment` reads and checks a file before anything is stored (a missing,
unreadable or oversized file is an :class:`AttachmentError` naming it, and nothing changes);
:func:`store_attachments` keeps the bytes once per content hash; :func:`expand_request` turns
the reference blocks of a built request into the image, document and text blocks the API takes,
checking the per-request limits first.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from tui_chat.core.attachments import (
    MAX_REQUEST_BYTES,
    Attachment,
    AttachmentError,
    api_block,
    check_request,
    describe,
    human_size,
    is_ref,
)
from tui_chat.core.models import ContentBlock
from tui_chat.store.repository import Store

__all__ = [
    "Attachment",
    "AttachmentError",
    "expand_request",
    "load_attachments",
    "read_attachment",
    "request_refs",
    "store_attachments",
]


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_attachment(path: Path | str) -> Attachment:
    """Read a file and check it against Claude's documented limits.

    Args:
        path: The file (``~`` is expanded).

    Returns:
        The attachment, named by the file's name; a symbolic link is named with where it
        points (``notes.txt (→ /home/me/real/notes.txt)``), so what is sent is never hidden.

    Raises:
        AttachmentError: the file is missing, not a regular file (a folder, a FIFO, a device:
            it is never read, so a FIFO cannot hang the app), unreadable, not a supported kind,
            or too large.
    """
    path = Path(path).expanduser()
    name = path.name
    if path.is_symlink():
        name = f"{path.name} (→ {os.path.realpath(path)})"
    try:
        # Non-blocking: opening a FIFO must not wait for a writer; checked before any read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise AttachmentError(f"cannot attach {path}: it does not exist") from None
    except IsADirectoryError:
        raise AttachmentError(f"cannot attach {path}: it is a folder") from None
    except OSError as exc:
        raise AttachmentError(f"cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            mode = os.fstat(fd).st_mode
            for test, kind in _NOT_REGULAR:
                if test(mode):
                    raise AttachmentError(f"cannot attach {path}: it is {kind}, not a file")
            size = os.fstat(fd).st_size
            if size > MAX_REQUEST_BYTES:
                raise AttachmentError(
                    f"{path.name} is {human_size(size)}; a request can be at most "
                    f"{human_size(MAX_REQUEST_BYTES)}"
                )
            data = handle.read()
        except OSError as exc:
            raise AttachmentError(f"cannot read {path}: {exc.strerror or exc}") from None
    return describe(name, data)


async def store_attachments(store: Store, attachments: Iterable[Attachment]) -> list[ContentBlock]:
    """Keep each file's bytes (once per content) and return the message's reference blocks."""
    refs: list[ContentBlock] = []
    for attachment in attachments:
        await store.attachments.put(attachment.media_type, attachment.data, attachment.sha256)
        refs.append(attachment.ref())
    return refs


async def load_attachments(store: Store, refs: Sequence[Mapping[str, Any]]) -> list[Attachment]:
    """The attachments of stored reference blocks, bytes included (to attach them again).

    Raises:
        AttachmentError: a file's bytes are missing from the database.
    """
    found = await store.attachments.data(str(r.get("sha256")) for r in refs)
    out: list[Attachment] = []
    for ref in refs:
        data = found.get(str(ref.get("sha256")))
        if data is None:
            raise AttachmentError(f"the data of {ref.get('name')} is missing from the database")
        out.append(describe(str(ref.get("name") or "file"), data))
    return out


def _blocks(request: Mapping[str, Any]) -> Iterator[MutableMapping[str, Any]]:
    for message in request.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            yield from (b for b in content if isinstance(b, MutableMapping))


def request_refs(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The attachment references a built request holds, in order."""
    return [block for block in _blocks(request) if is_ref(block)]


async def expand_request(
    store: Store,
    request: dict[str, Any],
    unsent: Iterable[Attachment] = (),
    file_ids: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The request with every attachment reference replaced by the block the API takes.

    Args:
        store: Where the bytes are.
        request: A built request (left unchanged).
        unsent: Files attached to a draft, not stored yet (a preview of the next send).
        file_ids: The Files API's ``file_id`` of files already uploaded, by content hash:
            those are named (``source.type == "file"``), the others sent inline as base64.

    Returns:
        The request to send (the same object when it holds no attachment).

    Raises:
        AttachmentError: a per-request limit is exceeded or a file's bytes are missing.
    """
    refs = request_refs(request)
    if not refs:
        return request
    check_request(refs)
    named = dict(file_ids or {})
    data = {a.sha256: a.data for a in unsent}
    data.update(
        await store.attachments.data(
            str(r.get("sha256"))
            for r in refs
            if r.get("kind") != "text" and str(r.get("sha256")) not in data.keys() | named.keys()
        )
    )
    expanded = copy.deepcopy(request)
    for message in expanded.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [_api(b, data, named) if is_ref(b) else b for b in content]
    return expanded


def _api(
    ref: Mapping[str, Any], data: Mapping[str, bytes], named: Mapping[str, str]
) -> ContentBlock:
    """The API's block for a reference: naming its ``file_id`` when uploaded, else inline."""
    sha = str(ref.get("sha256"))
    file_id = named.get(sha) if ref.get("kind") != "text" else None
    if file_id is None:
        return api_block(ref, data.get(sha))
    block = api_block(ref, b"")
    block["source"] = {"type": "file", "file_id": file_id}
    return block
