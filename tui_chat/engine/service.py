"""ChatService: the one façade the CLI and the TUI drive. It owns the store, the Claude client,
the token counter, the chat session and the compaction worker; every action is one coroutine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from tui_chat.core.attachments import Attachment
from tui_chat.core.models import Conversation, ConversationInfo, Message, SearchHit
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PolicyError, parse_setting, resolve_policy
from tui_chat.core.reply_options import REPLY_KEYS
from tui_chat.core.request import Breakdown, BuiltRequest, draft_breakdown
from tui_chat.core.settings_check import settings_warning
from tui_chat.core.tokens import TokenCounter, get_counter
from tui_chat.engine.attachments import expand_request
from tui_chat.engine.branches import Branches
from tui_chat.engine.catalog import ModelCatalog
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.engine.context import EngineContext
from tui_chat.engine.drafts import Drafts
from tui_chat.engine.events import EventCallback
from tui_chat.engine.exports import Transfer
from tui_chat.engine.maintenance import Maintenance
from tui_chat.engine.remote_files import CLOSE_WAIT
from tui_chat.engine.requests import Requests
from tui_chat.engine.send import ChatSession, SendOutcome
from tui_chat.engine.settings import ServiceSettings
from tui_chat.engine.usage import CostCache, Period, UsageReport, usage_report
from tui_chat.engine.versions import Summaries
from tui_chat.engine.watch import OutsideWrites
from tui_chat.llm.client import ClaudeClient
from tui_chat.llm.models import ModelInfo
from tui_chat.store.errors import NotFound
from tui_chat.store.repository import Store
from tui_chat.store.rows import clean_text

__all__ = ["ChatService", "CompactionError", "NotFound", "ServiceSettings", "SettingError"]

TITLE_CHARS = 60


class SettingError(ValueError):
    """A conversation setting that cannot be applied."""


class ChatService:
    """Every tui-chat action over one database (summary versions: :attr:`summaries`)."""

    def __init__(self, config: ServiceSettings, store: Store, client: ClaudeClient) -> None:
        """Wire the parts together; use :meth:`open`."""
        self.config = config
        self.store = store
        self.client = client
        self.catalog = ModelCatalog(store.model_catalog, client, config)  # GET /v1/models
        self.counter: TokenCounter = get_counter()
        self.engine = EngineContext(store, client, self.counter, config, self.catalog)
        """What the engine's services share (built once: no callbacks into the service)."""
        self.notices: list[str] = []
        """Things the user should know that did not stop an action (invalid settings)."""
        self.requests = Requests(self.engine)
        self.worker = CompactionWorker(self.engine, self.requests)
        self.session = ChatSession(self.engine, self.requests, self.worker)
        self.branches = Branches(store, self.worker)
        """Forks, edited prompts and compacting up to a message."""
        self.summaries = Summaries(self.engine, self.worker)
        """Compact now, list, roll back and regenerate summary versions."""
        self.transfer = Transfer(store, self.counter, config.model)
        """Export and import conversations."""
        self.maintenance = Maintenance(
            store, self.counter, has_key=client.has_key, base_url=config.base_url
        )
        """Backup, repair and the doctor's report."""
        self.drafts = Drafts(store)  # each conversation's unsent text and files
        self.costs = CostCache(store, self.info_for)  # what each conversation cost, kept
        self.outside = OutsideWrites(store)  # did another process write? (data_version)
        self.access = store.access
        """How the database file was opened (read-only, and why)."""

    @classmethod
    async def open(cls, config: ServiceSettings, db_path: Path | None = None) -> ChatService:
        """Open the database (creating and migrating it) and build the service.

        Args:
            config: The settings (a :class:`tui_chat.config.Config` is one).
            db_path: The database file when not ``config.db_path`` (``--db``).
        """
        store = await Store.open(db_path or config.db_path)
        client = ClaudeClient(
            config.api_key,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
        return cls(config, store, client)

    async def close(self) -> None:
        """Stop background work and close the database and the HTTP client."""
        await self.worker.cancel_all()
        await self.engine.files.settle(CLOSE_WAIT)
        await self.client.aclose()
        await self.store.close()

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        return self.client.has_key

    def preload(self) -> None:
        """Import the SDK's modules now (a thread of the TUI calls this once it is drawn)."""
        self.client.preload()

    @property
    def db_path(self) -> Path:
        """The database file this service works on."""
        return Path(self.store.path)

    # -- events --------------------------------------------------------------------------

    def subscribe(self, callback: EventCallback) -> Callable[[], None]:
        """Receive background events (compaction); returns the unsubscribe function."""
        return self.engine.bus.subscribe(callback)

    # -- policy and figures --------------------------------------------------------------

    def policy_for(self, conversation: Conversation) -> Policy:
        """The policy in force for a conversation, its shares of the window made budgets
        (invalid stored settings left out: :meth:`settings_problem` says which)."""
        return self.engine.policy_for(conversation)

    def settings_problem(self, conversation: Conversation) -> str | None:
        """What is wrong with a conversation's stored settings and how to fix it, if anything."""
        return settings_warning(conversation.id, conversation.title, conversation.settings)

    def info_for(self, model: str) -> ModelInfo:
        """A model's figures: the endpoint's list, else the model table; config overrides last."""
        return self.engine.info_for(model)

    # -- conversations -------------------------------------------------------------------

    async def new_conversation(
        self, title: str | None = None, model: str | None = None, system: str | None = None
    ) -> Conversation:
        """Create a conversation with the configured defaults."""
        return await self.store.conversations.create(
            title=title or "New conversation",
            model=model or self.config.model,
            system_prompt=self.config.system_prompt if system is None else system,
        )

    async def conversation(self, conversation_id: str) -> Conversation:
        """The conversation with this exact id. Raises :class:`NotFound`."""
        return await self.store.conversations.get(conversation_id)

    async def resolve(self, ref: str) -> Conversation:
        """A conversation by id, unique prefix or ``last``. Raises :class:`NotFound`.

        A problem with its settings is added to :attr:`notices`.
        """
        conversation = await self.store.conversations.resolve(ref)
        problem = self.settings_problem(conversation)
        if problem is not None and problem not in self.notices:
            self.notices.append(problem)
        return conversation

    async def list_conversations(
        self, include_archived: bool = False, *, with_cost: bool = False
    ) -> list[ConversationInfo]:
        """Conversations, newest first (``with_cost``: each with what it cost so far, read
        for the whole list at once)."""
        infos = await self.store.conversations.all(include_archived=include_archived)
        if not with_cost:
            return infos
        ids = [info.conversation.id for info in infos]
        costs = await self.costs.costs(ids)
        return [replace(info, cost_usd=costs[info.conversation.id]) for info in infos]

    async def rename(self, conversation_id: str, title: str) -> Conversation:
        """Rename a conversation."""
        title = " ".join(title.split())
        if not title:
            raise SettingError("a title cannot be empty")
        return await self.store.conversations.update(conversation_id, title=title)

    async def archive(self, conversation_id: str, archived: bool = True) -> Conversation:
        """Archive (hide from the list) or unarchive a conversation."""
        from tui_chat.core.models import utc_now

        return await self.store.conversations.update(
            conversation_id, archived_at=utc_now() if archived else None
        )

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation and all it holds (callers confirm first)."""
        await self.worker.wait(conversation_id)
        await self.store.conversations.delete(conversation_id)
        await self.store.attachments.remove_unreferenced()
        self.engine.files.prune_soon()  # their uploads at the endpoint, in the background

    async def messages(
        self,
        conversation_id: str,
        *,
        before_id: int | None = None,
        after_id: int | None = None,
        limit: int = 50,
    ) -> list[Message]:
        """A page of messages, oldest first: the newest ``limit`` before ``before_id``, or
        with ``after_id`` the oldest ``limit`` after it (paging forward)."""
        if after_id is not None:
            return await self.store.messages.history(
                conversation_id, after_id=after_id, before_id=before_id, limit=limit
            )
        return await self.store.messages.history(
            conversation_id, before_id=before_id, limit=limit, newest=True
        )

    async def history(self, conversation_id: str) -> list[Message]:
        """Every message of a conversation, oldest first."""
        return await self.store.messages.history(conversation_id)

    async def message_count(self, conversation_id: str) -> int:
        """How many messages a conversation holds."""
        count, _ = await self.store.messages.stats(conversation_id)
        return count

    # -- sending -------------------------------------------------------------------------

    async def send(
        self,
        conversation_id: str,
        text: str,
        on_event: EventCallback | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> SendOutcome:
        """Store the user's message (and attached files) and stream the reply."""
        conversation = await self.store.conversations.get(conversation_id)
        outcome = await self.session.send(conversation_id, text, on_event, attachments)
        if conversation.title == "New conversation":
            named = text if text.strip() else " ".join(a.name for a in attachments)
            await self.store.conversations.update(conversation_id, title=_title_from(named))
        return outcome

    async def retry(
        self, conversation_id: str, on_event: EventCallback | None = None
    ) -> SendOutcome:
        """Ask again for the reply to the last user message."""
        last = await self.store.messages.last(conversation_id)
        if last is None:
            raise SettingError("nothing to retry: the conversation is empty")
        if last.role == "assistant" and last.status == "complete":
            raise SettingError("nothing to retry: the last reply is complete")
        return await self.session.reply(conversation_id, on_event)

    # -- context and gauge ---------------------------------------------------------------

    async def context(
        self, conversation_id: str, draft: str | None = None, attachments: Sequence[Attachment] = ()
    ) -> BuiltRequest:
        """The exact next request (``draft`` and its attached files as the new message)."""
        conversation = await self.store.conversations.get(conversation_id)
        # Cleaned as a sent message is stored (no NUL, no lone surrogate); files alone are sent.
        text = None if draft is None and not attachments else clean_text(draft or "")
        built = await self.requests.build(conversation, text, attachments)
        if not built.attachments:
            return built  # nothing to expand (the scan of every block is skipped)
        # Attached files as they are sent, not as the references stored: by ``file_id`` those
        # the endpoint already has (the Files API; nothing is uploaded for a preview), the
        # others as base64.
        ids = await self.engine.files.file_ids(built.request, upload=False)
        request = await expand_request(self.store, built.request, attachments, file_ids=ids)
        return replace(built, request=request)

    async def gauge(
        self, conversation_id: str, draft: str = "", attachments: Sequence[Attachment] = ()
    ) -> Breakdown:
        """The token breakdown with ``draft`` and the files attached to it counted; cheap
        enough to call per keystroke."""
        conversation = await self.store.conversations.get(conversation_id)
        base = await self.requests.base(conversation)  # kept while the revision is the same
        files = self.counter.count_content([a.ref() for a in attachments])
        return draft_breakdown(base, (self.counter.count(draft) if draft else 0) + files)

    async def cost_usd(self, conversation_id: str) -> float:
        """What the conversation has cost so far in USD: its replies and its summary calls."""
        costs = await self.costs.costs([conversation_id])
        return costs[conversation_id]

    async def usage(self, by: Period = "day", since: str | None = None) -> UsageReport:
        """Cost of every conversation's replies and summaries per ``by`` and model."""
        return await usage_report(self.store, self.info_for, by, since)

    # -- drafts (the composer's text and files) --------------------------------------------

    async def draft(self, conversation_id: str) -> str:
        """The conversation's draft text (``""`` for none)."""
        return await self.drafts.get(conversation_id)

    async def set_draft(self, conversation_id: str, text: str) -> None:
        """Keep ``text`` as the conversation's draft (blank, with no files: none)."""
        await self.drafts.set(conversation_id, text)

    async def draft_files(self, conversation_id: str) -> list[Attachment]:
        """The files attached to the conversation's draft."""
        return await self.drafts.files(conversation_id)

    async def set_draft_files(self, conversation_id: str, files: Sequence[Attachment]) -> None:
        """Keep ``files`` (in this order) as the files of the conversation's draft."""
        await self.drafts.set_files(conversation_id, files)

    # -- anchors -------------------------------------------------------------------------

    async def pin(self, message_id: int, note: str = "") -> None:
        """Pin a message so it is always sent verbatim."""
        await self.store.anchors.pin(message_id, note)

    async def unpin(self, message_id: int) -> bool:
        """Unpin a message; False when it was not pinned."""
        await self.store.messages.get(message_id)  # NotFound for an unknown message
        return await self.store.anchors.unpin(message_id)

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        """Ids of a conversation's pinned messages."""
        return await self.store.anchors.pinned_ids(conversation_id)

    # -- search --------------------------------------------------------------------------

    async def search(
        self, query: str, conversation_id: str | None = None, limit: int = 50
    ) -> list[SearchHit]:
        """Full-text search across conversations (or within one); a message the branches of
        a conversation share is one hit."""
        if conversation_id is not None:
            return await self.store.search.find(query, conversation_id=conversation_id, limit=limit)
        hits = await self.store.search.find(query, limit=2 * limit)
        return await self.branches.distinct_hits(hits, limit)

    # -- settings ------------------------------------------------------------------------

    async def set_setting(self, conversation_id: str, key: str, value: str) -> Conversation:
        """Set a conversation's model, system prompt or any policy key.

        Raises:
            SettingError: unknown key or invalid value (nothing is changed).
        """
        conversation = await self.store.conversations.get(conversation_id)
        if key == "model":
            if not value.strip():
                raise SettingError("model must not be empty")
            updated = await self.store.conversations.update(conversation_id, model=value.strip())
        elif key == "system":
            updated = await self.store.conversations.update(conversation_id, system_prompt=value)
        else:
            from tui_chat.core.presets import SETTING_KEYS

            if key not in SETTING_KEYS:
                raise SettingError(
                    f"unknown setting {key!r}; use one of: model, system, "
                    + ", ".join(SETTING_KEYS)
                )
            try:
                parsed = parse_setting(key, value)
            except PolicyError as exc:
                raise SettingError(str(exc)) from None
            settings = dict(conversation.settings)
            if key == "preset":
                # A preset replaces earlier per-key choices: it runs as its seed wrote it.
                # What the reply may use (thinking, web tools) is not part of a preset.
                settings = {"preset": parsed} | {
                    k: v for k, v in settings.items() if k in REPLY_KEYS
                }
            else:
                settings[key] = parsed
            try:
                resolve_policy(settings, self.config.compaction)
            except PolicyError as exc:
                raise SettingError(str(exc)) from None
            updated = await self.store.conversations.update(conversation_id, settings=settings)
        return updated

    # -- background work ---------------------------------------------------------------------

    async def finish_background(self) -> None:
        """Let due compactions finish (a one-shot CLI send calls this before exiting)."""
        await self.worker.wait()


def _title_from(text: str) -> str:
    words = " ".join(text.split())
    return words[:TITLE_CHARS] + ("…" if len(words) > TITLE_CHARS else "") or "New conversation"
