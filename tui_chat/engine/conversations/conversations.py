"""Conversations: create, find, list, rename, archive, delete and configure them.

:class:`Conversations` is the use-case service the front ends reach as
``service.conversations``; the policy a conversation runs under and what is wrong with its
stored settings are read here too.
"""

from __future__ import annotations

import builtins
from dataclasses import replace

from tui_chat.core.models import Conversation, ConversationInfo, utc_now
from tui_chat.core.policy import Policy
from tui_chat.core.presets import SETTING_KEYS, PolicyError, parse_setting, resolve_policy
from tui_chat.core.reply_options import REPLY_KEYS
from tui_chat.core.settings_check import settings_warning
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.compaction import CompactionWorker
from tui_chat.engine.usage.usage import CostCache

NEW_TITLE = "New conversation"
"""The title of a conversation nobody named yet (its first prompt names it)."""


class SettingError(ValueError):
    """A conversation setting that cannot be applied."""


class Conversations:
    """The conversations of one engine.

    Args:
        engine: The engine context (store, settings, policies, remote files).
        worker: The compaction worker (a deletion waits for its work on the conversation).
        costs: What each conversation cost (the list's figures).
        notices: Where problems noticed while resolving are added (``service.notices``).
    """

    def __init__(
        self,
        engine: EngineContext,
        worker: CompactionWorker,
        costs: CostCache,
        notices: builtins.list[str],
    ) -> None:
        self._engine = engine
        self._store = engine.store
        self._worker = worker
        self._costs = costs
        self._notices = notices

    async def new(
        self, title: str | None = None, model: str | None = None, system: str | None = None
    ) -> Conversation:
        """Create a conversation with the configured defaults."""
        config = self._engine.config
        return await self._store.conversations.create(
            title=title or NEW_TITLE,
            model=model or config.model,
            system_prompt=config.system_prompt if system is None else system,
        )

    async def get(self, conversation_id: str) -> Conversation:
        """The conversation with this exact id. Raises :class:`NotFound`."""
        return await self._store.conversations.get(conversation_id)

    async def resolve(self, ref: str) -> Conversation:
        """A conversation by id, unique prefix or ``last``. Raises :class:`NotFound`.

        A problem with its settings is added to the notices (``service.notices``).
        """
        conversation = await self._store.conversations.resolve(ref)
        problem = self.settings_problem(conversation)
        if problem is not None and problem not in self._notices:
            self._notices.append(problem)
        return conversation

    async def list(
        self, include_archived: bool = False, *, with_cost: bool = False
    ) -> builtins.list[ConversationInfo]:
        """Conversations, newest first (``with_cost``: each with what it cost so far, read
        for the whole list at once)."""
        infos = await self._store.conversations.all(include_archived=include_archived)
        if not with_cost:
            return infos
        costs = await self._costs.costs([info.conversation.id for info in infos])
        return [replace(info, cost_usd=costs[info.conversation.id]) for info in infos]

    async def rename(self, conversation_id: str, title: str) -> Conversation:
        """Rename a conversation (a blank title is refused)."""
        title = " ".join(title.split())
        if not title:
            raise SettingError("a title cannot be empty")
        return await self._store.conversations.update(conversation_id, title=title)

    async def archive(self, conversation_id: str, archived: bool = True) -> Conversation:
        """Archive (hide from the list) or unarchive a conversation."""
        return await self._store.conversations.update(
            conversation_id, archived_at=utc_now() if archived else None
        )

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation and all it holds (callers confirm first)."""
        await self._worker.wait(conversation_id)
        await self._store.conversations.delete(conversation_id)
        await self._store.attachments.remove_unreferenced()
        self._engine.files.prune_soon()  # their uploads at the endpoint, in the background

    def policy_for(self, conversation: Conversation) -> Policy:
        """The policy in force for a conversation, its shares of the window made budgets
        (invalid stored settings left out: :meth:`settings_problem` says which)."""
        return self._engine.policy_for(conversation)

    def settings_problem(self, conversation: Conversation) -> str | None:
        """What is wrong with a conversation's stored settings and how to fix it, if anything."""
        return settings_warning(conversation.id, conversation.title, conversation.settings)

    async def set_setting(self, conversation_id: str, key: str, value: str) -> Conversation:
        """Set a conversation's model, system prompt or any policy key.

        Raises:
            SettingError: unknown key or invalid value (nothing is changed).
        """
        update = self._store.conversations.update
        if key == "model":
            if not value.strip():
                raise SettingError("model must not be empty")
            return await update(conversation_id, model=value.strip())
        if key == "system":
            return await update(conversation_id, system_prompt=value)
        conversation = await self._store.conversations.get(conversation_id)
        if key not in SETTING_KEYS:
            raise SettingError(
                f"unknown setting {key!r}; use one of: model, system, " + ", ".join(SETTING_KEYS)
            )
        try:
            parsed = parse_setting(key, value)
        except PolicyError as exc:
            raise SettingError(str(exc)) from None
        settings = dict(conversation.settings)
        if key == "preset":
            # A preset replaces earlier per-key choices: it runs as its seed wrote it.
            # What the reply may use (thinking, web tools) is not part of a preset.
            settings = {"preset": parsed} | {k: v for k, v in settings.items() if k in REPLY_KEYS}
        else:
            settings[key] = parsed
        try:
            resolve_policy(settings, self._engine.config.compaction)
        except PolicyError as exc:
            raise SettingError(str(exc)) from None
        return await update(conversation_id, settings=settings)
