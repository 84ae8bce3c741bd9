"""The models a conversation can use, and what each one can do.

The endpoint's ``GET /v1/models`` names its models with their ``max_input_tokens``,
``max_tokens`` and ``capabilities``. :class:`ModelCatalog` keeps that list in the database
(per endpoint), reads it back at start so the limits are known offline, and asks again at
most once a day (:data:`REFRESH_AFTER`) or when told (``tui-chat models --refresh``). The
model table (:mod:`tui_chat.llm.models`) is the fallback for endpoints that do not answer or
leave the figures out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from tui_chat.engine.settings import ServiceSettings
from tui_chat.llm.errors import ChatError
from tui_chat.llm.models import ModelInfo, base_model_id, known_models, model_info
from tui_chat.store.model_catalog import ModelCatalogStore

__all__ = [
    "REFRESH_AFTER",
    "ListedSupport",
    "ModelCatalog",
    "ModelChoices",
    "ModelInfo",
    "ModelLister",
    "describe",
    "known_models",
    "model_choices",
]

REFRESH_AFTER = timedelta(days=1)
"""How old the stored list may grow before it is read again."""


class ModelLister(Protocol):
    """What asks the endpoint for its models (a ``ClaudeClient`` is one)."""

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        ...

    async def list_model_info(self) -> list[dict[str, Any]]:
        """The endpoint's models as it describes them."""
        ...


class ModelCatalog:
    """The endpoint's model list, stored and in memory.

    Args:
        store: The ``model_catalog`` table (its lists read when the store opened).
        client: Asks the endpoint.
        settings: The endpoint (``base_url``; ``None``: the default API) and the per-model
            figures of the configuration (``models``; they win over both lists).
    """

    def __init__(
        self, store: ModelCatalogStore, client: ModelLister, settings: ServiceSettings
    ) -> None:
        self._store = store
        self.client = client
        self.endpoint = settings.base_url or ""
        self._overrides = settings.models
        self.models: list[dict[str, Any]] = []
        """The endpoint's models as last read, in its order."""
        self.fetched_at: str | None = None
        """When they were read (``None``: never)."""
        self.problem = ""
        """Why the last refresh failed ('' when it did not)."""
        self._tried_when_due = False
        self._by_id: dict[str, dict[str, Any]] = {}
        self._by_base: dict[str, dict[str, Any]] = {}
        self._keep(*store.read.get(self.endpoint, ([], None)))

    def stale(self, now: datetime | None = None) -> bool:
        """True when the list was never read or is older than :data:`REFRESH_AFTER`."""
        if self.fetched_at is None:
            return True
        try:
            fetched = datetime.fromisoformat(self.fetched_at)
        except ValueError:
            return True
        return (now or datetime.now(UTC)) - fetched >= REFRESH_AFTER

    async def refresh(self, *, force: bool = False) -> bool:
        """Read the endpoint's list again when it is stale (or ``force``) and keep it.

        Returns:
            True when a new list was read and stored. Without a key, or when the endpoint
            fails, the stored list stays and :attr:`problem` says why.
        """
        if not self.client.has_key:
            self.problem = "no API key: the endpoint's list is not asked for"
            return False
        if not force and not self.stale():
            return False
        try:
            models = await self.client.list_model_info()
        except ChatError as exc:
            self.problem = f"the endpoint's list is unavailable: {exc.message}"
            return False
        models = [m for m in models if isinstance(m.get("id"), str) and m["id"].strip()]
        fetched_at = await self._store.replace(self.endpoint, models)
        self.problem = ""
        self._keep(models, fetched_at)
        return True

    async def refresh_when_due(self) -> None:
        """Read the list again when it is a day old, before a send; an endpoint that failed
        (no list there, a gateway) is not asked again by this process until told to."""
        if self._tried_when_due or not self.client.has_key or not self.stale():
            return
        if not await self.refresh():
            self._tried_when_due = True

    def entry(self, model: str) -> Mapping[str, Any] | None:
        """The endpoint's entry for ``model`` (its exact id, else the same base id)."""
        name = model.strip()
        return self._by_id.get(name) or self._by_base.get(base_model_id(name))

    def info(self, model: str) -> ModelInfo:
        """A model's window, output limit, prices and features: the endpoint's list where it
        gave them, else the model table; configuration overrides applied last."""
        overrides = self._overrides.get(model) or self._overrides.get(base_model_id(model))
        return model_info(model, overrides, self.entry(model))

    def _keep(self, models: list[dict[str, Any]], fetched_at: str | None) -> None:
        self.models, self.fetched_at = models, fetched_at
        self._by_id = {str(m["id"]): m for m in models}
        self._by_base = {}
        for m in models:  # the first (newest) of a base id wins
            self._by_base.setdefault(base_model_id(str(m["id"])), m)


class StoredSupport(Protocol):
    """Where the models without on-demand compaction are remembered (the store's table)."""

    async def unsupported(self, model: str) -> str | None:
        """Why ``model`` cannot compact on the server, or ``None``."""
        ...

    async def remember(self, model: str, reason: str) -> None:
        """Record that ``model`` cannot compact on the server."""
        ...


class ListedSupport:
    """On-demand compaction support: what a failed call taught (stored), and what the
    endpoint's model list says (``capabilities.context_management.compact_20260112``), so a
    model it lists without compaction is not sent a compaction request that must fail.

    Args:
        stored: The store's ``compaction_support``.
        info_for: The model's figures (features from the endpoint's list).
        notify: Told once when the list rules the server summarizer out for a model.
    """

    def __init__(
        self,
        stored: StoredSupport,
        info_for: Callable[[str], ModelInfo],
        notify: Callable[[str, str], None],
    ) -> None:
        self._stored, self._info_for, self._notify = stored, info_for, notify

    async def unsupported(self, model: str) -> str | None:
        """Why ``model`` cannot compact on the server, or ``None`` when not known to fail."""
        if (reason := await self._stored.unsupported(model)) is not None:
            return reason
        info = self._info_for(model)
        if info.source != "endpoint" or not info.features or "compaction" in info.features:
            return None
        reason = "the endpoint's model list says the model does not support it"
        await self._stored.remember(model, reason)
        self._notify(model, reason)
        return reason

    async def remember(self, model: str, reason: str) -> None:
        """Record that ``model`` cannot compact on the server."""
        await self._stored.remember(model, reason)


@dataclass(frozen=True, slots=True)
class ModelChoices:
    """Model ids to offer, and why the endpoint's list is missing (if it is)."""

    table: list[str]
    """The model table's ids (their windows and prices are known)."""
    endpoint: list[str]
    """What ``GET /v1/models`` listed (now or when last read; empty when never)."""
    problem: str = ""
    """Why the endpoint's list is missing or old ('' when it answered)."""
    details: dict[str, str] = field(default_factory=dict)
    """Each offered id's window, output limit and features, as the picker shows them."""

    @property
    def all(self) -> list[str]:
        """Every id once: the endpoint's first (what it serves), then the table's."""
        return list(dict.fromkeys([*self.endpoint, *self.table]))

    def is_known(self, model: str) -> bool:
        """True when the model is in either list (a date suffix or prefix is allowed)."""
        name = model.strip()
        return name in self.endpoint or base_model_id(name) in self.table

    def label(self, model: str) -> str:
        """``model`` with its window and features, for a picker row."""
        detail = self.details.get(model)
        return f"{model}  {detail}" if detail else model


SHOWN_FEATURES = ("adaptive thinking", "thinking", "web search", "compaction", "images", "PDF")
"""The features a picker row names (``tui-chat models --json`` lists them all)."""


def limits(info: ModelInfo) -> str:
    """A model's window and output limit, and where they come from (``1M in · 64k out``)."""
    text = f"{_tokens(info.context_window)} in · {_tokens(info.max_output)} out"
    if info.source != "endpoint":
        text += " (table)" if info.known else " (guessed)"
    return text


def describe(info: ModelInfo) -> str:
    """A model's window, output limit and main features in a few words (``1M in · 64k out``)."""
    text = limits(info)
    shown = [f for f in info.features if f in SHOWN_FEATURES]
    return f"{text} · {', '.join(shown)}" if shown else text


def _tokens(count: int) -> str:
    if count >= 1_000_000 and count % 100_000 == 0:
        return f"{count / 1_000_000:g}M"
    return f"{count / 1000:g}k" if count % 1000 == 0 or count >= 10_000 else str(count)


async def model_choices(
    catalog: ModelCatalog,
    info_for: Callable[[str], ModelInfo] | None = None,
    *,
    force: bool = False,
) -> ModelChoices:
    """The model table's ids and the endpoint's (read again when stale or ``force``).

    Args:
        catalog: The stored list; refreshed here when stale.
        info_for: ``model id -> ModelInfo`` (the service's), to describe each id.
        force: Read the endpoint's list even when the stored one is fresh.
    """
    await catalog.refresh(force=force)
    table = known_models()
    endpoint = [str(m["id"]) for m in catalog.models]
    problem = catalog.problem
    if problem and endpoint:
        problem += f" (showing the list read {catalog.fetched_at})"
    details = {m: describe(info_for(m)) for m in [*endpoint, *table]} if info_for else {}
    return ModelChoices(table, endpoint, problem, details)
