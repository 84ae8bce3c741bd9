"""Validation by tables: policy settings, the config file and import files.

Each reader is a table of rules (``core.presets.RULES``, ``config._SECTIONS``/``_MODEL_KEYS``,
the import's message schema); these tests pin the exact messages a user sees for bad input.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from tui_chat.config import ConfigError, load_config
from tui_chat.core.policy import Policy
from tui_chat.core.presets import MODEL_FIELDS, RULES, PolicyError, parse_setting
from tui_chat.core.settings_check import settings_problems, usable_settings
from tui_chat.engine.transfer.transfer import ImportError_, parse_import


class TestPolicySettings:
    def test_every_policy_field_has_exactly_one_rule(self) -> None:
        assert list(RULES) == [f.name for f in fields(Policy) if f.name not in MODEL_FIELDS]

    @pytest.mark.parametrize(
        ("key", "raw", "value"),
        [
            ("trigger", " Tokens ", "tokens"),
            ("recall", "off", False),
            ("recall", True, True),
            ("budget", "none", None),
            ("budget", "20000", 20_000),
            ("ratio", 1, 1.0),
            ("summary_share", "default", None),
            ("summarizer", " offline ", "offline"),
            ("keep_recent", 3.0, 3),
        ],
    )
    def test_good_values_are_converted(self, key: str, raw: object, value: object) -> None:
        parsed = parse_setting(key, raw)
        assert parsed == value and type(parsed) is type(value)

    @pytest.mark.parametrize(
        ("key", "raw", "message"),
        [
            ("strategy", "rolling", "strategy must be one of running, segments, not 'rolling'"),
            ("recall", "maybe", "recall must be on or off, not 'maybe'"),
            ("summarizer", "  ", "summarizer must not be empty"),
            ("keep_recent", "many", "keep_recent must be a number, not 'many'"),
            ("keep_recent", True, "keep_recent must be a number, not True"),
            ("keep_recent", None, "keep_recent must be a number, not None"),
            ("keep_recent", 2.5, "keep_recent must be a whole number, not 2.5"),
            ("ratio", "nan", "ratio must be between 0.1 and 1, not 'nan'"),
            ("budget", 10, "budget must be between 1000 and 1e+07, not 10"),
        ],
    )
    def test_bad_values_say_what_a_good_one_is(self, key: str, raw: object, message: str) -> None:
        with pytest.raises(PolicyError) as caught:
            parse_setting(key, raw)
        assert str(caught.value) == message

    def test_an_unknown_key_lists_the_known_ones(self) -> None:
        with pytest.raises(
            PolicyError, match=r"^unknown setting 'windw'; known: anchor_budget_tokens, budget, "
        ):
            parse_setting("windw", 1)

    def test_a_stored_preset_that_is_not_a_name_is_a_problem_not_a_crash(self) -> None:
        # An imported or hand-edited settings object may hold any JSON as its preset: a list
        # raised TypeError (unhashable) out of the check instead of being reported.
        problems = settings_problems({"preset": ["adaptive"], "ratio": 7})
        assert problems[0].startswith("preset: unknown preset ['adaptive']; known: ")
        assert problems[1] == "ratio: ratio must be between 0.1 and 1, not 7"
        assert usable_settings({"preset": {"x": 1}, "ratio": 0.5}) == {"ratio": 0.5}


class TestConfigFile:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("[chat]\nmodel = 3\n", ":2: [chat] model: expected str, got int 3"),
            ("[api]\ntimeout = true\n", ":2: [api] timeout: expected int or float, got bool True"),
            ("[api]\napi_key = 12\n", ":2: [api] api_key: expected str, got int"),
            (
                "[api]\nmax_retries = 101\n",
                ":2: [api] max_retries: must be between 0 and 100, got 101",
            ),
            ("[api]\nproxy = 'x'\n", ":2: [api] proxy: unknown key"),
            ("[ui]\ntheme = 'x'\n", ":1: [ui] ui: unknown section"),
            ("chat = 3\n", ":1: [chat] chat: expected a [table]"),
            (
                "[compaction]\npreset = 'Hybrid'\n",
                ":2: [compaction] preset: unknown preset 'Hybrid'; known: threshold, turns, "
                "window, hybrid, session, adaptive",
            ),
            (
                "[compaction]\nrecall = 'sometimes'\n",
                ":2: [compaction] recall: recall must be on or off, not 'sometimes'",
            ),
            ("[models]\nclaude-x = 1\n", ":2: [models] claude-x: expected a table"),
            (
                "[models.claude-x]\ninput_price = 'cheap'\n",
                ":2: [models.claude-x] input_price: must be a number",
            ),
            ("[models.claude-x]\nwindow = 1\n", ":2: [models.claude-x] window: unknown key"),
        ],
    )
    def test_bad_values_name_file_line_section_key_and_why(
        self, tmp_path: Path, text: str, message: str
    ) -> None:
        path = tmp_path / "config.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            load_config(path, env={})
        assert str(caught.value) == f"{path}{message}"

    def test_good_sections_fill_the_config(self, tmp_path: Path) -> None:
        path = tmp_path / "config.toml"
        path.write_text(
            "[chat]\nmodel = 'claude-x'\n[api]\ntimeout = 30\n[storage]\ndb_path = '~/c.db'\n"
            "[compaction]\npreset = 'hybrid'\nratio = '0.5'\n"
            "[models.claude-x]\ncontext_window = 100000\nmax_output = 8000\n"
        )
        path.chmod(0o600)
        config = load_config(path, env={})
        assert config.model == "claude-x" and config.timeout == 30.0
        assert config.db_path == Path("~/c.db").expanduser()
        assert config.compaction == {"preset": "hybrid", "ratio": 0.5}
        assert config.models == {"claude-x": {"context_window": 100_000, "max_output": 8_000}}
        assert config.source == path and config.warnings == ()


def _import_file(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    return path


def _ours(messages: list[object], **conversation: object) -> dict[str, object]:
    return {
        "format": "tui-chat",
        "version": 1,
        "conversation": {"title": "T", **conversation},
        "messages": messages,
    }


class TestImportFile:
    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ([], "expected a JSON object with a 'messages' list"),
            ({"messages": []}, "'messages' must be a non-empty list"),
            ({"title": 3, "messages": [{}]}, "'title' and 'system' must be strings"),
            ({"messages": [3]}, "messages[0]: must be an object with role and content"),
            (
                {"messages": [{"role": "system", "content": "x"}]},
                "messages[0]: role must be 'user' or 'assistant', not 'system'",
            ),
            (
                {"messages": [{"role": "user", "content": 3}]},
                "messages[0].content: content must be a string or a list of content blocks",
            ),
            (
                {"messages": [{"role": "user", "content": [{"type": "video"}]}]},
                "messages[0].content[0]: unknown content block type 'video'",
            ),
            (
                {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
                "messages[0].content[0]: a tool_result block needs a string 'tool_use_id'",
            ),
            (
                _ours([{"role": "user", "content": "x", "status": "lost"}]),
                "messages[0]: unknown status 'lost'",
            ),
            (
                _ours([{"role": "user", "content": "x", "created_at": 5}]),
                "messages[0]: created_at must be a string",
            ),
            (
                _ours([{"role": "user", "content": "x"}], settings={"ratio": 9}),
                "conversation.settings: ratio: ratio must be between 0.1 and 1, not 9; "
                "nothing was imported",
            ),
        ],
    )
    def test_bad_files_say_where_and_why(self, tmp_path: Path, data: object, message: str) -> None:
        path = _import_file(tmp_path, data)
        with pytest.raises(ImportError_) as caught:
            parse_import(path)
        assert str(caught.value) == f"{path}: {message}"

    def test_a_pin_note_that_is_not_text_is_refused(self, tmp_path: Path) -> None:
        # It was stored as the pin's note as it was (a number in the anchors table).
        path = _import_file(
            tmp_path, _ours([{"role": "user", "content": "x", "pinned": True, "pin_note": 5}])
        )
        with pytest.raises(ImportError_, match=r"messages\[0\]: pin_note must be a string$"):
            parse_import(path)

    def test_a_preset_that_is_not_a_name_is_refused_with_the_rest(self, tmp_path: Path) -> None:
        # A list as the preset raised TypeError out of the import instead of saying so.
        path = _import_file(
            tmp_path, _ours([{"role": "user", "content": "x"}], settings={"preset": ["hybrid"]})
        )
        with pytest.raises(ImportError_, match=r"conversation.settings: preset: unknown preset"):
            parse_import(path)

    def test_our_export_keeps_status_pins_and_what_the_message_was(self, tmp_path: Path) -> None:
        path = _import_file(
            tmp_path,
            _ours(
                [
                    {"role": "user", "content": "q", "pinned": True, "id": 7},
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "a"}],
                        "status": "streaming",
                        "model": "m",
                        "pin_note": "not pinned",
                    },
                ],
                model="claude-x",
                settings={"preset": "hybrid"},
            ),
        )
        fields, messages = parse_import(path)
        assert fields["model"] == "claude-x" and fields["settings"] == {"preset": "hybrid"}
        assert [(m.role, m.text, m.status, m.pinned_note) for m in messages] == [
            ("user", "q", "complete", ""),
            ("assistant", "a", "incomplete", None),
        ]
        assert messages[0].exported == {"id": 7} and messages[1].exported == {"model": "m"}
