"""Per-conversation settings: model, system prompt, preset, triggers, compression, recall,
thinking and the web tools; and the tools allowed for good, which ``delete`` revokes (at once:
approvals are not a conversation's setting, so Save and Cancel leave them be)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.validation import Integer, Number
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch, TextArea

from tui_chat.core.models import Conversation
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.engine.catalog import (
    ModelCatalog,
    ModelChoices,
    known_models,
    model_choices,
)
from tui_chat.tui.actions import bindings
from tui_chat.tui.inert_fields import InertTextArea
from tui_chat.tui.widgets.approval_list import ApprovalList, Approvals
from tui_chat.tui.widgets.reply_settings import reply_changes, reply_rows

NUMBER_FIELDS: tuple[tuple[str, str, Integer | Number], ...] = (
    ("budget", "Working budget, tokens (blank: the whole window)", Integer(minimum=1000)),
    ("threshold_tokens", "Token threshold (tokens trigger)", Integer(minimum=100)),
    ("every_turns", "Every N turns (turns trigger)", Integer(minimum=1, maximum=1000)),
    ("ratio", "Window ratio (ratio trigger, 0.1–1.0)", Number(minimum=0.1, maximum=1.0)),
    ("keep_recent", "Messages kept verbatim", Integer(minimum=0, maximum=1000)),
    ("compression_rate", "Compression rate (0.1–0.5)", Number(minimum=0.1, maximum=0.5)),
)
"""(setting key, label, validator) of the numeric fields."""

SUMMARIZERS = ["auto", "extractive", "claude-haiku-5-5", "claude-sonnet-5-5"]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


class ConversationSettings(Protocol):
    """Where a conversation's settings are read and written (``service.conversations``)."""

    def policy_for(self, conversation: Conversation) -> Policy:
        """The policy in force for a conversation with these settings."""
        ...

    async def set_setting(self, conversation_id: str, key: str, value: str) -> Conversation:
        """Validate and write one setting (raises ``SettingError``, nothing changed)."""
        ...


class SettingsSource(Protocol):
    """What the settings screen asks of the engine (a ``ChatService`` is one)."""

    @property
    def catalog(self) -> ModelCatalog:
        """The endpoint's model list (read again here when a day old)."""
        ...

    @property
    def conversations(self) -> ConversationSettings:
        """The conversations' settings."""
        ...

    @property
    def tools(self) -> Approvals:
        """The tools allowed for good (kept across sessions, for every conversation)."""
        ...


def preset_note(policy: Policy) -> str:
    """One line saying what a preset does, read from its own figures."""
    if policy.trigger == "tokens":
        when = f"after {policy.threshold_tokens:,} new tokens"
    elif policy.trigger == "turns":
        when = f"every {policy.every_turns} turns"
    elif policy.trigger == "ratio":
        when = f"at {policy.ratio:.0%} of the window"
    elif policy.trigger == "budget" and policy.budget:
        when = f"within a {policy.budget // 1000}k working budget, when it pays"
    else:
        when = f"by {policy.trigger}"
    return f"summarises {when} ({policy.strategy})"


class SettingsScreen(ModalScreen[list[str]]):
    """Edit the conversation's settings; ``ctrl+s`` saves, ``escape`` cancels.

    Every change is validated and written through the engine; an invalid one keeps the screen
    open with the engine's message. Dismisses with the keys saved (empty: nothing changed).

    Args:
        conversation: The conversation to configure.
        source: The engine.
    """

    CSS_PATH = "settings.tcss"

    BINDINGS: ClassVar[list[BindingType]] = bindings("settings")

    def __init__(self, conversation: Conversation, source: SettingsSource) -> None:
        super().__init__()
        self.conversation = conversation
        self._source = source
        self.choices: ModelChoices | None = None
        """The models offered (once the endpoint answered or failed)."""

    @property
    def policy(self) -> Policy:
        """The policy in force before editing."""
        return self._source.conversations.policy_for(self.conversation)

    def preset_policy(self, preset: str) -> Policy:
        """The policy a preset brings on its own (choosing a preset drops other settings)."""
        return self._source.conversations.policy_for(
            replace(self.conversation, settings={"preset": preset})
        )

    def compose(self) -> ComposeResult:
        """One row per setting, then Save / Cancel."""
        policy = self.policy
        with Vertical(id="settings"):
            yield Static(f"Settings — {self.conversation.title}", id="settings-title", markup=False)
            with VerticalScroll():
                with Horizontal(classes="row"):
                    yield Label("Model")
                    yield Input(
                        self.conversation.model,
                        id="model",
                        select_on_focus=False,  # focused first: typing must not replace it
                        suggester=SuggestFromList(known_models(), case_sensitive=False),
                    )
                with Horizontal(classes="row"):
                    yield Label("Pick a model")
                    yield Select(
                        [(m, m) for m in known_models()], prompt="model table", id="model-pick"
                    )
                yield Static("", id="model-note", markup=False)
                yield Label("System prompt")
                yield InertTextArea(self.conversation.system_prompt, id="system", soft_wrap=True)
                with Horizontal(classes="row"):
                    yield Label("Preset (one per seed design)")
                    yield Select(
                        [(f"{name} — {preset_note(p)}", name) for name, p in PRESETS.items()],
                        value=policy.preset,
                        allow_blank=False,
                        id="preset",
                    )
                with Horizontal(classes="row"):
                    yield Label("Trigger")
                    yield Select(
                        [(t, t) for t in ("budget", "tokens", "turns", "ratio", "cost")],
                        value=policy.trigger,
                        allow_blank=False,
                        id="trigger",
                    )
                for key, label, validator in NUMBER_FIELDS:
                    with Horizontal(classes="row"):
                        yield Label(label)
                        yield Input(
                            _text(getattr(policy, key)),
                            id=key,
                            validators=[validator],
                            valid_empty=key == "budget",
                        )
                with Horizontal(classes="row"):
                    yield Label("Strategy")
                    yield Select(
                        [(s, s) for s in ("running", "segments")],
                        value=policy.strategy,
                        allow_blank=False,
                        id="strategy",
                    )
                with Horizontal(classes="row"):
                    yield Label("Summarizer (auto, extractive, model)")
                    yield Input(
                        policy.summarizer,
                        id="summarizer",
                        suggester=SuggestFromList(SUMMARIZERS, case_sensitive=False),
                    )
                with Horizontal(classes="row"):
                    yield Label("Context window override")
                    yield Input(
                        _text(policy.context_window),
                        id="context_window",
                        placeholder="model default",
                        validators=[Integer(minimum=1000)],
                        valid_empty=True,
                    )
                with Horizontal(classes="row"):
                    yield Label("Recall from the compacted prefix")
                    yield Switch(policy.recall, id="recall")
                yield from reply_rows(policy)  # thinking, effort, web tools
                yield Label("Tools always allowed (every conversation) · delete or r revokes")
                yield ApprovalList(self._source.tools, id="approvals")
            yield Static("", id="settings-error", markup=False)
            with Horizontal(id="settings-buttons"):
                yield Button("Cancel (esc)", id="cancel")
                yield Button("Save (ctrl+s)", id="save", variant="primary")
        yield Footer()

    AUTO_FOCUS = "#model"
    """The first field has the focus (its text is not selected)."""

    def on_mount(self) -> None:
        """Ask the endpoint for its models in the background."""
        self.run_worker(self._load_models(), exit_on_error=False)

    async def _load_models(self) -> None:
        self.choices = await model_choices(self._source.catalog, self._source.catalog.info)
        pick = self.query_one("#model-pick", Select)
        # Each row: the id, its window, output limit and features (the endpoint's or the table's).
        pick.set_options([(self.choices.label(m), m) for m in self.choices.all])
        label = "endpoint + model table" if self.choices.endpoint else "model table"
        pick.prompt = label
        self.query_one("#model-note", Static).update(self.choices.problem)

    @on(Select.Changed, "#model-pick")
    def _model_picked(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#model", Input).value = event.value

    @on(Select.Changed, "#preset")
    def _preset_changed(self, event: Select.Changed) -> None:
        # A preset brings its own knobs: show them so the user edits from there.
        if not isinstance(event.value, str) or event.value == self.policy.preset:
            return
        self._show_policy(self.preset_policy(event.value))

    def _show_policy(self, policy: Policy) -> None:
        self.query_one("#trigger", Select).value = policy.trigger
        self.query_one("#strategy", Select).value = policy.strategy
        for key, _, _ in NUMBER_FIELDS:
            self.query_one(f"#{key}", Input).value = _text(getattr(policy, key))
        self.query_one("#summarizer", Input).value = policy.summarizer
        self.query_one("#context_window", Input).value = _text(policy.context_window)
        self.query_one("#recall", Switch).value = policy.recall

    def _values(self) -> dict[str, str]:
        values = {
            "trigger": str(self.query_one("#trigger", Select).value),
            "strategy": str(self.query_one("#strategy", Select).value),
            "summarizer": self.query_one("#summarizer", Input).value.strip(),
            "context_window": self.query_one("#context_window", Input).value.strip(),
            "recall": "on" if self.query_one("#recall", Switch).value else "off",
        }
        for key, _, _ in NUMBER_FIELDS:
            values[key] = self.query_one(f"#{key}", Input).value.strip()
        return values

    def changes(self) -> list[tuple[str, str]]:
        """The settings to write, in order (model, system, preset first)."""
        conversation = self.conversation
        out: list[tuple[str, str]] = []
        model = self.query_one("#model", Input).value.strip()
        if model != conversation.model:
            out.append(("model", model))
        system = self.query_one("#system", TextArea).text
        if system != conversation.system_prompt:
            out.append(("system", system))
        preset = str(self.query_one("#preset", Select).value)
        base = self.policy
        if preset != base.preset:
            out.append(("preset", preset))
            base = self.preset_policy(preset)
        for key, value in self._values().items():
            current = getattr(base, key)
            shown = "on" if current is True else "off" if current is False else _text(current)
            unset = key in ("context_window", "budget") and not value and current is None
            if value != shown and not unset:
                out.append((key, value))
        return out + reply_changes(self, self.policy)  # kept when the preset changes

    async def action_save(self) -> None:
        """Validate and write every changed setting; stay open on an error."""
        from tui_chat.engine.service import SettingError

        error = self.query_one("#settings-error", Static)
        invalid = [i.id for i in self.query(Input) if i.validators and not i.is_valid]
        if invalid:
            error.update(f"Fix the highlighted fields: {', '.join(str(i) for i in invalid)}")
            return
        changes = self.changes()
        try:
            for key, value in changes:
                self.conversation = await self._source.conversations.set_setting(
                    self.conversation.id, key, value
                )
        except SettingError as exc:
            error.update(f"{exc}")
            return
        model = dict(changes).get("model")
        if model and self.choices is not None and not self.choices.is_known(model):
            self.app.notify(
                f"{model} is in neither the model table nor the endpoint's list: saved, but "
                "the gauge guesses its window (200,000) and prices.",
                severity="warning",
                markup=False,
            )
        self.dismiss([key for key, _ in changes])

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss([])

    @on(Button.Pressed, "#save")
    async def _save_pressed(self) -> None:
        await self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()
