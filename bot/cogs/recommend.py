"""/recommend: papers like the ones you saved (rules: bot/services/recommend.py; rendering:
bot/ui/results.py, the same pages, save and similar controls as /search)."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.app import PaperBot
from bot.cogs import Cog, ShortText, user_lists
from bot.cooldown import shared_cooldown
from bot.i18n import register
from bot.services.search import ResultPage
from bot.ui.results import show_results

TRANSLATIONS_ZH: dict[str, str] = {
    "Papers like the ones you saved": "与你保存的论文相似的论文",
    "Recommend from this list only (default: all your lists)": "只根据该列表推荐（默认：你的所有列表）",
    "Show the recommendations to everyone in the channel": "让频道里的所有人都能看到推荐",
}


class RecommendCog(Cog, name="Recommend"):
    """Recommendations from your saved papers."""

    @app_commands.command(name="recommend", description="Papers like the ones you saved")
    @app_commands.describe(
        list_name="Recommend from this list only (default: all your lists)",
        public="Show the recommendations to everyone in the channel",
    )
    @app_commands.rename(list_name="list")
    @app_commands.autocomplete(list_name=user_lists)
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


async def setup(bot: PaperBot) -> None:
    """Load the recommend cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(RecommendCog(bot))
