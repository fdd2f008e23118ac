"""The rule CI relies on: without a server the PostgreSQL tests skip with a reason, and under CI=true
such a skip is a failure."""

from __future__ import annotations

from types import SimpleNamespace

from tests.support import postgres


def report(outcome: str) -> SimpleNamespace:
    return SimpleNamespace(skipped=outcome == "skipped", outcome=outcome, longrepr="(skip reason)")


def test_a_skipped_postgres_test_fails_under_ci(monkeypatch) -> None:
    item = SimpleNamespace(keywords={"postgres": True})
    monkeypatch.setenv("CI", "true")
    skipped = report("skipped")
    postgres.fail_skips_under_ci(item, skipped)
    assert skipped.outcome == "failed" and "CI=true" in skipped.longrepr
    monkeypatch.setenv("CI", "")
    skipped = report("skipped")
    postgres.fail_skips_under_ci(item, skipped)
    assert skipped.outcome == "skipped"
    other = SimpleNamespace(keywords={})
    monkeypatch.setenv("CI", "true")
    skipped = report("skipped")
    postgres.fail_skips_under_ci(other, skipped)
    assert skipped.outcome == "skipped"  # only PostgreSQL tests are held to it


def test_without_binaries_or_url_there_is_no_server(monkeypatch) -> None:
    monkeypatch.delenv("PAPERBOT_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setattr(postgres, "find_bindir", lambda: None)
    with postgres.postgres_server() as server:
        assert server is None
    assert "PAPERBOT_TEST_POSTGRES_URL" in postgres.SKIP_REASON
