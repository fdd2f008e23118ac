"""Session-wide test machinery: the PostgreSQL server (tests/support/postgres.py) and the CI rule
that none of its tests may be skipped there. Mark a test ``@pytest.mark.postgres`` when it needs one;
the ``store_target`` fixture gives every store test both backends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.store import postgres as postgres_store
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


def _unchecked_requests() -> tuple[int, Path]:
    """Requests this process did not validate against Discord's API description, and its path."""
    openapi = sys.modules.get("tests.bot.openapi_check")
    if openapi is None:
        return 0, Path()
    return openapi.UNCHECKED["requests"], openapi.SPEC_PATH


#: What the xdist workers' processes counted, added up by the controller (pytest_testnodedown).
_WORKERS_UNCHECKED: dict[str, object] = {"requests": 0, "spec": None}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In an xdist worker: hand this process's count to the controller, which prints the summary."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        count, spec = _unchecked_requests()
        output["unchecked_requests"], output["openapi_spec"] = count, str(spec)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    output = getattr(node, "workeroutput", None) or {}
    _WORKERS_UNCHECKED["requests"] += output.get("unchecked_requests", 0)
    if output.get("unchecked_requests"):
        _WORKERS_UNCHECKED["spec"] = Path(output["openapi_spec"])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which checks the run skipped because ../shared is missing, and why (not a warning only)."""
    from tests.support.shared import skipped_checks

    unchecked, spec = _unchecked_requests()
    unchecked += _WORKERS_UNCHECKED["requests"]
    spec = _WORKERS_UNCHECKED["spec"] or spec
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
def postgres_url(pg_server: PostgresServer | None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test (its URL).

    The store's pauses between retries of a failed statement are a tenth of the product's here: the
    outage tests wait out every retry while the server is down (1.75 s per statement with the
    product's), and what they check is the number of attempts and what the caller is told."""
    if pg_server is None:
        pytest.skip(SKIP_REASON)
    monkeypatch.setattr(postgres_store, "_BACKOFF", tuple(pause / 10 for pause in postgres_store._BACKOFF))
    yield from fresh_database(pg_server)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    """What ``open_store`` takes, once per backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield tmp_path / "data" / "saved.db"
    else:
        yield request.getfixturevalue("postgres_url")
