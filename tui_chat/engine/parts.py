"""What a :class:`~tui_chat.engine.service.ChatService` is built from, in one record.

:meth:`EngineParts.open` opens the store (reading the time from the clock it is given) and the
Claude client, and builds what the service's use cases share: the model catalog, the token
counter, the engine context, the request builder, the compaction worker and the chat session.
:meth:`ChatService.open <tui_chat.engine.service.ChatService.open>` does this and keeps the
parts to itself. A test builds them the same way and holds each one (the test seam: the store
to write rows with, the worker to wait on, the clock it injected); the front ends never import
this module (import-linter).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui_chat.core.clock import SYSTEM_CLOCK, Clock
from tui_chat.core.tokens import TokenCounter, get_counter
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.build.requests import Requests
from tui_chat.engine.catalog import ModelCatalog
from tui_chat.engine.compaction import CompactionWorker
from tui_chat.engine.files.remote_files import RemoteFiles
from tui_chat.engine.send import ChatSession
from tui_chat.engine.settings import ServiceSettings
from tui_chat.llm.client import ClaudeClient
from tui_chat.store.repository import Store

__all__ = ["EngineParts"]


@dataclass(frozen=True)
class EngineParts:
    """The parts one :class:`~tui_chat.engine.service.ChatService` is built from."""

    store: Store
    client: ClaudeClient
    catalog: ModelCatalog
    """The models on offer (the endpoint's ``GET /v1/models`` and the model table)."""
    counter: TokenCounter
    context: EngineContext
    """What the engine's services share (built once: no callbacks into the service)."""
    requests: Requests
    worker: CompactionWorker
    session: ChatSession

    @property
    def clock(self) -> Clock:
        """Where the store reads the time."""
        return self.store.clock

    @property
    def files(self) -> RemoteFiles:
        """Uploads to the Files API and their deletion."""
        return self.context.files

    @classmethod
    def build(cls, config: ServiceSettings, store: Store, client: ClaudeClient) -> EngineParts:
        """Wire the parts over an open store and client."""
        catalog = ModelCatalog(store.model_catalog, client, config)
        counter = get_counter()
        context = EngineContext(store, client, counter, config, catalog)
        requests = Requests(context)
        worker = CompactionWorker(context, requests)
        session = ChatSession(context, requests, worker)
        return cls(store, client, catalog, counter, context, requests, worker, session)

    @classmethod
    async def open(
        cls, config: ServiceSettings, db_path: Path | None = None, *, clock: Clock = SYSTEM_CLOCK
    ) -> EngineParts:
        """Open the database (creating and migrating it), the client, and build the parts.

        Args:
            config: The settings (a :class:`tui_chat.config.Config` is one).
            db_path: The database file when not ``config.db_path`` (``--db``).
            clock: Where the store reads the time.
        """
        store = await Store.open(db_path or config.db_path, clock=clock)
        client = ClaudeClient(
            config.api_key,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
        return cls.build(config, store, client)
