"""The past-budget chat's questions asked again of a kept replay database (``past_budget.py``'s
``Job.keep``): the request side of recall measured without replaying the chat.

``python -m benchmarks.past_budget_offline DB [--conversations ...]``: evidence per category and
the misses by reason (:func:`benchmarks.past_budget_misses.why_missed`), for the engine as
it is now over the folded state the replay left.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path


async def ask(db: Path, names: Sequence[str]) -> list[str]:
    from benchmarks.cost import VirtualClock, replay_service
    from benchmarks.locomo import Tally, request_text
    from benchmarks.past_budget import _StoredAt, build_chat
    from benchmarks.past_budget_misses import why_missed
    from tui_chat.config import DEFAULT_MODEL

    chat = build_chat(None, names)
    moment = [chat.exchanges[-1].when + timedelta(minutes=5)]
    tally = Tally()
    misses: list[tuple[int, str]] = []
    recall_tokens = 0
    async with replay_service([], VirtualClock(), db, _StoredAt(moment), DEFAULT_MODEL) as (
        _,
        service,
    ):
        cid = (await service.conversations.list())[0].conversation.id
        for question, _third in chat.questions:
            built = await service.requests.context(cid, question.text)
            haystack = request_text(built.request)
            hit = all(chat.texts[e] in haystack for e in question.evidence)
            tally.add(question.category, hit, None, built.breakdown.input_tokens)
            recall_tokens += built.breakdown.sections.get("recall", 0)
            if not hit:
                misses.append(
                    (question.category, await why_missed(service, cid, chat, question, haystack))
                )
    count = max(1, len(chat.questions))
    reasons = Counter(r for _, r in misses)
    return [
        f"evidence {tally.rate:.1f} %; {tally.categories_note()}; request "
        f"{tally.mean_tokens / 1e3:.1f}k, recall {recall_tokens / count / 1e3:.1f}k",
        "misses: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--conversations", default="")
    args = parser.parse_args(argv)
    names = [n for n in args.conversations.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "copy.db"
        shutil.copyfile(args.db, db)  # the kept database stays as the replay left it
        for line in asyncio.run(ask(db, names)):
            print(line)


if __name__ == "__main__":
    main()
