"""/admin reindex (rebuild the index without downtime) and /admin stats.

Who may call these is the adapter's business (the cog asks ``bot.is_admin``; the console's user owns
the application); what they do and say is here.
"""

from __future__ import annotations

import datetime as dt
import platform
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import discord

from bot.errors import ReindexFailed, ReindexInProgress
from bot.render import truncate
from bot.services.base import Context
from retrieval.english import plural
from retrieval.models import IngestReport

#: How many papers of each list in a reindex report are named by title (the rest by id).
TITLES_SHOWN = 3

if TYPE_CHECKING:
    from bot.store import ReconcileResult, StoreStats

Progress = Callable[[str, int, int], Awaitable[None] | None]


@dataclass(frozen=True)
class ReindexPlan:
    """Which corpus a reindex will read: ``corpus`` (the path given, else the configured
    CORPUS_PATH; always explicit, since the engine's default is the corpus it serves now), ``shown``
    for text, and whether it is the configured corpus.

    The rule: a plain ``/admin reindex`` always rebuilds the configured corpus (CORPUS_PATH), as a
    restart does; ``path:`` serves another corpus until the next plain reindex or restart.
    """

    corpus: str
    shown: str
    configured: bool = True


@dataclass(frozen=True)
class ReindexOutcome:
    """What a reindex did, or (``error``) why it failed while the old index kept serving.

    ``before``/``after`` are the store's counts around it; ``reconcile`` names the saved papers that
    left the corpus or came back (None without a store attached to the engine).
    """

    plan: ReindexPlan
    elapsed: float
    report: IngestReport | None = None
    before: StoreStats | None = None
    after: StoreStats | None = None
    reconcile: ReconcileResult | None = None
    error: str | None = None
    #: Titles of the first papers each list of ids names (added, removed, left, back), by id.
    titles: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Stats:
    """The numbers /admin stats shows."""

    papers: int
    areas: int
    files: int
    corpus_path: str
    from_cache: bool
    build_seconds: float
    loaded_at: float
    index_age: float
    reindexing: bool
    store: StoreStats
    memory: str
    uptime: float
    started_at: dt.datetime
    discord_version: str
    python_version: str


def memory_usage() -> str:
    """Resident memory now (from /proc/self/status), and the peak (getrusage); either may be missing."""
    parts = []
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    parts.append(f"{int(line.split()[1]) / 1024:.0f} MB RSS")
                    break
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the peak below is all we can tell
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    peak_mb = peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
    parts.append(f"peak {peak_mb:.0f} MB")
    return " · ".join(parts)


class AdminService:
    """Operating the bot: rebuilding the index and reading its state."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def plan_reindex(self, path: str | None = None) -> ReindexPlan:
        """Which corpus a reindex would read; raises ReindexInProgress while one runs."""
        engine = self.ctx.engine
        if engine.reindexing:
            raise ReindexInProgress()
        given = path.strip() if path else None
        configured = str(Path(self.ctx.settings.corpus_path).expanduser())
        corpus = str(Path(given).expanduser()) if given else configured
        return ReindexPlan(
            corpus=corpus,
            shown=truncate(corpus, 200),
            configured=Path(corpus).resolve() == Path(configured).resolve(),
        )

    async def reindex(self, plan: ReindexPlan, *, progress: Progress | None = None) -> ReindexOutcome:
        """Rebuild from ``plan`` off the event loop and swap it in; a failure keeps the old index."""
        engine, store = self.ctx.engine, self.ctx.store
        before = await store.stats()
        started = time.monotonic()
        try:
            report = await engine.reindex(plan.corpus, progress=progress)
        except (ReindexInProgress, ReindexFailed) as exc:
            where = truncate(str(engine.corpus_path), 200)
            still = f"Still serving {plural(len(engine), 'paper')} from `{where}`."
            return ReindexOutcome(plan=plan, elapsed=time.monotonic() - started, error=f"❌ {exc}\n{still}")
        elapsed = time.monotonic() - started
        reconcile = engine.last_reconcile
        titles: dict[str, str] = {}
        named = [report.added, report.removed]
        if reconcile is not None:
            named += [reconcile.gone, reconcile.returned]
        for ids in named:
            for pid in ids[:TITLES_SHOWN]:
                paper = engine.get(pid)
                title = paper.title if paper is not None else engine.last_removed_titles.get(pid)
                if title:
                    titles[pid] = title
        return ReindexOutcome(
            plan=plan,
            elapsed=elapsed,
            report=report,
            before=before,
            after=await store.stats(),
            reconcile=reconcile,
            titles=titles,
        )

    async def stats(self) -> Stats:
        """Index, database and process statistics."""
        engine = self.ctx.engine
        report = engine.report
        now = time.time()
        return Stats(
            papers=len(engine),
            areas=len(engine.areas),
            files=len(report.files_read),
            corpus_path=str(engine.corpus_path),
            from_cache=report.from_cache,
            build_seconds=report.build_seconds,
            loaded_at=engine.loaded_at,
            index_age=now - engine.loaded_at,
            reindexing=engine.reindexing,
            store=await self.ctx.store.stats(),
            memory=memory_usage(),
            uptime=(dt.datetime.now(dt.UTC) - self.ctx.started_at).total_seconds(),
            started_at=self.ctx.started_at,
            discord_version=discord.__version__,
            python_version=platform.python_version(),
        )
