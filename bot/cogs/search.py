"""/search, /paper and /similar, with area and paper-id autocomplete (rules: bot/services/search.py,
bot/services/papers.py; rendering: bot/ui/results.py)."""

from __future__ import annotations

import io

import discord
from discord import app_commands

from bot.app import PaperBot
from bot.cogs import Cog, ShortText, corpus_areas, corpus_papers
from bot.cooldown import shared_cooldown
from bot.services.search import ResultPage
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.results import PaperView, show_results, show_similar


class SearchCog(Cog, name="Search"):
    """Finding and reading papers."""

    @app_commands.command(name="search", description="Search the paper abstracts (BM25)")
    @app_commands.describe(
        query="Words to look for; quotes for phrases, -word to exclude",
        area="Only papers in this area",
        author="Only papers with an author whose name contains this",
        limit="Results per page (1-10)",
        public="Show the results to everyone in the channel",
    )
    @app_commands.autocomplete(area=corpus_areas)
    @shared_cooldown()
    async def search(
        self,
        interaction: discord.Interaction,
        query: app_commands.Range[str, 1, 300],
        area: ShortText | None = None,
        author: ShortText | None = None,
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

    @app_commands.command(name="paper", description="Show a paper's full abstract")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        public="Show the results to everyone in the channel",
    )
    @app_commands.rename(paper_id="id")
    @app_commands.autocomplete(paper_id=corpus_papers)
    async def paper(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        public: bool = False,
    ) -> None:
        """Show a paper's full abstract."""
        page = await self.services.papers.paper(interaction.user.id, paper_id)
        reply = E.paper_reply(page.paper, saved=page.saved)
        view = PaperView(self.services, page.paper.id, ephemeral=not public)
        attached = {}
        if reply.file is not None:  # an abstract longer than the messages hold, whole
            attached["file"] = discord.File(io.BytesIO(reply.file[1]), filename=reply.file[0])
        sent = await respond.send(
            interaction, embeds=reply.messages[0], view=view, ephemeral=not public, **attached
        )
        view.attach(sent, interaction)
        for embeds in reply.messages[1:]:  # the rest of a long abstract
            await respond.send(interaction, embeds=embeds, ephemeral=not public)

    @app_commands.command(name="similar", description="Papers similar to a given paper")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        public="Show the results to everyone in the channel",
    )
    @app_commands.rename(paper_id="id")
    @app_commands.autocomplete(paper_id=corpus_papers)
    @shared_cooldown()
    async def similar(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        public: bool = False,
    ) -> None:
        """Papers similar to a given paper."""
        await show_similar(self.services, interaction, paper_id, ephemeral=not public)


async def setup(bot: PaperBot) -> None:
    """Load the search cog."""
    await bot.add_cog(SearchCog(bot))
