"""Attached files between the disk, the database and the request.

:func:`read_attachment` reads and checks a file before anything is stored (a missing,
unreadable or oversized file is an :class:`AttachmentError` naming it, and nothing changes);
:func:`store_attachments` keeps the bytes once per content hash; :func:`expand_request` turns
the reference blocks of a built request into the image, document and text blocks the API takes,
checking the per-request limits first.
"""

from __future__ import annotations

import copy
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


def read_attachment(path: Path | str) -> Attachment:
    """Read a file and check it against Claude's documented limits.

    Args:
        path: The file (``~`` is expanded).

    Returns:
        The attachment, named by the file's name.

    Raises:
        AttachmentError: the file is missing, unreadable, not a supported kind, or too large.
    """
    path = Path(path).expanduser()
    try:
        if not path.is_file():
            reason = "is a folder" if path.is_dir() else "does not exist"
            raise AttachmentError(f"cannot attach {path}: it {reason}")
        size = path.stat().st_size
        if size > MAX_REQUEST_BYTES:
            raise AttachmentError(
                f"{path.name} is {human_size(size)}; a request can be at most "
                f"{human_size(MAX_REQUEST_BYTES)}"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise AttachmentError(f"cannot read {path}: {exc.strerror or exc}") from None
    return describe(path.name, data)


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
    store: Store, request: dict[str, Any], unsent: Iterable[Attachment] = ()
) -> dict[str, Any]:
    """The request with every attachment reference replaced by the block the API takes.

    Args:
        store: Where the bytes are.
        request: A built request (left unchanged).
        unsent: Files attached to a draft, not stored yet (a preview of the next send).

    Returns:
        The request to send (the same object when it holds no attachment).

    Raises:
        AttachmentError: a per-request limit is exceeded or a file's bytes are missing.
    """
    refs = request_refs(request)
    if not refs:
        return request
    check_request(refs)
    data = {a.sha256: a.data for a in unsent}
    data.update(
        await store.attachments.data(
            str(r.get("sha256"))
            for r in refs
            if r.get("kind") != "text" and str(r.get("sha256")) not in data
        )
    )
    expanded = copy.deepcopy(request)
    for message in expanded.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [
                api_block(b, data.get(str(b.get("sha256")))) if is_ref(b) else b for b in content
            ]
    return expanded
