"""The rule CI relies on: without a server the PostgreSQL tests skip with a reason, and under CI=true
such a skip is a failure."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

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


@pytest.mark.postgres
def test_a_killed_test_run_leaves_no_cluster_behind() -> None:
    """A run killed without its teardown (SIGKILL here) still has its throwaway cluster stopped and
    its folder removed, by the reaper the cluster was started with."""
    if postgres.find_bindir() is None:
        pytest.skip(postgres.SKIP_REASON)
    root = Path(__file__).resolve().parents[1]
    child = (
        "import os, signal\n"
        "from tests.support.postgres import postgres_server\n"
        "with postgres_server() as server:\n"
        "    print(server.cluster.folder, server.cluster.port, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PAPERBOT_TEST_POSTGRES_URL"}
    done = subprocess.run(
        [sys.executable, "-c", child], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    folder, port = done.stdout.split()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (Path(folder).exists() or _accepts(int(port))):
        time.sleep(0.2)
    assert not Path(folder).exists(), "the killed run's cluster folder is still there"
    assert not _accepts(int(port)), "the killed run's PostgreSQL still accepts connections"


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0
