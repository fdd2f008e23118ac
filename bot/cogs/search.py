"""/search, /paper and /similar, with area and paper-id autocomplete (rules: bot/services/search.py,
bot/services/papers.py; rendering: bot/ui/results.py)."""

from __future__ import annotations

import asyncio

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cooldown import shared_cooldown
from bot.services.registry import Services
from bot.services.search import ResultPage
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.choices import area_choices, id_choices
from bot.ui.results import PaperView, show_results, show_similar


class SearchCog(commands.Cog, name="Search"):
    """Finding and reading papers."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def services(self) -> Services:
        """The bot's services (set in setup_hook, before any command can run)."""
        return self.bot.services

    @app_commands.command(name="search", description="Search the paper abstracts (BM25)")
    @app_commands.describe(
        query="Words to look for; quotes for phrases, -word to exclude",
        area="Only papers in this area",
        author="Only papers with an author whose name contains this",
        limit="Results per page (1-10)",
        public="Show the results to everyone in the channel",
    )
    @shared_cooldown()
    async def search(
        self,
        interaction: discord.Interaction,
        query: app_commands.Range[str, 1, 300],
        area: app_commands.Range[str, 1, 100] | None = None,
        author: app_commands.Range[str, 1, 100] | None = None,
        limit: app_commands.Range[int, 1, 10] | None = None,
        public: bool = False,
    ) -> None:
        """Search the paper abstracts (BM25)."""
        user_id = interaction.user.id

        async def fetch(page: int) -> ResultPage:
            return await self.services.search.page(
                user_id, query, page=page, per_page=limit, area=area, author=author
            )

        # Ranking takes milliseconds, so no defer; a bad query raises QueryError here, before any reply.
        await show_results(self.services, interaction, await fetch(0), fetch, ephemeral=not public)

    @search.autocomplete("area")
    async def area_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Areas of the corpus starting with (then containing) what was typed."""
        return area_choices(self.services.search.areas(current))

    @app_commands.command(name="paper", description="Show a paper's full abstract")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        public="Show the results to everyone in the channel",
    )
    @app_commands.rename(paper_id="id")
    async def paper(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        public: bool = False,
    ) -> None:
        """Show a paper's full abstract."""
        page = await self.services.papers.paper(interaction.user.id, paper_id)
        view = PaperView(self.services, page.paper.id, ephemeral=not public)
        sent = await respond.send(
            interaction, embeds=E.paper_embeds(page.paper, saved=page.saved), view=view, ephemeral=not public
        )
        view.attach(sent, interaction)

    @paper.autocomplete("paper_id")
    async def paper_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids starting with what was typed, then titles containing its words."""
        return id_choices(await asyncio.to_thread(self.services.search.paper_ids, current))

    @app_commands.command(name="similar", description="Papers similar to a given paper")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        public="Show the results to everyone in the channel",
    )
    @app_commands.rename(paper_id="id")
    @shared_cooldown()
    async def similar(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        public: bool = False,
    ) -> None:
        """Papers similar to a given paper."""
        await show_similar(self.services, interaction, paper_id, ephemeral=not public)

    @similar.autocomplete("paper_id")
    async def similar_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids starting with what was typed, then titles containing its words."""
        return id_choices(await asyncio.to_thread(self.services.search.paper_ids, current))


async def setup(bot: PaperBot) -> None:
    """Load the search cog."""
    await bot.add_cog(SearchCog(bot))
