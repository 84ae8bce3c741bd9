"""Branches within a conversation through the real TUI: an edit is a
sibling in the same list entry, ‹ n/m › on the prompt where they part, ``[`` / ``]`` switch in
place (focus and composer text stay), and the next request follows the path on screen."""

from __future__ import annotations

from textual.widgets import Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.notified import raised
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, settle, until
from tui_chat.core.models import Conversation
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.context_preview import ContextPreviewScreen
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.conversation_list import ConversationList, family_rows
from tui_chat.tui.widgets.sibling_switch import SiblingSwitch


async def _trip(service: ChatService, texts: list[str]) -> Conversation:
    conversation = await service.conversations.new()
    for i, text in enumerate(texts):
        await engine_of(service).store.messages.add(
            conversation.id,
            role="user" if i % 2 == 0 else "assistant",
            content=[{"type": "text", "text": text}],
            text=text,
            token_count=4,
        )
    return await service.conversations.rename(conversation.id, "Trip")


def _user_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    texts = []
    for message in messages:
        if message["role"] == "user":
            blocks = message["content"]
            text = blocks if isinstance(blocks, str) else blocks[-1]["text"]
            texts.append(text)
    return texts


async def test_an_edit_is_a_sibling_switched_in_place(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    service = keyed_service
    parent = await _trip(service, ["where to go?", "Lisbon.", "and when?", "In May."])
    stored = await service.messages.history(parent.id)
    app = make_app(service, parent.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chat = app.query_one(ChatPane)
        bar = app.query_one(SiblingSwitch)
        assert not bar.display  # one branch: no bar
        await pilot.press("f5", "up")  # the prompt "and when?"
        await pilot.press("e")
        await until(pilot, lambda: screen.composer.text == "and when?")
        screen.composer.load_text("and in which season?")
        await pilot.press("enter")
        await until(pilot, lambda: screen.conversation_id != parent.id)
        await settle(pilot)
        fork_id = screen.conversation_id
        assert fork_id is not None
        forked = await service.messages.history(fork_id)
        edited = forked[2]
        assert edited.text == "and in which season?"

        # One list entry for both branches: it opens the one on screen, says it has two.
        await until(pilot, lambda: bar.path is not None and bar.path.branch.id == fork_id)
        await until(pilot, lambda: len(bar.path.points) == 1)  # type: ignore[union-attr]
        listed = app.query_one(ConversationList)
        assert [i.conversation.id for i in listed.conversations] == [fork_id]
        assert listed.options.option_count == 0  # hidden: its rows are built as it opens
        screen.panels.open("conversations")
        await until(pilot, lambda: listed.options.option_count == 1)
        entry = str(listed.options.get_option_at_index(0).prompt)
        assert "Trip" in entry and "(edited)" not in entry and "⑂2" in entry
        # ‹ 2/2 › on the edited prompt, and the bar.
        view = chat.view_for(edited.id)
        assert view is not None and view.branch_mark == "‹ 2/2 ›"
        assert "‹ 2/2 ›" in str(view.query_one(".header").visual)
        assert bar.display and f"‹ 2/2 › #{edited.id}" in str(bar.visual)

        # [ shows the original in place: same place, the focus and the text typed stay.
        screen.composer.load_text("a draft that stays")
        await pilot.press("f5")
        await until(pilot, lambda: chat.navigating)
        chat.selected = edited.id
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: screen.conversation_id == parent.id)
        await until(pilot, lambda: chat.selected == stored[2].id)
        await until(pilot, lambda: bar.path is not None and bar.path.branch.id == parent.id)
        await until(pilot, lambda: chat.view_for(stored[2].id) is not None)
        original = chat.view_for(stored[2].id)
        assert original is not None
        await until(pilot, lambda: original.branch_mark == "‹ 1/2 ›")
        assert app.focused is chat and chat.navigating
        assert screen.composer.text == "a draft that stays"
        assert [i.conversation.id for i in listed.conversations] == [parent.id]
        assert (await service.branches.family(parent.id)).visible_id == parent.id

        # The next send follows the path on screen (the original), as `context` builds it.
        await pilot.press("i")
        screen.composer.load_text("and how long?")
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_anthropic.bodies) == 2)
        await settle(pilot)
        body = fake_anthropic.bodies[-1]
        assert _user_texts(body) == ["where to go?", "and when?", "and how long?"]
        built = await service.requests.context(parent.id, None)
        sent_before = body["messages"][:-1]
        assert built.request["messages"][: len(sent_before)] == sent_before

        # ] goes back to the edited branch, still at its prompt.
        await pilot.press("f5")
        await until(pilot, lambda: chat.navigating)
        chat.selected = stored[2].id
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: screen.conversation_id == fork_id)
        await until(pilot, lambda: chat.selected == edited.id)
        assert (await service.branches.family(parent.id)).visible_id == fork_id

        # The context preview says which path the next request sends.
        await pilot.press("ctrl+o")
        await on_screen(pilot, ContextPreviewScreen)
        shown_path = str(app.screen.query_one("#preview-path", Static).visual)
        assert "branch 2 of 2" in shown_path and f"‹ 2/2 › at #{edited.id}" in shown_path


async def test_the_palette_switches_and_a_lone_conversation_has_no_versions(
    service: ChatService,
) -> None:
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await app.run_action("switch_version(1)")
        await until(pilot, lambda: any("No other version" in n.message for n in raised(app)))
        assert screen.conversation_id == conversation.id


def test_family_rows_one_entry_per_family() -> None:
    from tui_chat.core.models import Conversation, ConversationInfo

    def info(cid: str, created: str, updated: str) -> ConversationInfo:
        return ConversationInfo(Conversation(cid, cid.upper(), "m", "", {}, created, updated), 3, 9)

    newest_first = [
        info("edit", "2026-01-03", "2026-01-05"),
        info("other", "2026-01-01", "2026-01-04"),
        info("root", "2026-01-01", "2026-01-02"),
        info("orphan", "2026-01-02", "2026-01-02"),
    ]
    members = {"edit": "root", "orphan": "gone"}
    rows = family_rows(newest_first, (members, {"root": "root"}), None)
    assert [(r.info.conversation.id, r.title, r.branches) for r in rows] == [
        ("root", "ROOT", 2),
        ("other", "OTHER", 1),
        ("orphan", "ORPHAN", 1),
    ]
    assert rows[0].updated_at == "2026-01-05" and rows[0].title_id == "root"
    # The branch on screen is the one its entry opens.
    assert family_rows(newest_first, (members, {}), "edit")[0].info.conversation.id == "edit"


async def test_deleting_the_branch_on_screen_opens_another_branch(service: ChatService) -> None:
    other = await _trip(service, ["elsewhere", "ok"])  # the newest conversation, not a branch
    parent = await _trip(service, ["where to go?", "Lisbon.", "and when?", "In May."])
    stored = await service.messages.history(parent.id)
    edit, _ = await service.branches.fork_for_edit(stored[2].id)
    await engine_of(service).store.messages.add(
        edit.id, role="user", content=[{"type": "text", "text": "x"}], text="x", token_count=1
    )
    await service.conversations.rename(other.id, "Other")  # the latest activity
    app = make_app(service, edit.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.conversation_commands.action_delete()
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm")
        await pilot.press("y")
        await until(pilot, lambda: screen.conversation_id == parent.id)
        listed = app.query_one(ConversationList)
        # The list held two rows before too (the family shows the branch on screen): wait
        # for the rows after the delete, not for their count.
        expected = {parent.id, other.id}
        await until(pilot, lambda: {i.conversation.id for i in listed.conversations} == expected)


async def test_a_search_hit_opens_the_branch_it_is_in(service: ChatService) -> None:
    parent = await _trip(service, ["where to go?", "Lisbon.", "and when?", "In May."])
    stored = await service.messages.history(parent.id)
    edit, _ = await service.branches.fork_for_edit(stored[2].id)
    own = await engine_of(service).store.messages.add(
        edit.id,
        role="user",
        content=[{"type": "text", "text": "which zanzibarish season?"}],
        text="which zanzibarish season?",
        token_count=5,
    )
    app = make_app(service, parent.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+f", *"zanzibarish", "enter")
        search = app.screen
        await until(pilot, lambda: bool(getattr(search, "hits", None)))
        await pilot.press("down", "enter")
        await until(pilot, lambda: screen.conversation_id == edit.id)
        await until(pilot, lambda: screen.chat.selected == own.id)
        bar = app.query_one(SiblingSwitch)
        await until(pilot, lambda: bar.path is not None and bar.path.branch.id == edit.id)
        assert (await service.branches.family(parent.id)).visible_id == edit.id


async def test_starting_opens_the_branch_last_viewed(service: ChatService) -> None:
    parent = await _trip(service, ["where to go?", "Lisbon.", "and when?", "In May."])
    stored = await service.messages.history(parent.id)
    edit, _ = await service.branches.fork_for_edit(stored[2].id)
    await engine_of(service).store.messages.add(
        edit.id, role="user", content=[{"type": "text", "text": "x"}], text="x", token_count=1
    )
    await service.branches.switch(edit.id, parent.id)  # the edit is the latest active
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.conversation_id == parent.id
