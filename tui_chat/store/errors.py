"""The errors the store raises."""

from __future__ import annotations


class StoreError(Exception):
    """The database cannot be used; the message says why and what to do."""


class NotFound(StoreError):
    """A conversation, message or version that does not exist."""


class Conflict(StoreError):
    """A write lost a race (e.g. compare-and-swap activation, a live lease)."""
