"""ChatService: the one object the CLI and the TUI hold, a small root over the engine's
use-case services (``conversations``, ``messages``, ``requests``, ``costs``, ``drafts``,
``summaries``, ``branches``, ``transfer``, ``maintenance``). It owns the store, the Claude
client, the token counter, the chat session and the compaction worker, which the front ends
never reach; sending a prompt is the root's own use case.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path

from tui_chat.core.attachments import Attachment
from tui_chat.core.clock import SYSTEM_CLOCK, Clock
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.conversations.branches import Branches
from tui_chat.engine.conversations.conversations import NEW_TITLE, Conversations, SettingError
from tui_chat.engine.conversations.drafts import Drafts
from tui_chat.engine.conversations.message_log import MessageLog
from tui_chat.engine.conversations.versions import Summaries
from tui_chat.engine.events import EventCallback
from tui_chat.engine.files.remote_files import CLOSE_WAIT
from tui_chat.engine.maintenance import Maintenance
from tui_chat.engine.parts import EngineParts
from tui_chat.engine.send import SendOutcome
from tui_chat.engine.settings import ServiceSettings
from tui_chat.engine.tools import Tools
from tui_chat.engine.tools.calls import Approver
from tui_chat.engine.transfer.exports import Transfer
from tui_chat.engine.usage.usage import CostCache
from tui_chat.engine.watch import OutsideWrites
from tui_chat.store.errors import NotFound

__all__ = ["ChatService", "CompactionError", "NotFound", "ServiceSettings", "SettingError"]

TITLE_CHARS = 60


class ChatService:
    """Every tui-chat action over one database, through the use-case services it holds.

    The store, the Claude client, the token counter and the compaction worker are its own
    (underscored): the front ends reach them only through the use-case services.
    """

    def __init__(self, config: ServiceSettings, parts: EngineParts) -> None:
        """Wire the use-case services over ``parts``; use :meth:`open`."""
        self.config = config
        store = parts.store
        self._store = store
        self._client = parts.client
        self.catalog = parts.catalog  # GET /v1/models
        self._counter: TokenCounter = parts.counter
        self._engine = parts.context
        """What the engine's services share (built once: no callbacks into the service)."""
        self.notices: list[str] = []
        """Things the user should know that did not stop an action (invalid settings)."""
        self.requests = parts.requests
        """The exact next request (``context``) and the gauge's breakdown (``gauge``)."""
        self._worker = parts.worker
        self._session = parts.session
        self.branches = Branches(store, self._worker)
        """Forks, edited prompts and compacting up to a message."""
        self.summaries = Summaries(self._engine, self._worker)
        """Compact now, list, roll back and regenerate summary versions."""
        self.transfer = Transfer(store, self._counter, config.model)
        """Export and import conversations."""
        self.maintenance = Maintenance(
            store, self._counter, has_key=parts.client.has_key, base_url=config.base_url
        )
        """Backup, repair and the doctor's report."""
        self.drafts = Drafts(store)
        """Each conversation's unsent text and attached files."""
        self.costs = CostCache(store, self.catalog.info)
        """What each conversation cost (kept per revision), and the usage report."""
        self.conversations = Conversations(self._engine, self._worker, self.costs, self.notices)
        """Create, find, list, rename, archive, delete and configure conversations."""
        self.messages = MessageLog(store, self.branches)
        """Pages of messages, the whole history, pins and search."""
        self.outside = OutsideWrites(store)  # did another process write? (data_version)
        self.access = store.access
        """How the database file was opened (read-only, and why)."""
        self.tools = Tools(self._engine.tools, store.tool_settings, config.mcp_error)
        """The MCP servers of ``mcp.json``: ``start`` them (after the first frame), their
        reports, their tools; the calls run inside a send."""

    @classmethod
    async def open(
        cls, config: ServiceSettings, db_path: Path | None = None, *, clock: Clock = SYSTEM_CLOCK
    ) -> ChatService:
        """Open the database (creating and migrating it) and build the service.

        Args:
            config: The settings (a :class:`tui_chat.config.Config` is one).
            db_path: The database file when not ``config.db_path`` (``--db``).
            clock: Where the store reads the time (the system's).
        """
        return cls(config, await EngineParts.open(config, db_path, clock=clock))

    async def close(self) -> None:
        """Stop background work and close the database and the HTTP client."""
        await self._worker.cancel_all()
        await self._engine.tools.stop()  # no server outlives the app
        await self._engine.files.settle(CLOSE_WAIT)
        await self._client.aclose()
        await self._store.close()

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        return self._client.has_key

    def preload(self) -> None:
        """Import the SDK's modules now, then stream a canned reply through them from memory
        (:mod:`~tui_chat.llm.rehearsal`: the SDK builds its event types then, not at the end
        of the first reply). A thread of the TUI calls this once it is drawn. A rehearsal
        that fails (an SDK that parses differently) only leaves the first reply as it was:
        it never ends the app."""
        self._client.preload()
        from tui_chat.llm.rehearsal import rehearse

        with contextlib.suppress(Exception):
            asyncio.run(rehearse())

    @property
    def db_path(self) -> Path:
        """The database file this service works on."""
        return Path(self._store.path)

    # -- events --------------------------------------------------------------------------

    def subscribe(self, callback: EventCallback) -> Callable[[], None]:
        """Receive background events (compaction); returns the unsubscribe function."""
        return self._engine.bus.subscribe(callback)

    # -- sending -------------------------------------------------------------------------

    async def send(
        self,
        conversation_id: str,
        text: str,
        on_event: EventCallback | None = None,
        attachments: Sequence[Attachment] = (),
        approve: Approver | None = None,
    ) -> SendOutcome:
        """Store the user's message (and attached files) and stream the reply; the tools it
        calls run with ``approve``'s approval (or a standing one), else get an error result."""
        conversation = await self._store.conversations.get(conversation_id)
        outcome = await self._session.send(conversation_id, text, on_event, attachments, approve)
        if conversation.title == NEW_TITLE:
            named = text if text.strip() else " ".join(a.name for a in attachments)
            await self._store.conversations.update(conversation_id, title=_title_from(named))
        return outcome

    async def retry(
        self,
        conversation_id: str,
        on_event: EventCallback | None = None,
        approve: Approver | None = None,
    ) -> SendOutcome:
        """Ask again for the reply to the last user message."""
        last = await self._store.messages.last(conversation_id)
        if last is None:
            raise SettingError("nothing to retry: the conversation is empty")
        if last.role == "assistant" and last.status == "complete":
            raise SettingError("nothing to retry: the last reply is complete")
        return await self._session.reply(conversation_id, on_event, approve)

    # -- background work ---------------------------------------------------------------------

    async def finish_background(self) -> None:
        """Let due compactions finish (a one-shot CLI send calls this before exiting)."""
        await self._worker.wait()


def _title_from(text: str) -> str:
    words = " ".join(text.split())
    return words[:TITLE_CHARS] + ("…" if len(words) > TITLE_CHARS else "") or NEW_TITLE
