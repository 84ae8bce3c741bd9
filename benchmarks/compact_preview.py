"""Does the compact preview warn before a manual compact drops what a question needs?

Each LoCoMo conversation is imported with every default (the model's own window), and each of
its questions is taken as the draft: the exact next request is read
(``service.requests.context``) and the preview made (``service.summaries.preview``) before the
compact; then the conversation is compacted once (offline extractive summarizer) and each
question's request read again. A question's evidence is *lost* when a turn of it is in the
request before and not after. Counted: lost and warned (the preview warned: it named a message,
or the question gathers and most of what it reads would leave), lost and
silent, warned with nothing lost, and how many folded messages the preview says drop out.
``python -m benchmarks.compact_preview [conv-30,…]``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.locomo import Dialogue, export_file, load_dialogue, normalise, request_text


@dataclass
class Counts:
    """One conversation's outcome."""

    name: str
    questions: int = 0
    lost_warned: int = 0
    lost_silent: int = 0
    warned_needlessly: int = 0
    dropped: int = 0
    """The mean number of folded messages the preview said drop out of a question's request."""
    share: tuple[float, float] = (0.0, 0.0)
    """The least and most share of the folded messages a question's request carries that drop."""


async def measure(dialogue: Dialogue, work: Path) -> Counts:
    """The counts for one dialogue (see the module doc)."""
    from benchmarks.quality_research import patch_presets
    from benchmarks.quality_rows import open_service

    patch_presets()
    service = await open_service(work / f"{dialogue.name}-preview.db")
    counts = Counts(dialogue.name, len(dialogue.questions))
    try:
        source = export_file(dialogue, work / f"{dialogue.name}.json")
        cid = (await service.transfer.import_file(source)).id
        await service.conversations.set_setting(cid, "summarizer", "extractive")
        texts = {t.dia_id: normalise(t.original) for t in dialogue.turns}
        before, warned, dropped, shares = [], [], 0, []
        for question in dialogue.questions:
            built = await service.requests.context(cid, question.text)
            before.append(request_text(built.request))
            found = await service.summaries.preview(cid, question.text)
            warned.append(found.warning is not None)
            shares.append(found.dropped / max(1, found.carried))
            dropped += found.dropped
        counts.dropped = dropped // max(1, len(dialogue.questions))
        counts.share = min(shares, default=0.0), max(shares, default=0.0)
        await service.summaries.compact(cid)
        for i, question in enumerate(dialogue.questions):
            after = request_text((await service.requests.context(cid, question.text)).request)
            lost = any(texts[e] in before[i] and texts[e] not in after for e in question.evidence)
            if lost and warned[i]:
                counts.lost_warned += 1
            elif lost:
                counts.lost_silent += 1
            elif warned[i]:
                counts.warned_needlessly += 1
    finally:
        await service.close()
    return counts


def main(argv: list[str]) -> None:
    """Print one line per conversation."""
    from benchmarks.quality import LOCOMO_DIR

    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if argv:
        paths = [p for p in paths if p.stem in argv[0].split(",")]
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            c = asyncio.run(measure(load_dialogue(path), Path(tmp)))
        print(
            f"{c.name}: {c.questions} questions; evidence lost and warned {c.lost_warned}, "
            f"lost and silent {c.lost_silent}; warned with nothing lost {c.warned_needlessly}; "
            f"a mean {c.dropped} folded messages drop out of a question's request "
            f"({c.share[0]:.0%}-{c.share[1]:.0%} of those it carries)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
