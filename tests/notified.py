"""Every notification a test's app raised, kept for the test to read.

Textual forgets a notification once its timeout has passed on the wall clock (5 s by default,
2 s for some of the app's own): ``app._notifications`` drops it the next time it is read, and a
shown toast removes itself on a timer. On a loaded machine a test's waits between the
``notify`` and its check took longer than that (``escape`` with a queued prompt: "back in the
composer" was raised, then gone when read), so a check of what was said depended on how fast
the machine was. The tests read this record instead: what the app said, whenever it said it.
Imported by ``tests/conftest.py``; it wraps Textual's handler of the ``Notify`` message once.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from textual.app import App
from textual.notifications import Notification, Notify

_RAISED: WeakKeyDictionary[App[Any], list[Notification]] = WeakKeyDictionary()

_on_notify = App._on_notify


def _on_notify_kept(self: App[Any], event: Notify) -> None:
    _RAISED.setdefault(self, []).append(event.notification)
    _on_notify(self, event)


App._on_notify = _on_notify_kept  # type: ignore[method-assign]


def raised(app: App[Any]) -> list[Notification]:
    """The notifications ``app`` has raised since it started, oldest first (expired ones too)."""
    return list(_RAISED.get(app, []))
