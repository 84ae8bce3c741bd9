"""The model picker's lists: the model table and the endpoint's ``GET /v1/models``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tests.fake_anthropic import FakeAnthropic
from tui_chat.engine.catalog import model_choices
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


async def test_choices_list_the_endpoint_models_then_the_table(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    choices = await model_choices(service.client)
    assert choices.endpoint == ["claude-sonnet-4-6", "claude-haiku-4-5", "gateway-llama"]
    assert choices.all[:3] == choices.endpoint and "claude-opus-4-6" in choices.all
    assert choices.is_known("gateway-llama") and choices.is_known("claude-opus-4-6-20260101")
    assert not choices.is_known("my-own-model")
    fake_anthropic.models = None
    missing = await model_choices(service.client)
    assert missing.endpoint == [] and "unavailable" in missing.problem
    assert missing.table == choices.table
    offline = await model_choices((await make_service(api_key=None)).client)
    assert offline.endpoint == [] and "no API key" in offline.problem
