"""Config values out of range are refused with file, key and line; an exposed api_key warns."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_chat.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("text", "section", "key", "line"),
    [
        ("[api]\ntimeout = 0\n", "api", "timeout", 2),
        ("[api]\ntimeout = -3.5\n", "api", "timeout", 2),
        ("[api]\ntimeout = nan\n", "api", "timeout", 2),
        ("[api]\ntimeout = inf\n", "api", "timeout", 2),
        ("[api]\nmax_retries = -5\n", "api", "max_retries", 2),
        ("[api]\nmax_retries = 100000\n", "api", "max_retries", 2),
        ("# x\n[api]\nbase_url = 'localhost:4000'\n", "api", "base_url", 3),
        ("[api]\nbase_url = 'https://'\n", "api", "base_url", 2),
        ("[chat]\nmodel = '  '\n", "chat", "model", 2),
        ("[storage]\ndb_path = ''\n", "storage", "db_path", 2),
        ("[models.claude-x]\ncontext_window = 0\n", "models.claude-x", "context_window", 2),
        ("[models.claude-x]\ninput_price = -1\n", "models.claude-x", "input_price", 2),
        ("[models.claude-x]\nmax_output = 1.5\n", "models.claude-x", "max_output", 2),
        (
            "[models.claude-x]\ncontext_window = 1000\nmax_output = 4000\n",
            "models.claude-x",
            "max_output",
            3,
        ),
    ],
)
def test_out_of_range_values_name_file_key_and_line(
    tmp_path: Path, text: str, section: str, key: str, line: int
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path, env={})
    assert str(raised.value).startswith(f"{path}:{line}: [{section}] {key}: "), raised.value


def test_values_in_range_load(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[api]\ntimeout = 0.5\nmax_retries = 0\nbase_url = 'http://127.0.0.1:8080/v1'\n"
        "[models.claude-x]\ncontext_window = 100000\nmax_output = 4000\ninput_price = 0\n"
    )
    config = load_config(path, env={})
    assert config.timeout == 0.5 and config.max_retries == 0
    assert config.base_url == "http://127.0.0.1:8080/v1"
    assert config.models["claude-x"]["context_window"] == 100000
    assert config.warnings == ()


@pytest.mark.parametrize(("mode", "warned"), [(0o644, True), (0o640, True), (0o600, False)])
def test_api_key_in_a_file_others_can_read_warns(tmp_path: Path, mode: int, warned: bool) -> None:
    secret = "plain-secret-0123456789abcdef"
    path = tmp_path / "config.toml"
    path.write_text(f"[api]\napi_key = '{secret}'\n")
    path.chmod(mode)
    config = load_config(path, env={})
    assert config.api_key == secret
    if warned:
        (warning,) = config.warnings
        assert str(path) in warning and f"{mode:04o}" in warning and "chmod 600" in warning
        assert secret not in warning
    else:
        assert config.warnings == ()


def test_readable_config_without_api_key_does_not_warn(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[api]\ntimeout = 30\n")
    path.chmod(0o644)
    assert load_config(path, env={"ANTHROPIC_API_KEY": "from-env"}).warnings == ()
