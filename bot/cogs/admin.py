"""/admin reindex, /admin stats and /admin sync — for ADMIN_USER_IDS and the application's owner.

Rules and wording: :mod:`bot.services.admin`; rendering: :mod:`bot.ui.admin`. /admin sync is Discord's
own business (the command tree), so it lives here.

``default_permissions=administrator`` on the group only hides the commands from most members in the
Discord client, and server admins can change it; the real gate is :meth:`AdminCog.ensure_admin`,
called first thing in every subcommand, which asks ``bot.is_admin`` (owner/team or ADMIN_USER_IDS)
and never looks at the member's permissions in the payload.

Admin replies are ephemeral: corpus paths, file names and process details are not for the channel.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.cogs import Cog
from bot.errors import NotAdmin
from bot.i18n import register
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.admin import ProgressMessage, ReportSource, progress_text, reindex_pages, stats_embed
from bot.ui.paginator import Paginator
from retrieval.english import plural

if TYPE_CHECKING:
    from bot.app import PaperBot

log = logging.getLogger(__name__)

SYNC_SCOPES = [
    app_commands.Choice(name="guild — this server, instant", value="guild"),
    app_commands.Choice(name="global — every server and DM, can take a while", value="global"),
    app_commands.Choice(name="clear — remove this server's copies", value="clear"),
]

# English descriptions (as written below) → Simplified Chinese, registered with bot.i18n in setup().
TRANSLATIONS_ZH: dict[str, str] = {
    "Bot administration (admins only)": "机器人管理（仅限管理员）",
    "Rebuild the search index from the corpus without downtime": "在不中断服务的情况下从语料重建检索索引",
    "Corpus file or folder on the bot's machine (default: the configured corpus)": (
        "机器人所在机器上的语料文件或文件夹（默认：配置的语料 CORPUS_PATH）"
    ),
    "Index, database and process statistics": "索引、数据库与进程统计",
    "Sync the slash commands with Discord": "将斜杠命令同步到 Discord",
    "Where to sync: this server (default), everywhere, or clear this server's copies": (
        "同步范围：本服务器（默认）、全局，或清除本服务器的副本"
    ),
    # sync scope choices
    "guild — this server, instant": "guild — 本服务器，立即生效",
    "global — every server and DM, can take a while": "global — 所有服务器和私信，可能需要一段时间",
    "clear — remove this server's copies": "clear — 移除本服务器上的命令副本",
}


class AdminCog(Cog, name="Admin"):
    """Operating the bot from Discord."""

    admin = app_commands.Group(
        name="admin",
        description="Bot administration (admins only)",
        # Only a hint for the client (server admins can override it); ensure_admin is the real check.
        default_permissions=discord.Permissions(administrator=True),
    )

    async def ensure_admin(self, interaction: discord.Interaction) -> None:
        """Raise :class:`~bot.errors.NotAdmin` unless the user is an owner or in ADMIN_USER_IDS."""
        if await self.bot.is_admin(interaction.user):
            return
        command = interaction.command.qualified_name if interaction.command else "admin"
        log.warning("refused /%s for non-admin user %s", command, interaction.user.id)
        raise NotAdmin()

    # -- /admin reindex ---------------------------------------------------------------------------

    @admin.command(name="reindex", description="Rebuild the search index from the corpus without downtime")
    @app_commands.describe(path="Corpus file or folder on the bot's machine (default: the configured corpus)")
    async def reindex(
        self, interaction: discord.Interaction, path: app_commands.Range[str, 1, 1000] | None = None
    ) -> None:
        """Rebuild the search index from the corpus without downtime."""
        await self.ensure_admin(interaction)
        admin = self.bot.services.admin
        plan = admin.plan_reindex(path)  # raises ReindexInProgress before anything is sent
        await respond.defer(interaction, ephemeral=True, thinking=True)
        progress = ProgressMessage(interaction, plan.shown)
        await progress.edit(content=progress_text(plan.shown, "start", 0, 0, 0.0))
        log.info("user %s started a reindex of %s", interaction.user.id, plan.corpus)
        # The build runs off the event loop; this task just waits while the loop keeps serving.
        outcome = await admin.reindex(plan, progress=progress.update)
        if outcome.error is not None:
            await progress.finish(content=E.fit_content(outcome.error), embeds=[])
            return
        # A long list of skipped blocks is paged under the summary, by the one paginator view.
        source = ReportSource(reindex_pages(outcome), "✅ Reindex complete.")
        view = Paginator(source, owner=interaction.user, timeout=self.bot.settings.view_timeout)
        page = await view.render(0)
        paged = bool(view.children)
        controls = view if paged else discord.utils.MISSING
        message = await progress.finish(content=page.content, embeds=E.fit_embeds(page.embeds), view=controls)
        if paged and message is not None:
            view.attach(message, interaction)
        else:
            view.stop()
        self.bot.dispatch("paperbot_reindexed", outcome.report)  # watch alerts go out in the background

    # -- /admin stats ---------------------------------------------------------------------------

    @admin.command(name="stats", description="Index, database and process statistics")
    async def stats(self, interaction: discord.Interaction) -> None:
        """Index, database and process statistics."""
        await self.ensure_admin(interaction)
        stats = await self.bot.services.admin.stats()
        await respond.send(interaction, embeds=E.fit_embeds([stats_embed(stats)]), ephemeral=True)

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
            await respond.send(
                interaction,
                f"scope:{kind} works on a server; run it there, or use scope:global here.", ephemeral=True
            )
            return
        await respond.defer(interaction, ephemeral=True, thinking=True)
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
        await respond.send(interaction, E.fit_content(text), ephemeral=True)


async def setup(bot: PaperBot) -> None:
    """Load the admin cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(AdminCog(bot))
