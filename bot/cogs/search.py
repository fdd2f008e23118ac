"""/search, /paper and /similar, with area and paper-id autocomplete."""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cooldown import shared_cooldown
from bot.engine import Engine
from bot.ui import embeds as E
from bot.ui.choices import area_choices, id_choices
from bot.ui.results import PaperView, ResultsView, SearchSource, show_similar

log = logging.getLogger(__name__)

QUERY_TIPS = 'Try fewer or different words; "quotes" match a phrase and -word excludes a word.'


class SearchCog(commands.Cog, name="Search"):
    """Finding and reading papers."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def engine(self) -> Engine:
        """The serving engine (set in setup_hook, before any command can run)."""
        assert self.bot.engine is not None  # noqa: S101
        return self.bot.engine

    # -- /search ------------------------------------------------------------------------------

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
        per_page = limit or self.bot.settings.page_size
        saved = await self.bot.store.saved_ids(interaction.user.id)
        source = SearchSource(
            self.engine, query, per_page=per_page, area=area, author=author, saved_ids=saved
        )
        view = ResultsView(self.bot, source, owner=interaction.user, ephemeral=not public)
        # Ranking takes milliseconds, so no defer; a bad query raises QueryError here, before any reply.
        await view.render(0)
        if source.total == 0:
            view.stop()
            text = self.explain_no_hits(query, area, author)
            await interaction.response.send_message(E.fit_content(text), ephemeral=True)
            return
        await view.start(interaction, ephemeral=not public, rendered=True)

    def explain_no_hits(self, query: str, area: str | None, author: str | None) -> str:
        """Say which filter removed everything, and what to try instead."""
        shown = E.truncate(" ".join(query.split()), 100)
        if area:
            known = {name.casefold() for name in self.engine.complete_areas(area, 25)}
            nearest = ", ".join(f"*{a}*" for a in self.engine.nearest_areas(area, 3))
            if area.casefold() not in known and not self.engine.complete_areas(area, 1):
                if not nearest:  # not "Nearest areas: none."
                    return f"There is no area “{area}”. Start typing in the area option to pick one."
                return f"There is no area “{area}”. Nearest areas: {nearest}."
            if self.engine.search(query, 1, author=author).total:
                tip = f"Nearest areas: {nearest}. Or drop the area." if nearest else "Drop the area."
                return f"No paper in area *{area}* matches “{shown}”. {tip}"
        if author and self.engine.search(query, 1, area=area).total:
            return (
                f"No paper by an author matching “{author}” matches “{shown}”. "
                "Check the spelling or drop the author."
            )
        return f"No paper matches “{shown}”. {QUERY_TIPS}"

    @search.autocomplete("area")
    async def area_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Areas of the corpus starting with (then containing) what was typed."""
        return area_choices(self.engine, current)

    # -- /paper -------------------------------------------------------------------------------

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
        paper = self.engine.require(paper_id)
        saved = paper.id in await self.bot.store.saved_ids(interaction.user.id)
        view = PaperView(self.bot, paper.id)
        callback = await interaction.response.send_message(
            embeds=E.paper_embeds(paper, saved=saved), view=view, ephemeral=not public
        )
        view.attach(callback, interaction)

    @paper.autocomplete("paper_id")
    async def paper_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids starting with what was typed, then titles containing its words."""
        return id_choices(self.engine, current)

    # -- /similar -----------------------------------------------------------------------------

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
        await show_similar(self.bot, interaction, paper_id, ephemeral=not public)

    @similar.autocomplete("paper_id")
    async def similar_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids starting with what was typed, then titles containing its words."""
        return id_choices(self.engine, current)


async def setup(bot: PaperBot) -> None:
    """Load the search cog."""
    await bot.add_cog(SearchCog(bot))
