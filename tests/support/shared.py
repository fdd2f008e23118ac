"""What a test run could not check because ``../shared`` is missing, for the summary pytest prints at
the end of the run (the ``pytest_terminal_summary`` hook in tests/conftest.py).

``../shared`` is the shared data folder beside the project checkout: the evaluation corpora
(``corpora/``) and Discord's API description (``discord-api/openapi.json``). It is not part of the
repository; tests read it there and never copy it. On a machine without it (a fresh clone) the tests
that need it skip, and so does the validation of the bot's requests against Discord's API description
(the limit checks still run); under CI a missing description fails the run instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
ABOUT = (
    "../shared is the shared data folder beside the project checkout (evaluation corpora, Discord's API "
    "description); it is not part of the repository, and what needs it is skipped without it."
)


def skip_reason(report: Any) -> str:
    """The reason a skipped test report gives (``pytest.skip``'s message or the skipif reason)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(reason).removeprefix("Skipped: ")


def needs_shared(reason: str) -> bool:
    """Whether a skip reason says the test needs something under ../shared."""
    return "../shared" in reason or str(SHARED) in reason


def skipped_checks(skipped: Iterable[Any], unchecked_requests: int, spec_path: Path) -> list[str]:
    """Lines for the run's summary: the checks skipped for want of ../shared, and why."""
    lines = []
    if unchecked_requests:
        lines.append(
            f"Discord's API description was not found at {spec_path}: {unchecked_requests:,} requests the "
            "bot sent were checked against Discord's limits only, not against the API description "
            "(PAPERBOT_DISCORD_OPENAPI may name a copy)."
        )
    reasons = Counter(reason for reason in map(skip_reason, skipped) if needs_shared(reason))
    for reason, count in sorted(reasons.items()):
        lines.append(f"{count} test{'s' if count != 1 else ''} skipped: {reason}")
    if lines:
        lines.append(ABOUT)
    return lines
