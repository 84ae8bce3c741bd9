"""Attached files in exports and imports: base64 in this project's JSON, checked on the way in.

An export lists each file once (``{"sha256", "media_type", "size", "data"}``, ``data`` in
base64) next to the messages whose reference blocks name it; an import decodes every file,
checks its hash and its kind again (:func:`tui_chat.core.attachments.describe`), and refuses a
message that names a file the export does not carry.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tui_chat.core.attachments import Attachment, AttachmentError, describe, is_ref
from tui_chat.store.repository import Store


class AttachmentImportError(ValueError):
    """An attached file of an import that is damaged or missing."""


def parse_attachments(raw: Any, where: str) -> dict[str, bytes]:
    """Decode and check the ``attachments`` list of an import.

    Returns:
        The bytes by hash.

    Raises:
        AttachmentImportError: an entry is malformed, not base64, or does not match its hash.
    """
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise AttachmentImportError(f"{where}: 'attachments' must be a list")
    found: dict[str, bytes] = {}
    for index, item in enumerate(raw):
        place = f"{where}: attachments[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("data"), str):
            raise AttachmentImportError(f"{place}: needs 'sha256' and base64 'data'")
        try:
            data = base64.b64decode(item["data"], validate=True)
        except (binascii.Error, ValueError):
            raise AttachmentImportError(f"{place}: 'data' is not base64") from None
        sha = hashlib.sha256(data).hexdigest()
        if item.get("sha256") != sha:
            raise AttachmentImportError(f"{place}: the data does not match its sha256")
        found[sha] = data
    return found


@functools.lru_cache(maxsize=32)
def _measured(data: bytes) -> Attachment:
    """The file measured once per import however many messages name it (``AttachmentError``
    is not cached: it is raised again)."""
    return describe("file", data)


def check_refs(content: list[dict[str, Any]], files: Mapping[str, bytes], where: str) -> None:
    """Refuse reference blocks naming a file the import does not carry, or a changed kind;
    replace every other claim of a block with what the file measures (size, pixels, pages,
    tokens, a text file's text): an import is trusted with nothing that can be measured.

    Raises:
        AttachmentImportError: with the place and the reason.
    """
    for index, block in enumerate(content):
        if not is_ref(block):
            continue
        data = files.get(str(block.get("sha256")))
        if data is None:
            raise AttachmentImportError(
                f"{where}[{index}]: the file {block.get('name')!r} is not in the export"
            )
        name = str(block.get("name") or "file")
        try:
            found = replace(_measured(data), name=name)
        except AttachmentError:
            try:
                describe(name, data)  # the reason, naming the file
            except AttachmentError as exc:
                raise AttachmentImportError(f"{where}[{index}]: {exc}") from None
            raise
        if found.kind != block.get("kind"):
            raise AttachmentImportError(f"{where}[{index}]: {found.name} is not a {block['kind']}")
        content[index] = dict(found.ref())


async def import_attachments(store: Store, files: Mapping[str, bytes]) -> None:
    """Store the files of an import (each once).

    Raises:
        AttachmentImportError: a file is not a kind tui-chat attaches.
    """
    for sha, data in files.items():
        try:
            attachment: Attachment = describe(sha[:12], data)
        except AttachmentError as exc:
            raise AttachmentImportError(f"attachment {exc}") from None
        await store.attachments.put(attachment.media_type, data, attachment.sha256)
