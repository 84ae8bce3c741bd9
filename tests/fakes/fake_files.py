"""Claude's Files API for the fake Anthropic server (``tests/fakes/fake_anthropic.py``).

Modelled on Claude's documentation, "Files API" (docs corpus: docs.anthropic.com
build-with-claude/files and docs.claude.com/en/api/files-create, read 2026-11-26):

- ``POST /v1/files`` takes ``multipart/form-data`` with a ``file`` part; it answers the
  file's metadata: ``id``, ``type``
  (``"file"``), ``filename``, ``mime_type``, ``size_bytes``, ``created_at``, ``downloadable``.
- A Messages request names an uploaded file as an ``image`` or ``document`` block whose
  ``source`` is ``{"type": "file", "file_id": …}``. A ``file_id`` the endpoint does not know
  is a 404 (``not_found_error``).
- ``DELETE /v1/files/{file_id}`` deletes a file and answers
  ``{"id": …, "type": "file_deleted"}``; an unknown id is a 404 (API reference "Delete File",
  platform.claude.com/docs/en/api/python/beta/files/delete, read 2026-11-26).

Out of beta: the files endpoints answer without the beta header (SDK 2.15's non-beta
``client.files``); the header is still accepted. ``beta_required = True`` makes this a gateway
that still needs ``anthropic-beta: files-api-2025-04-14`` on uploads, deletes and Messages
requests naming a file, as the API reference pages of 2026-11-26 describe: without it, a 400
whose message names the beta.

This server's own choices, not the docs': ids are ``file_fake<n>``; ``supported = False``
makes it an endpoint without the Files API (``POST /v1/files`` is a 404, as on a gateway),
``refuse_uploads`` answers every upload with that status, ``hold_uploads`` holds each;
a named file is resolved to its bytes (a base64 source) before the request is validated and
answered, so image and PDF checks and token counts are the same either way. ``sha256`` is
added to the metadata so a test can tell which file an id holds.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import itertools
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.parser import BytesParser
from typing import Any

__all__ = ["FILES_BETA", "FakeFiles", "FileRequestError"]

FILES_BETA = "files-api-2025-04-14"


class FileRequestError(Exception):
    """A request the Files API refuses: ``status``, ``error_type`` and the message."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


@dataclass(frozen=True)
class StoredFile:
    """One uploaded file."""

    id: str
    name: str
    media_type: str
    data: bytes


class FakeFiles:
    """The uploaded files of one fake server."""

    def __init__(self) -> None:
        self.supported = True
        """False: the endpoint has no Files API (uploads answer 404)."""
        self.files: dict[str, StoredFile] = {}
        self.uploads = 0
        """How many uploads succeeded."""
        self.deleted: list[str] = []
        """The ids deleted (``DELETE /v1/files/{id}``), in order."""
        self.refuse_uploads: int | None = None
        """A status every upload is answered with (a gateway answering 400 to uploads)."""
        self.hold_uploads: threading.Event | None = None
        """Set to an unset event: each upload waits until it is set (an upload that hangs)."""
        self.beta_required = False
        """True: a gateway that still needs the beta header (a 400 naming it without)."""
        self.hold_deletes: threading.Event | None = None
        """Set to an unset event: each delete waits until it is set (a slow endpoint)."""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def _check_beta(self, headers: dict[str, str], what: str) -> None:
        """A gateway still in beta refuses a call without the header (400 naming it)."""
        if self.beta_required and FILES_BETA not in headers.get("anthropic-beta", ""):
            raise FileRequestError(
                400, "invalid_request_error", f"{what} need anthropic-beta: {FILES_BETA}"
            )

    def forget(self) -> None:
        """Lose every file (as an endpoint whose files expired or were deleted)."""
        with self._lock:
            self.files.clear()

    def upload(self, headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        """Store the ``file`` part of a multipart upload; its metadata.

        Raises:
            FileRequestError: no Files API here, no beta header where one is required, or no
                file part.
        """
        if self.hold_uploads is not None:
            self.hold_uploads.wait(300)
        if not self.supported:
            raise FileRequestError(404, "not_found_error", "Not found: /v1/files")
        if self.refuse_uploads is not None:
            raise FileRequestError(
                self.refuse_uploads, "invalid_request_error", "uploads are not allowed here"
            )
        self._check_beta(headers, "the Files API")
        content_type = headers.get("content-type", "")
        message = BytesParser(policy=policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        part = (
            next(
                (
                    p
                    for p in message.iter_parts()
                    if p.get_param("name", header="content-disposition") == "file"
                ),
                None,
            )
            if message.is_multipart()
            else None
        )
        data = part.get_payload(decode=True) if part is not None else None
        if part is None or not isinstance(data, bytes) or not data:
            raise FileRequestError(
                400, "invalid_request_error", "file: a non-empty file is required"
            )
        with self._lock:
            stored = StoredFile(
                f"file_fake{next(self._ids)}",
                str(part.get_filename() or "unnamed"),
                part.get_content_type(),
                data,
            )
            self.files[stored.id] = stored
            self.uploads += 1
        return {
            "id": stored.id,
            "type": "file",
            "filename": stored.name,
            "mime_type": stored.media_type,
            "size_bytes": len(data),
            "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "downloadable": False,
            "sha256": hashlib.sha256(data).hexdigest(),
        }

    def delete(self, headers: dict[str, str], file_id: str) -> dict[str, Any]:
        """Delete an uploaded file; the API's answer.

        Raises:
            FileRequestError: no Files API here, no beta header, or an unknown id (404).
        """
        if self.hold_deletes is not None:
            self.hold_deletes.wait(timeout=60)
        if not self.supported:
            raise FileRequestError(404, "not_found_error", f"Not found: /v1/files/{file_id}")
        self._check_beta(headers, "the Files API")
        with self._lock:
            if self.files.pop(file_id, None) is None:
                raise FileRequestError(404, "not_found_error", f"File not found: {file_id}")
            self.deleted.append(file_id)
        return {"id": file_id, "type": "file_deleted"}

    def resolve(self, body: Any, headers: dict[str, str]) -> Any:
        """``body`` with each file source replaced by its bytes (a copy; ``body`` if none).

        Raises:
            FileRequestError: a file source without the beta header, or an unknown id (404).
        """
        if not isinstance(body, dict) or not _names_files(body):
            return body
        self._check_beta(headers, "file sources")
        resolved = copy.deepcopy(body)
        for block in _file_blocks(resolved):
            file_id = str(block["source"].get("file_id"))
            with self._lock:
                stored = self.files.get(file_id)
            if stored is None:
                raise FileRequestError(404, "not_found_error", f"File not found: {file_id}")
            block["source"] = {
                "type": "base64",
                "media_type": stored.media_type,
                "data": base64.b64encode(stored.data).decode("ascii"),
            }
        return resolved


def _file_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            source = block.get("source") if isinstance(block, dict) else None
            if isinstance(source, dict) and source.get("type") == "file":
                out.append(block)
    return out


def _names_files(body: dict[str, Any]) -> bool:
    return bool(_file_blocks(body))
