"""The engine context: what every engine service shares, built once per open database.

:class:`ChatService <tui_chat.engine.service.ChatService>` builds one :class:`EngineContext`
(the store, the Claude client, the token counter, the settings and model catalog the policies
are resolved from, and the event bus) and hands it to the request builder, the chat session
and the compaction worker, instead of wiring each with callbacks into the service.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tui_chat.core.models import Conversation
from tui_chat.core.policy import Policy
from tui_chat.core.presets import resolve_policy
from tui_chat.core.request.budget import for_window
from tui_chat.core.settings_check import usable_settings
from tui_chat.core.tokens import TokenCounter, count_label, prior_calibration
from tui_chat.engine.build.assemble import window_for
from tui_chat.engine.catalog import ModelCatalog
from tui_chat.engine.events import EngineEvent, EventCallback
from tui_chat.engine.files.remote_files import RemoteFiles
from tui_chat.engine.settings import ServiceSettings
from tui_chat.engine.tools.calls import ToolCalls
from tui_chat.engine.tools.manager import ToolServers
from tui_chat.llm.client import ClaudeClient
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store

SUMMARIZER_NAMES = frozenset({"auto", "claude", "server", "extractive"})
"""``summarizer`` settings that name no model."""


def standalone_model(policy: Policy) -> str:
    """The model a standalone summary call runs on: the ``summarizer`` setting when it is a
    model id, else ``summarizer_model``."""
    name = policy.summarizer
    return policy.summarizer_model if name in SUMMARIZER_NAMES else name


class EventBus:
    """Engine events (compaction started, finished, failed…) to whoever subscribed."""

    def __init__(self) -> None:
        self._subscribers: list[EventCallback] = []

    def subscribe(self, callback: EventCallback) -> Callable[[], None]:
        """Receive every event from now on; returns the unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, event: EngineEvent) -> None:
        """Hand ``event`` to every subscriber, in the order they subscribed."""
        for callback in list(self._subscribers):
            callback(event)


@dataclass
class EngineContext:
    """The store, the client, the counter, the policies and the event bus of one engine."""

    store: Store
    client: ClaudeClient
    counter: TokenCounter
    config: ServiceSettings
    catalog: ModelCatalog
    bus: EventBus = field(default_factory=EventBus)
    files: RemoteFiles = field(init=False)
    """Attachments through the Files API where the endpoint has it (``remote_files.py``)."""
    tools: ToolServers = field(init=False)
    """The MCP servers of ``mcp.json`` (started by the front end, after its first frame)."""
    tool_calls: ToolCalls = field(init=False)
    """Runs the calls a reply asks for, approval first."""

    def __post_init__(self) -> None:
        self.files = RemoteFiles(self.store, self.client)
        self.tools = ToolServers(self.config.mcp_servers, self.counter)
        self.tool_calls = ToolCalls(self.tools, self.store.tool_settings)

    async def tools_off(self, conversation_id: str) -> frozenset[str]:
        """The servers switched off in a conversation (none read when none is configured)."""
        if not self.tools.configured:
            return frozenset()
        return await self.store.tool_settings.off(conversation_id)

    def info_for(self, model: str) -> ModelInfo:
        """A model's figures: the endpoint's list, else the model table; config overrides last."""
        return self.catalog.info(model)

    def policy_for(self, conversation: Conversation) -> Policy:
        """The policy in force for a conversation, its shares of the window made budgets.

        Invalid stored settings (an older import, a hand edit) are left out, so the
        conversation still opens and sends (``service.conversations.settings_problem`` says which).
        """
        settings = usable_settings(conversation.settings)
        policy = resolve_policy(settings, self.config.compaction)
        info = self.info_for(conversation.model)
        policy = replace(
            policy,
            prices=info.prices,
            summarizer_prices=self.info_for(standalone_model(policy)).prices,
        )
        usable = window_for(info, policy).usable
        explicit = set(settings)
        if "preset" not in settings:
            explicit |= set(self.config.compaction or {})
        return for_window(policy, usable, explicit - {"preset"})

    async def calibration(self, model: str) -> float:
        """The real/estimated input ratio learned for a model (its tokenizer generation's
        prior until the API has counted something for it)."""
        ratio, _ = await self.count_basis(model)
        return ratio

    async def count_basis(self, model: str) -> tuple[float, str]:
        """The calibration the gauge scales the offline count by, and what it is."""
        ratio, samples = await self.store.calibration(model)
        tokenizer = self.info_for(model).tokenizer
        if samples <= 0:
            ratio = prior_calibration(tokenizer)
        return ratio, count_label(tokenizer, ratio, samples)
