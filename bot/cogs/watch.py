"""/watch add|list|remove, the DMs sent after each reindex, and the paused-watches notice (rules:
bot/services/watch.py).

After a reindex the admin command dispatches ``paperbot_reindexed`` with the ingest report; this cog
computes the alerts and sends them from a background task, one DM after another (discord.py waits
out Discord's rate limits), so the reindex report is never delayed. A 403 pauses that user's watches;
the next command they run gets a short ephemeral followup saying so.
"""

from __future__ import annotations

import asyncio
import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cogs import Cog, ShortText, user_watches
from bot.i18n import register
from bot.services.watch import DirectMessage
from bot.store import StoreError
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.watch import dm_embeds
from retrieval.models import IngestReport

log = logging.getLogger(__name__)

TRANSLATIONS_ZH: dict[str, str] = {
    "Get a DM with new papers that match a query after each reindex": (
        "每次重建索引后，私信你与查询匹配的新论文"
    ),
    "Watch a query: new matching papers are sent to you by DM after each reindex": (
        "关注一个查询：每次重建索引后通过私信发送新的匹配论文"
    ),
    "Show your watches": "查看你的关注查询",
    "Stop watching a query": "停止关注一个查询",
    "Words to watch for (the /search query language)": "要关注的词（与 /search 相同的查询语法）",
    "Only papers in this area": "只看该领域的论文",
    "Only papers with an author whose name contains this": "只看作者姓名包含此文本的论文",
    "The watch's number (from /watch list)": "关注查询的编号（见 /watch list）",
}


class WatchCog(Cog, name="Watch"):
    """Saved queries whose new matches come by DM."""

    watch = app_commands.Group(
        name="watch", description="Get a DM with new papers that match a query after each reindex"
    )

    def __init__(self, bot: PaperBot) -> None:
        super().__init__(bot)
        self.deliveries: set[asyncio.Task[None]] = set()

    @watch.command(
        name="add", description="Watch a query: new matching papers are sent to you by DM after each reindex"
    )
    @app_commands.describe(
        query="Words to watch for (the /search query language)",
        area="Only papers in this area",
        author="Only papers with an author whose name contains this",
    )
    async def add(
        self,
        interaction: discord.Interaction,
        query: app_commands.Range[str, 1, 300],
        area: ShortText | None = None,
        author: ShortText | None = None,
    ) -> None:
        """Watch a query."""
        notice = await self.services.watch.add(interaction.user.id, query, area, author)
        await self.reply(interaction, notice)

    @watch.command(name="list", description="Show your watches")
    async def list_(self, interaction: discord.Interaction) -> None:
        """Show your watches."""
        notice = await self.services.watch.list(interaction.user.id)
        await self.reply(interaction, notice)

    @watch.command(name="remove", description="Stop watching a query")
    @app_commands.describe(watch_id="The watch's number (from /watch list)")
    @app_commands.rename(watch_id="id")
    @app_commands.autocomplete(watch_id=user_watches)
    async def remove(self, interaction: discord.Interaction, watch_id: app_commands.Range[int, 1]) -> None:
        """Stop watching a query."""
        notice = await self.services.watch.remove(interaction.user.id, watch_id)
        await self.reply(interaction, notice)

    # -- after a reindex ----------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_paperbot_reindexed(self, report: IngestReport) -> None:
        """Work out the alerts for the papers this reindex added and send them in the background."""
        try:
            dms = await self.services.watch.alerts(report.added)
        except StoreError as exc:
            log.warning("could not read the watches after a reindex: %s", exc)
            return
        if dms:
            task = asyncio.create_task(self.deliver(dms), name="paperbot-watch-dms")
            self.deliveries.add(task)
            task.add_done_callback(self.deliveries.discard)

    async def deliver(self, dms: list[DirectMessage]) -> None:
        """Send each DM in turn; a 403 pauses that user's watches, other failures are logged."""
        service = self.services.watch
        sent = 0
        for dm in dms:
            try:
                channel = await self.bot.create_dm(discord.Object(id=dm.user_id))
                await channel.send(content=E.fit_content(dm.header), embeds=dm_embeds(dm))
                sent += 1
            except discord.Forbidden:
                await service.paused(dm.user_id)
            except discord.HTTPException as exc:
                log.warning("could not DM watch alerts to user %s: %s", dm.user_id, exc)
        log.info("sent %d of %d watch alert DMs", sent, len(dms))

    # -- the paused notice --------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_app_command_completion(
        self, interaction: discord.Interaction, command: app_commands.Command | app_commands.ContextMenu
    ) -> None:
        """Tell a user whose watches were paused, once, under the answer to their next command."""
        if command.qualified_name.startswith("watch"):
            return  # a /watch command resumes them (its own answer says so)
        try:
            text = await self.services.watch.pending_notice(interaction.user.id)
        except StoreError as exc:
            log.warning("could not read the watch pauses: %s", exc)
            return
        if text is None or not respond.answered(interaction):
            return
        try:
            await respond.send(interaction, text, ephemeral=True)  # a followup: the command answered
        except discord.HTTPException as exc:
            log.warning("could not tell user %s their watches are paused: %s", interaction.user.id, exc)


async def setup(bot: PaperBot) -> None:
    """Load the watch cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(WatchCog(bot))
