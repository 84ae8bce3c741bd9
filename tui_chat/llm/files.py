"""Claude's Files API: upload an attachment once, name it by ``file_id`` afterwards.

Built on Claude's documentation, "Files API" (docs corpus: docs.anthropic.com
build-with-claude/files and the API reference docs.claude.com/en/api/files-create, read
2026-11-26): the API is a beta (``anthropic-beta: files-api-2025-04-14``) on the upload and on
every Messages request naming a file; ``POST /v1/files`` takes ``multipart/form-data`` and
returns the file's ``id``; a message names it as ``{"type": "image"|"document", "source":
{"type": "file", "file_id": …}}`` (images: JPEG, PNG, GIF, WebP; documents: PDF, plain text);
a ``file_id`` the endpoint does not know is refused (404, "file not found"). ``DELETE
/v1/files/{file_id}`` with the same beta deletes one (API reference "Delete File",
platform.claude.com/docs/en/api/python/beta/files/delete, read 2026-11-26: the SDK's
``beta.files.delete``, answering ``{"id": …, "type": "file_deleted"}``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tui_chat.llm.compaction import compaction_headers
from tui_chat.llm.errors import ChatError, map_error

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = [
    "FILES_BETA",
    "FilesUnsupported",
    "delete",
    "file_ids_in",
    "names_unknown_file",
    "request_headers",
    "upload",
]

FILES_BETA = "files-api-2025-04-14"
"""The beta the Files API needs, on uploads and on requests naming a file."""

DELETE_TIMEOUT = 10.0
"""Seconds one delete may take (it is best effort, in the background, never retried)."""

UPLOAD_TIMEOUT = 60.0
"""Seconds one upload may take, not retried: an upload that hangs gives up then and the file
goes inline (an endpoint held a send about 135 s with no word)."""

_UNSUPPORTED = frozenset({404, 405, 501})
"""Statuses of an upload that say the endpoint has no Files API (a gateway, a proxy)."""
_REFUSING = frozenset({400})
"""A status of an upload that says the endpoint refuses uploads (a gateway answering every
upload 400): remembered like no Files API, so it is not asked again at every turn."""


class FilesUnsupported(Exception):
    """The endpoint has no Files API (its answer to an upload is the reason)."""


def file_ids_in(request: Mapping[str, Any]) -> Iterator[str]:
    """The ``file_id`` of every file source a request's messages name, in order."""
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else ():
            source = block.get("source") if isinstance(block, Mapping) else None
            if isinstance(source, Mapping) and source.get("type") == "file":
                yield str(source.get("file_id"))


def request_headers(request: Mapping[str, Any]) -> dict[str, str]:
    """The extra headers a Messages request needs: each beta its blocks use, comma-separated."""
    betas = [h for h in compaction_headers(request).values() if h]
    if any(True for _ in file_ids_in(request)):
        betas.append(FILES_BETA)
    return {"anthropic-beta": ",".join(betas)} if betas else {}


def names_unknown_file(error: ChatError | None, request: Mapping[str, Any]) -> bool:
    """Whether a refused request was refused for naming a ``file_id`` the endpoint lost."""
    if error is None or error.status not in (400, 404):
        return False
    return any(file_id in error.message for file_id in file_ids_in(request))


async def upload(
    sdk: AsyncAnthropic, secret: str | None, name: str, data: bytes, media_type: str
) -> str:
    """Upload one file; its ``file_id``.

    Raises:
        FilesUnsupported: the endpoint has no Files API (404, 405, 501) or refuses uploads
            (400); the reason says which ("no Files API at this endpoint", not the Messages
            API's "model not found" for a 404).
        ChatError: any other failure (network, quota, :data:`UPLOAD_TIMEOUT`), explained.
    """
    try:
        meta = await sdk.with_options(max_retries=0, timeout=UPLOAD_TIMEOUT).beta.files.upload(
            file=(name, data, media_type), betas=[FILES_BETA]
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        error = map_error(exc, secrets=[secret] if secret else [])
        if error.status in _UNSUPPORTED:
            raise FilesUnsupported(f"no Files API at this endpoint (HTTP {error.status})") from None
        if error.status in _REFUSING:
            raise FilesUnsupported(
                f"this endpoint refused an upload (HTTP {error.status}: {error.message})"
            ) from None
        raise error from None
    return str(meta.id)


async def delete(sdk: AsyncAnthropic, secret: str | None, file_id: str) -> bool:
    """Delete one uploaded file; False when the endpoint did not hold it (404: gone already).

    Raises:
        ChatError: any other failure (network, auth, an endpoint that refuses), explained.
    """
    try:
        await sdk.with_options(max_retries=0, timeout=DELETE_TIMEOUT).beta.files.delete(
            file_id, betas=[FILES_BETA]
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        error = map_error(exc, secrets=[secret] if secret else [])
        if error.status == 404:
            return False
        raise error from None
    return True
