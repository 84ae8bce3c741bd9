"""Claude's Files API: upload an attachment once, name it by ``file_id`` afterwards.

Built on Claude's documentation, "Files API" (docs corpus: docs.anthropic.com
build-with-claude/files and the API reference docs.claude.com/en/api/files-create, read
2026-11-26): ``POST /v1/files`` takes ``multipart/form-data`` and
returns the file's ``id``; a message names it as ``{"type": "image"|"document", "source":
{"type": "file", "file_id": …}}`` (images: JPEG, PNG, GIF, WebP; documents: PDF, plain text);
a ``file_id`` the endpoint does not know is refused (404, "file not found"). ``DELETE
/v1/files/{file_id}`` with the same beta deletes one (API reference "Delete File",
platform.claude.com/docs/en/api/python/beta/files/delete, read 2026-11-26: the SDK's
``beta.files.delete``, answering ``{"id": …, "type": "file_deleted"}``).

Out of beta: the files endpoints are called without the beta header, as SDK 2.15's
non-beta ``client.files`` does (``upload``, ``delete``), and so is a Messages request naming a
file. The API reference pages read on 2026-11-26 still show the header
(``anthropic-beta: files-api-2025-04-14``), and a gateway may still want it: an answer of 400
or 404 whose message names the beta (:func:`names_beta`) is asked once more with the header,
and :class:`FilesBeta` remembers, per endpoint (upload, delete, messages) of one API endpoint,
to send it from then on.
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
    "FilesBeta",
    "FilesUnsupported",
    "delete",
    "file_ids_in",
    "names_beta",
    "names_unknown_file",
    "request_headers",
    "upload",
]

FILES_BETA = "files-api-2025-04-14"
"""The beta the Files API needed, on uploads and on requests naming a file (sent only to an
endpoint that still asks for it)."""

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


def names_beta(error: ChatError | None) -> bool:
    """Whether a refusal (400 or 404) asks for the Files API beta header: its message names
    the beta (``files-api-…``), or the ``anthropic-beta`` header and files."""
    if error is None or error.status not in (400, 404):
        return False
    message = error.message.lower()
    return "files-api" in message or ("anthropic-beta" in message and "file" in message)


class FilesBeta:
    """Which Files API endpoints of one API endpoint still need the beta header."""

    def __init__(self) -> None:
        self.needed: set[str] = set()
        """``upload``, ``delete``, ``messages``: asked for the header once, sent it since."""

    def headers(self, kind: str) -> dict[str, str]:
        """The extra headers a call of ``kind`` needs (none once out of beta)."""
        return {"anthropic-beta": FILES_BETA} if kind in self.needed else {}

    def retry(self, kind: str, error: ChatError | None) -> bool:
        """Whether a refused call of ``kind`` is asked again with the header: the answer named
        the beta and the header was not sent yet (remembered from then on)."""
        if kind in self.needed or not names_beta(error):
            return False
        self.needed.add(kind)
        return True


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


def request_headers(
    request: Mapping[str, Any], files_beta: FilesBeta | None = None
) -> dict[str, str]:
    """The extra headers a Messages request needs: each beta its blocks use, comma-separated
    (the Files beta only where ``files_beta`` says this endpoint still asks for it)."""
    betas = [h for h in compaction_headers(request).values() if h]
    if files_beta is not None and "messages" in files_beta.needed and any(file_ids_in(request)):
        betas.append(FILES_BETA)
    return {"anthropic-beta": ",".join(betas)} if betas else {}


def names_unknown_file(error: ChatError | None, request: Mapping[str, Any]) -> bool:
    """Whether a refused request was refused for naming a ``file_id`` the endpoint lost."""
    if error is None or error.status not in (400, 404):
        return False
    return any(file_id in error.message for file_id in file_ids_in(request))


async def upload(
    sdk: AsyncAnthropic,
    secret: str | None,
    name: str,
    data: bytes,
    media_type: str,
    beta: FilesBeta | None = None,
) -> str:
    """Upload one file; its ``file_id`` (without the beta header unless the endpoint asks).

    Raises:
        FilesUnsupported: the endpoint has no Files API (404, 405, 501) or refuses uploads
            (400); the reason says which ("no Files API at this endpoint", not the Messages
            API's "model not found" for a 404).
        ChatError: any other failure (network, quota, :data:`UPLOAD_TIMEOUT`), explained.
    """
    beta = beta or FilesBeta()
    files = sdk.with_options(max_retries=0, timeout=UPLOAD_TIMEOUT).files
    try:
        try:
            meta = await files.upload(
                file=(name, data, media_type), extra_headers=beta.headers("upload")
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not beta.retry("upload", map_error(exc, secrets=[secret] if secret else [])):
                raise
            meta = await files.upload(
                file=(name, data, media_type), extra_headers=beta.headers("upload")
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


async def delete(
    sdk: AsyncAnthropic, secret: str | None, file_id: str, beta: FilesBeta | None = None
) -> bool:
    """Delete one uploaded file; False when the endpoint did not hold it (404: gone already).

    Raises:
        ChatError: any other failure (network, auth, an endpoint that refuses), explained.
    """
    beta = beta or FilesBeta()
    files = sdk.with_options(max_retries=0, timeout=DELETE_TIMEOUT).files
    try:
        try:
            await files.delete(file_id, extra_headers=beta.headers("delete"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not beta.retry("delete", map_error(exc, secrets=[secret] if secret else [])):
                raise
            await files.delete(file_id, extra_headers=beta.headers("delete"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        error = map_error(exc, secrets=[secret] if secret else [])
        if error.status == 404:
            return False
        raise error from None
    return True
