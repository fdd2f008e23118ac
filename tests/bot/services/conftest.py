"""Fixtures for the service tests: the bot's services over a temporary SQLite file and the bundled
corpus, called with plain arguments (no Discord)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from bot.services.registry import Services, open_services
from bot.settings import Settings

ALICE = 1500000000000000001
BOB = 1500000000000000002


@pytest.fixture
async def services(settings_factory: Callable[..., Settings]) -> AsyncIterator[Services]:
    """Services on the default test settings (page size 5)."""
    opened = await open_services(settings_factory())
    yield opened
    await opened.close()


@pytest.fixture
def corpus_ids(services: Services) -> list[str]:
    """The bundled corpus's paper ids, in corpus order."""
    return [paper.id for paper in services.context.engine.index.papers]
