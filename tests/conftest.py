"""Session-wide test machinery: the PostgreSQL server (tests/support/postgres.py) and the CI rule
that none of its tests may be skipped there. Mark a test ``@pytest.mark.postgres`` when it needs one;
the ``store_target`` fixture gives every store test both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import (
    SKIP_REASON,
    PostgresServer,
    fail_skips_under_ci,
    fresh_database,
    postgres_server,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "postgres: needs a PostgreSQL server (skips without one, fails under CI=true)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    fail_skips_under_ci(item, outcome.get_result())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which checks the run skipped because ../shared is missing, and why (not a warning only)."""
    import sys

    from tests.support.shared import skipped_checks

    openapi = sys.modules.get("tests.bot.openapi_check")
    unchecked = openapi.UNCHECKED["requests"] if openapi is not None else 0
    spec = openapi.SPEC_PATH if openapi is not None else Path()
    lines = skipped_checks(terminalreporter.stats.get("skipped", []), unchecked, spec)
    if lines:
        terminalreporter.write_sep("=", "checks skipped: ../shared is missing")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer | None]:
    with postgres_server() as server:
        yield server


@pytest.fixture
def postgres_url(pg_server: PostgresServer | None) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test (its URL)."""
    if pg_server is None:
        pytest.skip(SKIP_REASON)
    yield from fresh_database(pg_server)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    """What ``Store.open`` takes, once per backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield tmp_path / "data" / "saved.db"
    else:
        yield request.getfixturevalue("postgres_url")
