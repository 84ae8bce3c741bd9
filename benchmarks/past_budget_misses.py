"""The past-budget chat's per-request recall tokens and each missed question's reason
(``benchmarks/past_budget_explain.py`` prints them).

Reasons: the evidence turn is still raw (in the request yet missed: a layout bug), not found
by recall's search at all (``search``), found but below the relevance floor (``floor``), above
it but ranked past the 6k maximum (``ranked out``), within the maximum but past this
request's cap (``capped``), or outside recall and only said in the summary (``summary``).
"""

from __future__ import annotations

from typing import Any

from benchmarks.locomo import Question, normalise


def recalled_tokens(request: Any) -> int:
    """Tokens of the recalled passages (``search_result`` blocks) a request carried."""
    from tui_chat.core.tokens import get_counter

    messages = request.body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return 0
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return 0
    found = [b for b in content if isinstance(b, dict) and b.get("type") == "search_result"]
    return get_counter().count_content(found) if found else 0


async def why_missed(service: Any, cid: str, chat: Any, question: Question, haystack: str) -> str:
    """Why ``question``'s evidence is not in its request (module doc), for the first evidence
    turn it lacks."""
    from tui_chat.core.request.recall_cost import RELEVANCE_FLOOR
    from tui_chat.core.request.recall_need import need_weight
    from tui_chat.engine.build import need, recall

    engine = service._engine
    store = engine.store
    summary = await store.summaries.active(cid)
    coverage = summary.covers_to_message_id if summary else 0
    lacking = [e for e in question.evidence if chat.texts[e] not in haystack]
    wanted = chat.texts[lacking[0]]
    ids = await store.messages.ids(cid)
    messages = await store.messages.get_many(ids)
    holder = next((m for m in messages if wanted in normalise(m.text)), None)
    if holder is None:
        return "not stored"
    if holder.id > coverage:
        return "raw"
    counter = engine.counter
    passages = await recall(store, cid, question.text, coverage, counter, None)
    raw_texts = [m.text for m in messages if m.id > coverage][-20:]
    needed = await need(store, cid, question.text, raw_texts, coverage)
    floor = RELEVANCE_FLOOR * (1.0 - need_weight(needed))
    spent = 0
    for passage in passages:
        if passage.relevance < floor:
            if passage.message.id == holder.id and wanted in normalise(passage.text):
                return "floor"
            continue
        spent += counter.count(passage.text) + 8
        if passage.message.id == holder.id and wanted in normalise(passage.text):
            return "capped" if spent <= 6_000 else "ranked out"
    if summary is not None and wanted in normalise(summary.text or ""):
        return "summary"
    return "search"
