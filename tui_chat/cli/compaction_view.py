"""What ``compact`` and ``summary`` print about a version's memory: progress and retention."""

from __future__ import annotations

import sys

from tui_chat.cli.render import out
from tui_chat.core.inert import inert
from tui_chat.core.ledger import Retention
from tui_chat.core.models import Summary


def print_retention(retention: Retention) -> None:
    """Identifier retention per kind and the identifiers not kept (``summary``, ``compact``).

    Args:
        retention: From :meth:`~tui_chat.engine.conversations.versions.Summaries.retention`.
    """
    data = retention.to_json()
    if not data["total"]:
        return
    kinds = ", ".join(f"{k} {v['kept']}/{v['total']}" for k, v in data["by_kind"].items())
    out(f"identifiers kept (summary + ledger): {data['kept']}/{data['total']}  ({kinds})")
    missing = data["not_kept"]
    if missing:
        shown = "; ".join(f"{m['kind']} {inert(m['value'])}" for m in missing[:20])
        more = f" … and {len(missing) - 20} more" if len(missing) > 20 else ""
        out(f"not kept: {shown}{more}")


def compact_progress(done: int, expected: int, summary: Summary) -> None:
    """One line on stderr per version ``compact`` makes (stdout keeps the result).

    Args:
        done: Versions made so far.
        expected: Versions folding everything due takes.
        summary: The version just made.
    """
    print(
        f"compacted {done}/{expected}: version {summary.version}, up to message "
        f"#{summary.covers_to_message_id}",
        file=sys.stderr,
        flush=True,
    )
