"""/recommend: papers like the ones you saved (rules: bot/services/recommend.py; rendering:
bot/ui/results.py, the same pages, save and similar controls as /search)."""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cogs import ShortText
from bot.cooldown import shared_cooldown
from bot.i18n import register
from bot.services.registry import Services
from bot.services.search import ResultPage
from bot.store import StoreError
from bot.ui.choices import suggestion_choices
from bot.ui.results import show_results

log = logging.getLogger(__name__)

TRANSLATIONS_ZH: dict[str, str] = {
    "Papers like the ones you saved": "与你保存的论文相似的论文",
    "Recommend from this list only (default: all your lists)": "只根据该列表推荐（默认：你的所有列表）",
    "Show the recommendations to everyone in the channel": "让频道里的所有人都能看到推荐",
}


class RecommendCog(commands.Cog, name="Recommend"):
    """Recommendations from your saved papers."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def services(self) -> Services:
        """The bot's services (set in setup_hook, before any command can run)."""
        return self.bot.services

    @app_commands.command(name="recommend", description="Papers like the ones you saved")
    @app_commands.describe(
        list_name="Recommend from this list only (default: all your lists)",
        public="Show the recommendations to everyone in the channel",
    )
    @app_commands.rename(list_name="list")
    @shared_cooldown()
    async def recommend(
        self,
        interaction: discord.Interaction,
        list_name: ShortText | None = None,
        public: bool = False,
    ) -> None:
        """Papers like the ones you saved."""
        service = self.services.recommend
        pool = await service.pool(interaction.user.id, list_name)  # ranked once, paged from memory

        async def fetch(page: int) -> ResultPage:
            return service.render(pool, page=page)

        await show_results(self.services, interaction, await fetch(0), fetch, ephemeral=not public)

    @recommend.autocomplete("list_name")
    async def list_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The user's lists containing what was typed."""
        try:
            found = await self.services.library.list_suggestions(interaction.user.id, current)
        except StoreError as exc:  # autocomplete can't show an error; an empty list is the honest answer
            log.warning("recommend list autocomplete failed: %s", exc)
            return []
        return suggestion_choices(found)


async def setup(bot: PaperBot) -> None:
    """Load the recommend cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(RecommendCog(bot))
