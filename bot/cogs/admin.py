"""/admin reindex, /admin stats and /admin sync — for ADMIN_USER_IDS and the application's owner.

``default_permissions=administrator`` on the group only hides the commands from most members in the
Discord client, and server admins can change it; the real gate is :meth:`AdminCog.ensure_admin`,
called first thing in every subcommand, which asks ``bot.is_admin`` (owner/team or ADMIN_USER_IDS)
and never looks at the member's permissions in the payload.

Admin replies are ephemeral: corpus paths, file names and process details are not for the channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import platform
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.errors import NotAdmin, ReindexFailed, ReindexInProgress
from bot.i18n import register
from bot.ui import embeds as E
from retrieval.models import IngestReport
from retrieval.text import plural

if TYPE_CHECKING:
    from bot.app import PaperBot
    from bot.engine import Engine
    from bot.store import ReconcileResult, StoreStats

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
SYNC_SCOPES = [
    app_commands.Choice(name="guild — this server, instant", value="guild"),
    app_commands.Choice(name="global — every server and DM, can take a while", value="global"),
    app_commands.Choice(name="clear — remove this server's copies", value="clear"),
]

# English descriptions (as written below) → Simplified Chinese, registered with bot.i18n in setup().
TRANSLATIONS_ZH: dict[str, str] = {
    "Bot administration (admins only)": "机器人管理（仅限管理员）",
    "Rebuild the search index from the corpus without downtime": "在不中断服务的情况下从语料重建检索索引",
    "Corpus file or folder on the bot's machine (default: the current corpus)": (
        "机器人所在机器上的语料文件或文件夹（默认：当前语料）"
    ),
    "Index, database and process statistics": "索引、数据库与进程统计",
    "Sync the slash commands with Discord": "将斜杠命令同步到 Discord",
    "Where to sync: this server (default), everywhere, or clear this server's copies": (
        "同步范围：本服务器（默认）、全局，或清除本服务器的副本"
    ),
}


# ----------------------------------------------------------------------------------- formatting


def _more(lines: Sequence[str], total: int | None = None, limit: int = REPORT_LINES, width: int = 95) -> str:
    """The first ``limit`` lines (each cut to ``width``), then "+N more" — always within a field value."""
    total = len(lines) if total is None else total
    shown = [f"• {discord.utils.escape_markdown(E.truncate(line, width))}" for line in lines[:limit]]
    if total > len(shown):
        shown.append(f"+{total - len(shown)} more")
    return E.truncate("\n".join(shown), E.FIELD_VALUE_LIMIT)


def _ids(ids: Sequence[str], limit: int = REPORT_LINES) -> str:
    """Paper ids as inline code, the first ``limit`` of them, then "+N more"."""
    text = ", ".join(f"`{E.truncate(pid, 40)}`" for pid in ids[:limit])
    if len(ids) > limit:
        text += f" +{len(ids) - limit} more"
    return E.truncate(text, E.FIELD_VALUE_LIMIT)


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


def progress_text(corpus: str, stage: str, done: int, total: int, elapsed: float) -> str:
    """The progress line of a running reindex."""
    name = STAGE_NAMES.get(stage, stage.capitalize())
    amount = f" {done:,}/{total:,}" + (f" ({100 * done // total}%)" if total > 1 else "") if total else ""
    return E.fit_content(f"⏳ Reindexing `{corpus}` — {name}{amount} · {elapsed:.0f} s") or ""


def reindex_embed(
    report: IngestReport,
    *,
    corpus: str,
    elapsed: float,
    before: StoreStats | None,
    after: StoreStats | None,
    reconcile: ReconcileResult | None = None,
) -> discord.Embed:
    """The diff a reindex produced: papers added/removed/unchanged, duplicates, skipped blocks, timing,
    and the saved papers that left or came back (named when ``reconcile`` is known)."""
    how = "loaded from the cache" if report.from_cache else f"built in {report.build_seconds:.2f} s"
    embed = discord.Embed(
        title=E.truncate(f"Reindex done — now serving {plural(report.papers, 'paper')}", E.TITLE_LIMIT),
        description=E.truncate(
            f"`{corpus}` · {plural(len(report.files), 'file')} · {how} · {elapsed:.1f} s in all. "
            "Searches switched to the new index at once.",
            E.DESCRIPTION_LIMIT,
        ),
        colour=E.BRAND,
    )
    embed.add_field(
        name="Papers",
        value=(
            f"+{len(report.added):,} added · −{len(report.removed):,} removed · "
            f"{report.unchanged:,} unchanged"
        ),
        inline=False,
    )
    if report.added:
        embed.add_field(name="Added", value=_ids(report.added), inline=False)
    if report.removed:
        embed.add_field(name="Removed", value=_ids(report.removed), inline=False)
    if report.duplicates:
        details = list(report.duplicate_details) or ["(no details)"]
        embed.add_field(
            name=f"Duplicates dropped: {report.duplicates:,}",
            value=_more(details, total=max(report.duplicates, len(report.duplicate_details))),
            inline=False,
        )
    if report.skipped:
        embed.add_field(
            name=f"Skipped blocks: {len(report.skipped):,}",
            value=_more([str(block) for block in report.skipped]),
            inline=False,
        )
    lines: list[str] = []
    if reconcile is not None:
        gone, returned = reconcile.gone, reconcile.returned
        if gone:
            lines.append(f"{len(gone):,} left the corpus (kept in users' lists, marked): {_ids(gone)}")
        if returned:
            lines.append(f"{len(returned):,} {_are(len(returned))} back in the corpus: {_ids(returned)}")
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


# ----------------------------------------------------------------------------------------- cog


class AdminCog(commands.Cog, name="Admin"):
    """Operating the bot from Discord."""

    admin = app_commands.Group(
        name="admin",
        description="Bot administration (admins only)",
        # Only a hint for the client (server admins can override it); ensure_admin is the real check.
        default_permissions=discord.Permissions(administrator=True),
    )

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def engine(self) -> Engine:
        """The serving engine (set in setup_hook before any cog loads)."""
        assert self.bot.engine is not None  # noqa: S101 - setup_hook guarantees it
        return self.bot.engine

    async def ensure_admin(self, interaction: discord.Interaction) -> None:
        """Raise :class:`~bot.errors.NotAdmin` unless the user is an owner or in ADMIN_USER_IDS."""
        if await self.bot.is_admin(interaction.user):
            return
        command = interaction.command.qualified_name if interaction.command else "admin"
        log.warning("refused /%s for non-admin user %s", command, interaction.user.id)
        raise NotAdmin()

    # -- /admin reindex ---------------------------------------------------------------------------

    @admin.command(name="reindex", description="Rebuild the search index from the corpus without downtime")
    @app_commands.describe(path="Corpus file or folder on the bot's machine (default: the current corpus)")
    async def reindex(
        self, interaction: discord.Interaction, path: app_commands.Range[str, 1, 1000] | None = None
    ) -> None:
        """Rebuild the search index from the corpus without downtime."""
        await self.ensure_admin(interaction)
        engine = self.engine
        if engine.reindexing:
            raise ReindexInProgress()
        corpus = str(Path(path.strip()).expanduser()) if path else str(engine.corpus_path)
        shown = E.truncate(corpus, 200)
        await interaction.response.defer(ephemeral=True, thinking=True)
        before = await self.bot.store.stats()
        progress = ProgressMessage(interaction, shown)
        await progress.edit(content=progress_text(shown, "start", 0, 0, 0.0))
        started = time.monotonic()
        log.info("user %s started a reindex of %s", interaction.user.id, corpus)
        try:
            # The build runs in a worker thread; this task just waits while the loop keeps serving.
            report = await engine.reindex(corpus if path else None, progress=progress.update)
        except (ReindexInProgress, ReindexFailed) as exc:
            where = E.truncate(str(engine.corpus_path), 200)
            still = f"Still serving {plural(len(engine), 'paper')} from `{where}`."
            await progress.finish(content=E.fit_content(f"❌ {exc}\n{still}"), embeds=[])
            return
        elapsed = time.monotonic() - started
        after = await self.bot.store.stats()
        embed = reindex_embed(
            report,
            corpus=shown,
            elapsed=elapsed,
            before=before,
            after=after,
            reconcile=engine.last_reconcile,
        )
        await progress.finish(content="✅ Reindex complete.", embeds=E.fit_embeds([embed]))

    # -- /admin stats ---------------------------------------------------------------------------

    @admin.command(name="stats", description="Index, database and process statistics")
    async def stats(self, interaction: discord.Interaction) -> None:
        """Index, database and process statistics."""
        await self.ensure_admin(interaction)
        engine = self.engine
        report = engine.report
        store = await self.bot.store.stats()
        now = time.time()
        loaded = dt.datetime.fromtimestamp(engine.loaded_at, dt.UTC)
        embed = discord.Embed(title="paperbot status", colour=E.BRAND)
        embed.add_field(
            name="Corpus",
            value=E.truncate(
                f"{plural(len(engine), 'paper')} · {plural(len(engine.areas), 'area')} · "
                f"{plural(len(report.files), 'file')}\n"
                f"`{engine.corpus_path}`",
                E.FIELD_VALUE_LIMIT,
            ),
            inline=False,
        )
        how = "loaded from the cache" if report.from_cache else f"built in {report.build_seconds:.2f} s"
        state = " · **reindexing now**" if engine.reindexing else ""
        embed.add_field(
            name="Index",
            value=(
                f"{how} · ready {discord.utils.format_dt(loaded, 'R')} "
                f"(age {duration(now - engine.loaded_at)}){state}"
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
        uptime = (dt.datetime.now(dt.UTC) - self.bot.started_at).total_seconds()
        embed.add_field(
            name="Process",
            value=(
                f"memory {memory_usage()} · up {duration(uptime)} "
                f"(since {discord.utils.format_dt(self.bot.started_at, 'f')})\n"
                f"discord.py {discord.__version__} · Python {platform.python_version()}"
            ),
            inline=False,
        )
        await interaction.response.send_message(embeds=E.fit_embeds([embed]), ephemeral=True)

    # -- /admin sync ----------------------------------------------------------------------------

    @admin.command(name="sync", description="Sync the slash commands with Discord")
    @app_commands.describe(
        scope="Where to sync: this server (default), everywhere, or clear this server's copies"
    )
    @app_commands.choices(scope=SYNC_SCOPES)
    async def sync(
        self, interaction: discord.Interaction, scope: app_commands.Choice[str] | None = None
    ) -> None:
        """Sync the slash commands with Discord."""
        await self.ensure_admin(interaction)
        kind = scope.value if scope is not None else "guild"
        guild_id = interaction.guild_id
        if kind != "global" and guild_id is None:
            await interaction.response.send_message(
                f"scope:{kind} works on a server; run it there, or use scope:global here.", ephemeral=True
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        tree = self.bot.tree
        try:
            if kind == "global":
                synced = await tree.sync()
                text = (
                    f"Synced {plural(len(synced), 'command')} globally. Discord can take a while to show "
                    "them everywhere; servers that also have copies (scope:guild) show both until you clear "
                    "them (scope:clear)."
                )
            else:
                guild = discord.Object(id=guild_id)  # type: ignore[arg-type] - checked above
                if kind == "guild":
                    tree.copy_global_to(guild=guild)
                    synced = await tree.sync(guild=guild)
                    count = plural(len(synced), "command")
                    text = f"Synced {count} to this server; they can be used right away."
                else:
                    tree.clear_commands(guild=guild)
                    synced = await tree.sync(guild=guild)
                    text = (
                        f"Removed this server's copies of the commands ({len(synced)} left); "
                        "the global commands stay."
                    )
        except discord.HTTPException as exc:
            log.warning("command sync (%s) failed: %s", kind, exc)
            text = f"Discord refused the sync ({exc.status}): {E.truncate(exc.text or 'no details', 300)}"
        else:
            log.info("user %s synced %d commands (%s)", interaction.user.id, len(synced), kind)
        await interaction.followup.send(E.fit_content(text) or "", ephemeral=True)


async def setup(bot: PaperBot) -> None:
    """Load the admin cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(AdminCog(bot))
