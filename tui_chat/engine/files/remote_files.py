"""Attachments through the Files API: uploaded once per endpoint, then named by ``file_id``.

:class:`RemoteFiles` is held by the engine context. Before a reply is requested it uploads
each attached image or PDF the endpoint does not hold yet (once per content hash, the id kept
in ``store.file_ids``) and expands the built request naming them; the built request itself is
untouched, so the same conversation still builds the same bytes. An endpoint whose upload
answers 404/405/501 has no Files API, and one answering 400 refuses uploads: either is
remembered with the reason and its files go inline (base64) as before, without asking again
(``doctor`` lists them, ``doctor --repair`` has them asked again). An upload that fails
otherwise (a timeout: :data:`~tui_chat.llm.files.UPLOAD_TIMEOUT`, the network) sends that
file inline this time. Each upload is announced (``FileUploading``) as it starts. Without a
key nothing is uploaded. A request refused for naming
a ``file_id`` the endpoint lost is sent again once with the files uploaded afresh, then inline.

Deleting a conversation removes the stored files nothing else refers to; :meth:`prune_soon`
then deletes their uploads at the endpoint in the background (``DELETE /v1/files/{id}``),
best effort: never without a key, the delete itself never waits for it, and the first
failure (offline, refused) ends the run, the ids left kept for the next one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from tui_chat.engine.files.attachments import expand_request, request_refs
from tui_chat.llm.client import ClaudeClient, StreamResult
from tui_chat.llm.errors import ChatError
from tui_chat.llm.files import FilesUnsupported, file_ids_in, names_unknown_file
from tui_chat.store.repository import Store

__all__ = ["RemoteFiles"]

_log = logging.getLogger(__name__)

Uploading = Callable[[str, str | None], None] | None
"""Told of each upload: the file's name, and ``None`` as it starts or why it failed."""

CLOSE_WAIT = 3.0
"""Seconds closing the engine waits for the deletes still running (then they stop)."""


class RemoteFiles:
    """The Files API side of sending attachments, for one store and client."""

    def __init__(self, store: Store, client: ClaudeClient) -> None:
        """Upload through ``client``; keep ids and the endpoint's support in ``store``."""
        self._store = store
        self._client = client
        self.uploads = 0
        """Files uploaded by this engine (what a test or a benchmark counts)."""
        self._pruning: asyncio.Task[None] | None = None
        self._prune_again = False

    async def file_ids(
        self, request: Mapping[str, Any], *, upload: bool = True, on_upload: Uploading = None
    ) -> dict[str, str]:
        """The ``file_id`` of each image and PDF ``request`` holds, uploading the new ones
        (unless not ``upload``: then only those uploaded before). ``on_upload`` is told of
        each upload as it starts (name, ``None``) and of one that failed (name, the reason).

        Returns:
            By content hash; empty without a key or on an endpoint without the Files API.
            A file whose upload failed otherwise (network, quota) is left out: it goes inline.
        """
        if not self._client.has_key:
            return {}
        endpoint = self._client.endpoint
        ids = self._store.file_ids
        if await ids.supported(endpoint) is False:
            return {}
        wanted = {str(r.get("sha256")): r for r in request_refs(request) if r.get("kind") != "text"}
        known = await ids.known(endpoint, wanted)
        missing = [sha for sha in wanted if sha not in known] if upload else []
        data = await self._store.attachments.data(missing) if missing else {}
        for sha in missing:
            ref = wanted[sha]
            if sha not in data:
                continue
            name, media_type = str(ref.get("name") or "file"), str(ref.get("media_type"))
            if on_upload is not None:
                on_upload(name, None)
            try:
                known[sha] = await self._client.upload_file(name, data[sha], media_type)
            except FilesUnsupported as exc:  # remembered: not asked again (doctor --repair)
                await ids.note_support(endpoint, False, str(exc))
                if on_upload is not None:
                    on_upload(name, f"{exc}; files are sent inline")
                return {}
            except ChatError as exc:  # this time only (a timeout, the network): inline
                if on_upload is not None:
                    on_upload(name, f"not uploaded ({exc.message}); sent inline")
                continue
            self.uploads += 1
            await ids.remember(endpoint, sha, known[sha])
            await ids.note_support(endpoint, True)
        return known

    async def expand(
        self,
        request: dict[str, Any],
        *,
        inline: bool = False,
        upload: bool = True,
        on_upload: Uploading = None,
    ) -> dict[str, Any]:
        """The request to send: uploaded files named by id, the others inline.

        Args:
            request: A built request (left unchanged).
            inline: Every file inline (base64), whatever was uploaded.
            upload: Upload the files not uploaded yet; when False only those already there
                are named (a summary continuing the chat request names what it named).
        """
        ids = None if inline else await self.file_ids(request, upload=upload, on_upload=on_upload)
        return await expand_request(self._store, request, file_ids=ids)

    @staticmethod
    def stale(result: StreamResult, sent: Mapping[str, Any]) -> bool:
        """Whether a reply was refused, before any of it arrived, for naming a lost file."""
        return not result.content and not result.text and names_unknown_file(result.error, sent)

    async def renewed(
        self, request: dict[str, Any], sent: Mapping[str, Any], *, inline: bool
    ) -> dict[str, Any]:
        """After :meth:`stale`: forget the ids ``sent`` named and expand ``request`` again,
        uploading afresh (or every file inline when ``inline``)."""
        await self._store.file_ids.forget(self._client.endpoint, file_ids_in(sent))
        return await self.expand(request, inline=inline)

    # -- deleting the uploads nothing uses -----------------------------------------------------

    async def prune(self) -> int:
        """Delete at the endpoint the uploads whose file is no longer stored (their
        conversations were deleted) and forget their ids; best effort.

        Nothing without a key or on an endpoint that took no upload; the first failure
        (offline, refused) ends the run, the ids left kept for the next.

        Returns:
            How many ids were deleted (or were gone already).
        """
        if not self._client.has_key:
            return 0
        endpoint, ids = self._client.endpoint, self._store.file_ids
        if await ids.supported(endpoint) is not True:
            return 0
        done = 0
        for file_id in await ids.unreferenced(endpoint):
            try:
                await self._client.delete_file(file_id)
            except ChatError as exc:
                _log.info("uploaded files not deleted now: %s", exc.message)
                break
            await ids.forget(endpoint, [file_id])
            done += 1
        return done

    def prune_soon(self) -> None:
        """Run :meth:`prune` in the background (after a conversation is deleted); a run
        already going runs once more when it ends."""
        if not self._client.has_key:
            return
        self._prune_again = True
        if self._pruning is None or self._pruning.done():
            self._pruning = asyncio.get_running_loop().create_task(self._prune_while_asked())

    async def settle(self, timeout: float | None = None) -> None:
        """Wait for the background run (at most ``timeout`` seconds, then it is cancelled:
        what it did not delete is tried at the next run)."""
        task = self._pruning
        if task is None or task.done():
            return
        _, pending = await asyncio.wait([task], timeout=timeout)
        for late in pending:
            late.cancel()
            await asyncio.wait([late])

    async def _prune_while_asked(self) -> None:
        while self._prune_again:
            self._prune_again = False
            try:
                await self.prune()
            except Exception:  # best effort: a database closing under it, a disk error
                _log.warning("deleting unused uploads failed", exc_info=True)
                return
