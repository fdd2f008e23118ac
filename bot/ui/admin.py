"""What the admin commands show: the reindex report, its progress message, and the status embed.

Everything here formats what :mod:`bot.services.admin` returns, within Discord's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import discord

from bot import limits, render
from bot.services.admin import ReindexOutcome, Stats
from bot.ui import embeds as E
from bot.ui.paginator import Page, PageSource
from retrieval.english import plural
from retrieval.models import IngestReport
from retrieval.report import Section, counts_line, sections

log = logging.getLogger(__name__)

#: Progress edits of the reindex message are at least this many seconds apart (Discord rate limits).
PROGRESS_EDIT_INTERVAL = 1.0
#: How many skipped blocks / duplicates / ids the summary of a reindex report lists before "+N more".
REPORT_LINES = 10
#: Characters of one list (skipped blocks, duplicates…) in the summary page; the rest is on later pages.
SUMMARY_SECTION_CHARS = 900
#: Characters of the lines on one of the later pages (one embed description holds 4,096).
DETAIL_PAGE_CHARS = 3900
#: What the summary embed may hold in all (Discord: 6,000), with room for the clamp's margins.
EMBED_BUDGET = 5800
STAGE_NAMES = {
    "start": "Starting",
    "parse": "Reading the corpus",
    "tokenize": "Tokenizing",
    "index": "Building the index",
}


def _ids(ids: Sequence[str], limit: int = REPORT_LINES, titles: dict[str, str] | None = None) -> str:
    """Paper ids as inline code, the first ``limit`` of them, then "+N more"; ids with a known title
    (the first few) are shown as "*title* (`id`)", one per line, before the rest."""
    titles = titles or {}
    named = [pid for pid in ids[:limit] if pid in titles]
    lines = [
        f"• *{render.title(titles[pid], 90)}* "
        f"({render.code(E.truncate(pid, 40))})"
        for pid in named
    ]
    rest = [render.code(E.truncate(pid, 40)) for pid in ids[:limit] if pid not in titles]
    if rest:
        lines.append(", ".join(rest))
    if len(ids) > limit:
        lines.append(f"+{len(ids) - limit} more")
    return E.truncate("\n".join(lines), limits.FIELD_VALUE_LIMIT)


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


def _in_corpus(report: IngestReport) -> Callable[[str], str]:
    """Text with the corpus folder taken off the front of its file paths: the report's description
    names the folder once, and a line keeps its room for the reason (``broken.txt:5: …``)."""
    folders = {os.path.dirname(f) for f in report.files}
    folder = folders.pop() if len(folders) == 1 else ""
    if not folder:
        return lambda text: text
    prefix = folder.rstrip("/" + os.sep) + ("/" if "/" in folder or os.sep == "/" else os.sep)
    return lambda text: text.replace(prefix, "")


def _sections(report: IngestReport) -> list[Section]:
    """The report's lists (:func:`retrieval.report.sections`), file paths relative to the corpus folder."""
    return sections(report, _in_corpus(report))


def _bullet(line: str, limit: int) -> str:
    """One report line as a bullet, whole unless it alone is over ``limit`` (never in practice)."""
    return E.truncate(f"• {discord.utils.escape_markdown(line)}", limit)


def _fit(lines: Sequence[str], budget: int, limit: int = REPORT_LINES) -> list[str]:
    """As many bullets of ``lines`` (at most ``limit``, the first always) as fit in ``budget``."""
    out: list[str] = []
    used = 0
    for line in lines[:limit]:
        bullet = _bullet(line, budget)
        if out and used + len(bullet) + 1 > budget:
            break
        out.append(bullet)
        used += len(bullet) + 1
    return out


def reindex_pages(outcome: ReindexOutcome) -> list[discord.Embed]:
    """The reindex report: the summary, then, when a list is longer than the
    summary shows, pages listing the rest, every line whole. Each page is one embed within Discord's
    limits (description ≤ 4096, the whole ≤ 6000)."""
    report = outcome.report
    assert report is not None  # noqa: S101 - a failed reindex has no report and no embed
    sections = _sections(report)
    summary, shown = _summary(outcome, sections)
    pages = [summary]
    for section, first in zip(sections, shown, strict=True):
        rest = section.lines[first:]
        start = first
        while rest:
            chunk = _fit(rest, DETAIL_PAGE_CHARS, limit=len(rest))
            end = start + len(chunk)
            title = f"Reindex report — {section.title} ({start + 1:,}–{end:,} of {len(section.lines):,})"
            pages.append(
                E.clamp_embed(discord.Embed(title=title, description="\n".join(chunk), colour=E.BRAND))
            )
            rest, start = rest[len(chunk) :], end
    return pages


def _summary(outcome: ReindexOutcome, sections: Sequence[Section]) -> tuple[discord.Embed, list[int]]:
    """The diff a reindex produced: papers added/removed/unchanged, the first lines of each list,
    timing, and the saved papers that left or came back (named when the reconcile result is known);
    with how many lines of each section it shows."""
    report = outcome.report
    assert report is not None  # noqa: S101 - a failed reindex has no report and no embed
    corpus, elapsed = outcome.plan.shown, outcome.elapsed
    how = "loaded from the cache" if report.from_cache else f"built in {report.build_seconds:.2f} s"
    rejected = len(report.rejected_files)
    files = plural(len(report.files_read), "file") + (f" ({rejected} more rejected)" if rejected else "")
    embed = discord.Embed(
        title=E.truncate(f"Reindex done — now serving {plural(report.papers, 'paper')}", limits.TITLE_LIMIT),
        description=E.truncate(
            f"`{corpus}` · {files} · {how} · {elapsed:.1f} s in all. "
            "Searches switched to the new index at once."
            + (
                ""
                if outcome.plan.configured
                else " This corpus is served until the next plain /admin reindex or a restart, which "
                "read the configured CORPUS_PATH; set CORPUS_PATH to keep it."
            ),
            limits.DESCRIPTION_LIMIT,
        ),
        colour=E.BRAND,
    )
    embed.add_field(
        name="Papers",
        value=E.truncate(
            f"+{len(report.added):,} added · −{len(report.removed):,} removed · "
            f"{report.unchanged:,} unchanged\n{counts_line(report)}",
            limits.FIELD_VALUE_LIMIT,
        ),
        inline=False,
    )
    if report.added:
        embed.add_field(name="Added", value=_ids(report.added, titles=outcome.titles), inline=False)
    if report.removed:
        embed.add_field(name="Removed", value=_ids(report.removed, titles=outcome.titles), inline=False)
    saved = _saved_papers(outcome)
    # What the lists may use of the 6,000 characters an embed holds, the saved papers' field kept.
    room = EMBED_BUDGET - len(embed) - (len(saved) + 20 if saved else 0)
    shown: list[int] = []
    for section in sections:
        name = f"{section.title}: {section.count:,}"
        budget = min(SUMMARY_SECTION_CHARS, room - len(name) - 40)
        bullets = _fit(section.lines, budget) if budget > 40 else []
        more = len(section.lines) - len(bullets)
        if more > 0:
            bullets.append(f"+{more:,} more on the next pages")
        value = "\n".join(bullets)
        embed.add_field(name=name, value=value, inline=False)
        room -= len(name) + len(value)
        shown.append(len(bullets) - (1 if more > 0 else 0))
    if saved:
        embed.add_field(name="Saved papers", value=saved, inline=False)
    return E.clamp_embed(embed), shown


def _saved_papers(outcome: ReindexOutcome) -> str:
    """The saved papers that left the corpus or came back ("" when there is nothing to say)."""
    before, after, reconcile = outcome.before, outcome.after, outcome.reconcile
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
    return E.truncate("\n".join(lines), limits.FIELD_VALUE_LIMIT)


class ReportSource(PageSource):
    """The pages of a reindex report (:func:`reindex_pages`) for the paginator, under ``content``."""

    def __init__(self, pages: Sequence[discord.Embed], content: str) -> None:
        self.pages = list(pages)
        self.content = content

    async def get_page(self, index: int) -> Page:
        index = max(0, min(index, len(self.pages) - 1))
        return Page(content=self.content, embeds=[self.pages[index]], page_count=len(self.pages))


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

    async def edit(self, **kwargs: Any) -> discord.InteractionMessage | None:
        """Edit the message now (after waiting out the interval); an HTTP failure is only logged (None)."""
        async with self._lock:
            await self._wait_for_slot()
            message = None
            try:
                message = await self.interaction.edit_original_response(**kwargs)
            except discord.HTTPException as exc:
                # The token lives 15 minutes; a very long build can outlive it. The log still has the report.
                log.warning("could not update the reindex message: %s", exc)
            self._last_edit = time.monotonic()
            return message

    async def finish(self, **kwargs: Any) -> discord.InteractionMessage | None:
        """Drop any pending progress, wait for a running edit, then show the final message (returned,
        None when the edit failed)."""
        self._pending = None
        if self._flusher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        return await self.edit(**kwargs)


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
            limits.FIELD_VALUE_LIMIT,
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
