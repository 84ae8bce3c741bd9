"""The SDK's typed objects as plain dicts, with what pydantic says about them logged.

An endpoint can send a block that does not match the SDK's types (a web-search result with a
number for its URL): the SDK keeps it unvalidated, and turning it into a dict makes pydantic
warn ("Pydantic serializer warnings: …") through :mod:`warnings`, which Python prints to
stderr, over the TUI's screen. Here such warnings are caught and logged; the dict is kept as
received (it is sent back as it came).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

_log = logging.getLogger(__name__)


def plain(model: Any, **options: Any) -> dict[str, Any]:
    """``model.to_dict(mode="json", **options)``; a warning it raises is logged, not printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data: dict[str, Any] = model.to_dict(mode="json", **options)
    for warning in caught:
        first = str(warning.message).strip().splitlines()[0:2]
        _log.warning(
            "the endpoint sent a %s the SDK could not read as typed: %s",
            type(model).__name__,
            " ".join(first),
        )
    return data
