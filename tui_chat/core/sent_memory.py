"""The one identifier-retention figure of a summary version: what its memory, as sent, keeps.

A version stands in for the messages it covers through two texts in the memory block: its
summary section (capped at the summary budget, as the request builder caps it) and its
identifier ledger, rendered within the ledger budget (and what the summary leaves of its own,
:func:`~tui_chat.core.ledger.room`) without what the summary already says.
:func:`sent_memory` lays those out exactly as :class:`~tui_chat.core.request.builder` does
for a request; :func:`memory_retention` counts the covered identifiers found in them. The
timeline, the inspector and ``tui-chat summary``/``summaries`` all show this figure
(``Summaries.retention``), so a version has one retention wherever it is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui_chat.core import ledger
from tui_chat.core.ledger import Retention
from tui_chat.core.models import Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request.budget import ledger_budget
from tui_chat.core.request.clip import fit_text
from tui_chat.core.request.render import PARAGRAPH, summary_section, summary_section_header
from tui_chat.core.tokens import TokenCounter

__all__ = ["memory_retention", "sent_memory"]


def sent_memory(
    summary: Summary,
    policy: Policy,
    usable: int,
    counter: TokenCounter,
    pinned: Iterable[int] = (),
) -> str:
    """The text a request's memory block carries for ``summary`` (summary section + ledger).

    Args:
        summary: A completed version.
        policy: The conversation's policy (its budgets resolved, as ``policy_for`` gives it).
        usable: The tokens the request is kept within (the usable window or working budget).
        counter: The token counter.
        pinned: Ids of the pinned messages (their identifiers rank first in the ledger).

    Returns:
        The summary section (cut to its budget when over it; the version's text for a server
        compaction block) and the ledger as rendered, joined as the memory block joins them.
    """
    block = summary.compaction_block is not None
    section = "" if block else summary_section(summary)
    cap = policy.summary_max_tokens + counter.count(summary_section_header(summary))
    if section and counter.count(section) > cap:
        section = fit_text(section, cap, counter)
    own = ledger_budget(policy, usable)
    sent, _ = ledger.render(
        ledger.from_json(summary.ledger),
        ledger.room(own, cap, counter.count(section)) if section else own,
        counter,
        pinned,
        already=section,
        keep=False,
    )
    carried = summary.text if block else section
    return PARAGRAPH.join(t for t in (carried, sent) if t)


def memory_retention(
    summary: Summary,
    policy: Policy,
    usable: int,
    counter: TokenCounter,
    pinned: Iterable[int] = (),
    sources: Sequence[str] | None = None,
) -> Retention:
    """Which identifiers of the covered messages the version's memory, as sent, keeps.

    Args:
        summary: A completed version.
        policy: See :func:`sent_memory`.
        usable: See :func:`sent_memory`.
        counter: The token counter.
        pinned: See :func:`sent_memory`.
        sources: The covered messages' texts, when the version's ledger is not complete (a
            chain with a version made before ledgers); ``None``: its ledger lists them all.

    Returns:
        Kept and total identifiers per kind, and those not kept.
    """
    text = sent_memory(summary, policy, usable, counter, pinned)
    if sources is None:
        return ledger.ledger_retention(ledger.from_json(summary.ledger), text)
    return ledger.retention(sources, text)
