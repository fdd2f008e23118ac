"""Issue 30 item 9: without ../shared (the shared data folder beside the project), the test run's
summary says which checks were skipped and why (it was a UserWarning only, easy to miss)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.support.shared import SHARED, skipped_checks


def skipped(reason: str) -> SimpleNamespace:
    return SimpleNamespace(longrepr=("tests/x.py", 3, f"Skipped: {reason}"))


def test_the_summary_names_each_check_skipped_for_want_of_shared():
    reports = [
        skipped("no ../shared/corpora"),
        skipped("no ../shared/corpora"),
        skipped(f"no {SHARED / 'corpora' / 'iclr2024' / 'abstracts.txt'}"),
        skipped("PR_SET_PDEATHSIG is Linux's"),  # not about ../shared: not listed
    ]
    lines = skipped_checks(reports, 12, Path("/nowhere/openapi.json"))
    assert lines[0].startswith("Discord's API description was not found at /nowhere/openapi.json: 12 ")
    assert "checked against Discord's limits only" in lines[0]
    assert "2 tests skipped: no ../shared/corpora" in lines
    assert any(line.startswith("1 test skipped: no ") and "iclr2024" in line for line in lines)
    assert not any("PDEATHSIG" in line for line in lines)
    assert lines[-1].startswith("../shared is the shared data folder beside the project checkout")
    assert skipped_checks([skipped("PR_SET_PDEATHSIG is Linux's")], 0, Path("x")) == []


def test_a_run_without_discords_api_description_says_so_in_its_summary(tmp_path):
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PAPERBOT_DISCORD_OPENAPI"] = str(tmp_path / "missing-openapi.json")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/bot/cogs/test_club.py::test_in_a_dm_club_says_it_works_in_a_server"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.split("checks skipped: ../shared is missing", 1)[1]
    assert f"Discord's API description was not found at {tmp_path / 'missing-openapi.json'}" in summary
    assert "requests the bot sent were checked against Discord's limits only" in summary
    assert "../shared is the shared data folder beside the project checkout" in summary
