"""Fixtures for the bot tests: a real PaperBot on a fake Discord, and checks of everything it sent.

For test authors (see also tests/support/fake_discord.py)::

    async def test_something(harness):                  # started bot, temp SQLite, bundled corpus
        ex = await harness.run_command("search", {"query": "reward models"})
        assert ex.callback_type == 4 and ex.ephemeral
        ex = await harness.click(ex.message, ex.custom_id(label="Next"))

    async def test_custom(make_harness):                # other settings / owner
        h = await make_harness(cooldown_rate=1, admin_user_ids=frozenset({42 * 10**15}))

    def test_plain(settings_factory):                   # a Settings on temp paths, no bot
        settings = settings_factory(page_size=3)

After every test, each request any FakeDiscord recorded is validated against Discord's OpenAPI spec and
the extra limits (tests/bot/openapi_check.py), every injected interaction must have got exactly one
callback, and any ERROR record on the ``discord`` logger fails the test. Opt out per test with
``@pytest.mark.allow_discord_errors`` (log records) or ``@pytest.mark.unchecked_callbacks``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.settings import PROJECT_ROOT, Settings
from bot.ui import admin as admin_ui
from tests.bot import openapi_check
from tests.support.fake_discord import FakeDiscord, Harness

CORPUS = PROJECT_ROOT / "data" / "corpus"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "allow_discord_errors: ERROR records on the discord logger are expected"
    )
    config.addinivalue_line(
        "markers", "product_intervals: keep the product's throttle intervals (see _short_intervals)"
    )
    config.addinivalue_line(
        "markers", "unchecked_callbacks: do not require exactly one callback per interaction"
    )


#: The reindex progress message's minimum gap between edits in tests. The product's (1 s, Discord's
#: rate limits) made every reindex through Discord wait it out before its final edit; only the test of
#: the throttle itself needs it (``@pytest.mark.product_intervals``).
TEST_PROGRESS_EDIT_INTERVAL = 0.05


@pytest.fixture(autouse=True)
def _short_intervals(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("product_intervals") is None:
        monkeypatch.setattr(admin_ui, "PROGRESS_EDIT_INTERVAL", TEST_PROGRESS_EDIT_INTERVAL)


@pytest.fixture(scope="session")
def index_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index cache for the session, so the bundled corpus is built once."""
    return tmp_path_factory.mktemp("index-cache")


@pytest.fixture
def settings_factory(tmp_path: Path, index_cache_dir: Path) -> Callable[..., Settings]:
    """``settings_factory(**fields)``: Settings on a temp database and the bundled corpus."""

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "corpus_path": CORPUS,
            "database_path": tmp_path / "paperbot.db",
            "index_cache_dir": index_cache_dir,
            "cooldown_rate": 1000,  # tests of the cooldown set their own
            "cooldown_per": 30.0,
            "view_timeout": 600.0,
        }
        values.update(overrides)
        return dataclasses.replace(Settings(), **values)

    return make


@pytest.fixture
async def make_harness(
    settings_factory: Callable[..., Settings],
) -> AsyncIterator[Callable[..., Awaitable[Harness]]]:
    """``await make_harness(owner_id=..., **settings_fields)``: a started harness, closed after the test."""
    started: list[Harness] = []

    async def make(
        *, owner_id: int | None = None, settings: Settings | None = None, **overrides: Any
    ) -> Harness:
        options: dict[str, Any] = {}
        if owner_id is not None:
            options["owner_id"] = owner_id
        harness = await Harness.start(settings or settings_factory(**overrides), **options)
        started.append(harness)
        return harness

    yield make
    for harness in reversed(started):
        await harness.close()


@pytest.fixture
async def harness(make_harness: Callable[..., Awaitable[Harness]]) -> Harness:
    """A started bot with default test settings."""
    return await make_harness()


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def _check_discord_traffic(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Validate every request every FakeDiscord of the test recorded; fail on discord ERROR logs."""
    fakes: list[FakeDiscord] = []
    original_start = FakeDiscord.start

    async def tracking_start(self: FakeDiscord) -> FakeDiscord:
        fakes.append(self)
        return await original_start(self)

    monkeypatch.setattr(FakeDiscord, "start", tracking_start)
    collector = _Collector()
    discord_logger = logging.getLogger("discord")
    discord_logger.addHandler(collector)
    try:
        yield
    finally:
        discord_logger.removeHandler(collector)
    problems: list[str] = []
    for fake in fakes:
        types = {i: record.type for i, record in fake.interactions.items()}
        problems += openapi_check.all_problems(fake.requests, types)
        if request.node.get_closest_marker("unchecked_callbacks") is None:
            for record in fake.interactions.values():
                if record.callbacks != 1:
                    problems.append(
                        f"interaction {record.id} (type {record.type}) got {record.callbacks} callbacks"
                    )
    if collector.records and request.node.get_closest_marker("allow_discord_errors") is None:
        problems += [f"discord logged ERROR: {r.getMessage()}" for r in collector.records]
    if problems:
        pytest.fail("Discord traffic problems:\n  " + "\n  ".join(problems[:40]), pytrace=False)
