"""Looking after the database file: back it up, repair what can be rebuilt, and the report of
``tui-chat doctor``. :class:`Maintenance` is the use-case service (``service.maintenance``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tui_chat.core.tokens import TokenCounter
from tui_chat.store.repository import Store


class Maintenance:
    """Backup, repair and the doctor's report of one database.

    Args:
        store: The open database.
        counter: The token counter (the doctor checks it works offline).
        has_key: Whether an API key is configured (the doctor says so, never the key).
        base_url: The endpoint configured, if not the default.
    """

    def __init__(
        self, store: Store, counter: TokenCounter, *, has_key: bool, base_url: str | None
    ) -> None:
        self.store = store
        self.counter = counter
        self.has_key = has_key
        self.base_url = base_url

    async def backup(self, target: Path, *, force: bool = False) -> None:
        """Copy the database to ``target`` (0600) with SQLite's online backup.

        The rule of :mod:`tui_chat.files`: an existing ``target`` is refused unless ``force``;
        on failure nothing is left behind and an old ``target`` is intact.
        """
        await self.store.backup(target, force=force)

    async def repair(self) -> tuple[int, int]:
        """Rebuild the search index from the messages (not changed), remove the attached
        files nothing refers to and forget which endpoints refused uploads (the next send asks
        them again); returns (messages indexed, files removed)."""
        indexed = await self.store.rebuild_search_index()
        await self.store.file_ids.ask_again()
        return indexed, await self.store.attachments.remove_unreferenced()

    async def doctor(self) -> dict[str, str | int]:
        """Database path, key presence (never the key), endpoint, tokenizer, integrity."""
        report: dict[str, str | int] = {
            "database": str(self.store.path),
            "api_key": "set" if self.has_key else "not set",
            "base_url": self.base_url or "default (api.anthropic.com)",
        }
        try:
            report["tokenizer"] = f"ok ({self.counter.count('tokenizer check')} tokens offline)"
        except Exception as exc:
            report["tokenizer"] = f"failed: {exc}"
        report["integrity"] = await self.store.integrity_check()
        refusing = await self.store.file_ids.refusing()
        if refusing:  # files go inline there; `doctor --repair` has them asked again
            report["files_api"] = "; ".join(
                f"not used at {endpoint}: {reason or 'refused'} (doctor --repair asks again)"
                for endpoint, reason in refusing
            )
        report["search_index"] = await self.store.search_index()
        try:
            report["summaries"] = await self.store.summaries.check_blocks()
            report["conversations"] = len(await self.store.conversations.all(include_archived=True))
        except sqlite3.DatabaseError as exc:
            report["conversations"] = f"unreadable: {exc}"
        return report
