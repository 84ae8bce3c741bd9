"""The model table: current models, each priced on its own card, every row with its source."""

from __future__ import annotations

import pytest

from tui_chat.core.models import Usage
from tui_chat.core.prices import FALLBACK_PRICES
from tui_chat.llm.model_table import ROWS
from tui_chat.llm.models import cost_usd, known_models, model_info
from tui_chat.store.usage import PROMPT_SPLITS

M = 1_000_000


def test_every_row_names_its_source_page_and_date() -> None:
    for model, row in ROWS.items():
        source = row.prices.source
        assert "/" in source and "20" in source, model  # a docs page and a year
        assert row.max_output < row.window


def test_current_models_and_their_cards() -> None:
    for model in ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-2"):
        info = model_info(model)
        assert info.known and info.priced, model
        assert (info.context_window, info.max_output) == (1_000_000, 128_000)
        assert info.tokenizer == 2
    sonnet = model_info("claude-sonnet-5-5").prices
    assert (sonnet.base.input, sonnet.base.output) == (2.0, 10.0)
    assert sonnet.read_ratio == pytest.approx(0.05)
    assert model_info("claude-opus-5-5").prices.read_ratio == pytest.approx(0.05)
    assert model_info("claude-fable-5-1").prices.read_ratio == pytest.approx(0.025)
    assert model_info("claude-fable-5-2").prices.read_ratio == pytest.approx(0.025)
    assert model_info("claude-opus-5").prices.read_ratio == pytest.approx(0.1)
    assert model_info("claude-haiku-4-5").tokenizer == 1
    assert model_info("claude-opus-4-7").tokenizer == 2
    assert "claude-sonnet-5-5" in known_models()


def test_a_cache_read_costs_the_models_own_multiplier() -> None:
    reads = Usage(cache_read_input_tokens=M)
    assert cost_usd(model_info("claude-sonnet-5-5"), reads) == pytest.approx(0.10)
    assert cost_usd(model_info("claude-sonnet-5"), reads) == pytest.approx(0.20)
    assert cost_usd(model_info("claude-opus-5-5"), reads) == pytest.approx(0.20)
    assert cost_usd(model_info("claude-fable-5-1"), reads) == pytest.approx(0.25)
    writes = Usage(cache_creation_input_tokens=M, cache_creation_1h_input_tokens=M // 2)
    assert cost_usd(model_info("claude-opus-5-5"), writes) == pytest.approx(0.5 * 5 + 0.5 * 8)


def test_haiku_5_5_long_prompts_pay_the_higher_tier_on_every_token() -> None:
    haiku = model_info("claude-haiku-5-5")
    short = Usage(input_tokens=100_000, output_tokens=M)
    assert cost_usd(haiku, short) == pytest.approx(0.01 + 0.50)
    long = Usage(input_tokens=60_000, cache_read_input_tokens=40_001, output_tokens=M)
    assert cost_usd(haiku, long) == pytest.approx(0.06 * 0.5 + 0.040001 * 0.05 + 2.50)
    # A sum of long replies is priced at the tier its least prompt names.
    assert cost_usd(haiku, short, prompt_tokens=100_001) == pytest.approx(0.05 + 2.50)


def test_fast_mode_is_priced_from_usage_speed() -> None:
    opus = model_info("claude-opus-5-5")
    standard = Usage(input_tokens=M, output_tokens=M, speed="standard")
    fast = Usage(input_tokens=M, output_tokens=M, speed="fast")
    assert cost_usd(opus, standard) == pytest.approx(24.0)
    assert cost_usd(opus, fast) == pytest.approx(48.0)
    # A model without fast mode is billed at its standard rates whatever the reply says.
    assert cost_usd(model_info("claude-sonnet-5-5"), fast) == pytest.approx(12.0)


def test_an_unknown_model_is_priced_high_never_free_and_says_so() -> None:
    unknown = model_info("claude-someday-9")
    assert not unknown.known and not unknown.priced
    assert unknown.prices == FALLBACK_PRICES
    assert cost_usd(unknown, Usage(input_tokens=M, output_tokens=M)) == pytest.approx(60.0)
    configured = model_info("claude-someday-9", {"input_price": 1.0, "output_price": 2.0})
    assert configured.priced and configured.prices.read_ratio == pytest.approx(0.1)


def test_configured_prices_keep_the_models_cache_multipliers() -> None:
    info = model_info("claude-opus-5-5", {"input_price": 10.0})
    assert info.prices.base.read == pytest.approx(0.5)  # 0.05x of the configured input
    assert info.prices.base.write_1h == pytest.approx(20.0)


def test_the_usage_sums_split_at_every_long_prompt_threshold_of_the_table() -> None:
    thresholds = {r.prices.long_threshold for r in ROWS.values()} - {None}
    assert thresholds <= set(PROMPT_SPLITS)
