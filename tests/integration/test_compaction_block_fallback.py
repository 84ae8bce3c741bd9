"""After a server-side compaction, a send to an endpoint that refuses the version's compaction
block (an endpoint without the compaction feature) goes out
again with the version's text form, and a refusal says why, not "probably a bug"."""

from __future__ import annotations

import json

import pytest

import tests.fakes.fake_anthropic as fake_module
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_summary_cost import Make, chats, open_chat, talk


async def test_a_refused_compaction_block_falls_back_to_the_versions_text(
    make_service: Make, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, cid = await open_chat(
        make_service, preset="window", summarizer="server", keep_recent="2"
    )
    await talk(service, cid, range(1, 5))
    version = await service.summaries.compact(cid)
    assert version.compaction_block is not None
    # Now the endpoint is another one: it cannot verify the block, and has no compaction.
    refusal = "messages.0.content.0: Input tag 'compaction' does not match any expected tag"
    monkeypatch.setattr(
        fake_module,
        "check_compaction_blocks",
        lambda messages, *_: refusal if "compaction" in json.dumps(messages) else None,
    )
    fake_anthropic.compaction_endpoint = False
    sent = len(chats(fake_anthropic))
    outcome = await service.send(cid, "and the next step?")
    assert outcome.error is None, outcome.error  # before: 400 "…probably a bug…"
    tried = chats(fake_anthropic)[sent:]
    assert len(tried) == 2  # the block refused once, then the text form
    assert "compaction" in json.dumps(tried[0].body["messages"][0])
    last = tried[1].body
    assert "compaction" not in json.dumps(last["messages"])
    assert version.text.split("\n")[0][:30] in json.dumps(last["system"])
    assert outcome.notice is not None and "refused the compaction block" in outcome.notice
    notes = outcome.request.breakdown.warnings
    assert any("text form" in n and f"v{version.version}" in n for n in notes), notes
    tried_before = len(chats(fake_anthropic))
    again = await service.send(cid, "one more")  # remembered: no refused request first
    assert again.error is None
    assert len(chats(fake_anthropic)) == tried_before + 1
