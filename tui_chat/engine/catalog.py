"""The models a conversation can use: the model table's, and the endpoint's when it answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tui_chat.llm.errors import ChatError
from tui_chat.llm.models import base_model_id, known_models

__all__ = ["ModelChoices", "ModelLister", "known_models", "model_choices"]


class ModelLister(Protocol):
    """What asks the endpoint for its models (a ``ClaudeClient`` is one)."""

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        ...

    async def list_models(self) -> list[str]:
        """The model ids the endpoint offers."""
        ...


@dataclass(frozen=True, slots=True)
class ModelChoices:
    """Model ids to offer, and why the endpoint's list is missing (if it is)."""

    table: list[str]
    """The model table's ids (their windows and prices are known)."""
    endpoint: list[str]
    """What ``GET /v1/models`` listed (empty when it did not answer)."""
    problem: str = ""
    """Why the endpoint's list is missing ('' when it answered)."""

    @property
    def all(self) -> list[str]:
        """Every id once: the endpoint's first (what it serves), then the table's."""
        return list(dict.fromkeys([*self.endpoint, *self.table]))

    def is_known(self, model: str) -> bool:
        """True when the model is in either list (a date suffix or prefix is allowed)."""
        name = model.strip()
        return name in self.endpoint or base_model_id(name) in self.table


async def model_choices(client: ModelLister) -> ModelChoices:
    """The model table's ids and, when the endpoint answers, its list."""
    table = known_models()
    if not client.has_key:
        return ModelChoices(table, [], "no API key: the endpoint's list is not asked for")
    try:
        return ModelChoices(table, await client.list_models())
    except ChatError as exc:
        return ModelChoices(table, [], f"the endpoint's list is unavailable: {exc.message}")
