"""What the admin commands show: the reindex report, its progress message, and the status embed.

Everything here formats what :mod:`bot.services.admin` returns, within Discord's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

import discord

from bot import render
from bot.services.admin import ReindexOutcome, Stats
from bot.ui import embeds as E
from retrieval.english import plural
from retrieval.report import counts_line, sections

log = logging.getLogger(__name__)

#: Progress edits of the reindex message are at least this many seconds apart (Discord rate limits).
PROGRESS_EDIT_INTERVAL = 1.0
#: How many skipped blocks / duplicates / ids a reindex report lists before "+N more".
REPORT_LINES = 10
STAGE_NAMES = {
    "start": "Starting",
    "parse": "Reading the corpus",
    "tokenize": "Tokenizing",
    "index": "Building the index",
}


def _more(lines: Sequence[str], total: int | None = None, limit: int = REPORT_LINES, width: int = 95) -> str:
    """The first ``limit`` lines (each cut to ``width``), then "+N more" — always within a field value."""
    total = len(lines) if total is None else total
    shown = [f"• {discord.utils.escape_markdown(E.truncate(line, width))}" for line in lines[:limit]]
    if total > len(shown):
        shown.append(f"+{total - len(shown)} more")
    return E.truncate("\n".join(shown), E.FIELD_VALUE_LIMIT)


def _ids(ids: Sequence[str], limit: int = REPORT_LINES, titles: dict[str, str] | None = None) -> str:
    """Paper ids as inline code, the first ``limit`` of them, then "+N more"; ids with a known title
    (the first few) are shown as "*title* (`id`)", one per line, before the rest."""
    titles = titles or {}
    named = [pid for pid in ids[:limit] if pid in titles]
    lines = [
        f"• *{discord.utils.escape_markdown(E.truncate(E.plain(titles[pid]), 90))}* "
        f"({render.code(E.truncate(pid, 40))})"
        for pid in named
    ]
    rest = [render.code(E.truncate(pid, 40)) for pid in ids[:limit] if pid not in titles]
    if rest:
        lines.append(", ".join(rest))
    if len(ids) > limit:
        lines.append(f"+{len(ids) - limit} more")
    return E.truncate("\n".join(lines), E.FIELD_VALUE_LIMIT)


def _are(count: int) -> str:
    """The verb for ``count`` things: "is" for one, "are" otherwise."""
    return "is" if count == 1 else "are"


def duration(seconds: float) -> str:
    """``"2 d 3 h"``, ``"4 min 05 s"``, ``"12.3 s"``: short, for humans."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s"


def progress_text(corpus: str, stage: str, done: int, total: int, elapsed: float) -> str:
    """The progress line of a running reindex."""
    name = STAGE_NAMES.get(stage, stage.capitalize())
    amount = f" {done:,}/{total:,}" + (f" ({100 * done // total}%)" if total > 1 else "") if total else ""
    return E.fit_content(f"⏳ Reindexing `{corpus}` — {name}{amount} · {elapsed:.0f} s") or ""


def reindex_embed(outcome: ReindexOutcome) -> discord.Embed:
    """The diff a reindex produced: papers added/removed/unchanged, duplicates, skipped blocks, timing,
    and the saved papers that left or came back (named when the reconcile result is known)."""
    report = outcome.report
    assert report is not None  # noqa: S101 - a failed reindex has no report and no embed
    corpus, elapsed = outcome.plan.shown, outcome.elapsed
    before, after, reconcile = outcome.before, outcome.after, outcome.reconcile
    how = "loaded from the cache" if report.from_cache else f"built in {report.build_seconds:.2f} s"
    embed = discord.Embed(
        title=E.truncate(f"Reindex done — now serving {plural(report.papers, 'paper')}", E.TITLE_LIMIT),
        description=E.truncate(
            f"`{corpus}` · {plural(len(report.files), 'file')} · {how} · {elapsed:.1f} s in all. "
            "Searches switched to the new index at once."
            + (
                ""
                if outcome.plan.configured
                else " This corpus is served until the next plain /admin reindex or a restart, which "
                "read the configured CORPUS_PATH; set CORPUS_PATH to keep it."
            ),
            E.DESCRIPTION_LIMIT,
        ),
        colour=E.BRAND,
    )
    embed.add_field(
        name="Papers",
        value=E.truncate(
            f"+{len(report.added):,} added · −{len(report.removed):,} removed · "
            f"{report.unchanged:,} unchanged\n{counts_line(report)}",
            E.FIELD_VALUE_LIMIT,
        ),
        inline=False,
    )
    if report.added:
        embed.add_field(name="Added", value=_ids(report.added, titles=outcome.titles), inline=False)
    if report.removed:
        embed.add_field(name="Removed", value=_ids(report.removed, titles=outcome.titles), inline=False)
    for section in sections(report):
        name = E.truncate(section.title, E.FIELD_NAME_LIMIT)
        embed.add_field(name=name, value=_more(section.lines), inline=False)
    lines: list[str] = []
    if reconcile is not None:
        gone, returned = reconcile.gone, reconcile.returned
        if gone:
            shown = _ids(gone, titles=outcome.titles)
            lines.append(f"{len(gone):,} left the corpus (kept in users' lists, marked):\n{shown}")
        if returned:
            shown = _ids(returned, titles=outcome.titles)
            lines.append(f"{len(returned):,} {_are(len(returned))} back in the corpus:\n{shown}")
    elif before is not None and after is not None:
        # Without the reconcile result (no store attached to the engine) only the net change is known.
        change = after.missing_from_corpus - before.missing_from_corpus
        if change > 0:
            lines.append(f"{change:,} left the corpus with this reindex (kept in users' lists, marked).")
        elif change < 0:
            lines.append(f"{-change:,} came back into the corpus.")
    if after is not None and (lines or after.missing_from_corpus):
        missing = after.missing_from_corpus
        lines.append(f"{plural(missing, 'saved paper')} in all {_are(missing)} not in the corpus now.")
    if lines:
        embed.add_field(
            name="Saved papers", value=E.truncate("\n".join(lines), E.FIELD_VALUE_LIMIT), inline=False
        )
    return E.clamp_embed(embed)


class ProgressMessage:
    """Edits one interaction's original response as a reindex advances, at most once per interval.

    :meth:`update` is synchronous (the engine calls it on the loop); it keeps only the latest stage and
    lets one background task do the (throttled) edit, so a fast build never floods Discord.
    """

    def __init__(
        self, interaction: discord.Interaction, corpus: str, *, interval: float | None = None
    ) -> None:
        self.interaction = interaction
        self.corpus = corpus
        self.interval = PROGRESS_EDIT_INTERVAL if interval is None else interval
        self.started = time.monotonic()
        self.edits = 0
        self._last_edit = float("-inf")
        self._pending: tuple[str, int, int] | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def update(self, stage: str, done: int, total: int) -> None:
        """Remember the newest progress and make sure an edit for it is scheduled."""
        self._pending = (stage, done, total)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(
                self._flush(), name="paperbot-reindex-progress-edit"
            )

    async def _flush(self) -> None:
        await self._wait_for_slot()
        item, self._pending = self._pending, None
        if item is not None:
            await self.edit(content=progress_text(self.corpus, *item, time.monotonic() - self.started))

    async def _wait_for_slot(self) -> None:
        delay = self._last_edit + self.interval - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    async def edit(self, **kwargs: Any) -> None:
        """Edit the message now (after waiting out the interval); an HTTP failure is only logged."""
        async with self._lock:
            await self._wait_for_slot()
            try:
                await self.interaction.edit_original_response(**kwargs)
            except discord.HTTPException as exc:
                # The token lives 15 minutes; a very long build can outlive it. The log still has the report.
                log.warning("could not update the reindex message: %s", exc)
            self._last_edit = time.monotonic()
            self.edits += 1

    async def finish(self, **kwargs: Any) -> None:
        """Drop any pending progress, wait for a running edit, then show the final message."""
        self._pending = None
        if self._flusher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        await self.edit(**kwargs)


def stats_embed(stats: Stats) -> discord.Embed:
    """/admin stats: corpus, index, saved lists and process."""
    store = stats.store
    loaded = dt.datetime.fromtimestamp(stats.loaded_at, dt.UTC)
    embed = discord.Embed(title="paperbot status", colour=E.BRAND)
    embed.add_field(
        name="Corpus",
        value=E.truncate(
            f"{plural(stats.papers, 'paper')} · {plural(stats.areas, 'area')} · "
            f"{plural(stats.files, 'file')}\n"
            f"`{stats.corpus_path}`",
            E.FIELD_VALUE_LIMIT,
        ),
        inline=False,
    )
    how = "loaded from the cache" if stats.from_cache else f"built in {stats.build_seconds:.2f} s"
    state = " · **reindexing now**" if stats.reindexing else ""
    embed.add_field(
        name="Index",
        value=(
            f"{how} · ready {discord.utils.format_dt(loaded, 'R')} (age {duration(stats.index_age)}){state}"
        ),
        inline=False,
    )
    embed.add_field(
        name="Saved lists",
        value=(
            f"{plural(store.saved_items, 'saved item')} · {plural(store.users, 'user')} · "
            f"{plural(store.lists, 'list')}\n"
            f"{plural(store.snapshots, 'paper snapshot')}, "
            f"{store.missing_from_corpus:,} no longer in the corpus"
        ),
        inline=False,
    )
    embed.add_field(
        name="Process",
        value=(
            f"memory {stats.memory} · up {duration(stats.uptime)} "
            f"(since {discord.utils.format_dt(stats.started_at, 'f')})\n"
            f"discord.py {stats.discord_version} · Python {stats.python_version}"
        ),
        inline=False,
    )
    return E.clamp_embed(embed)
