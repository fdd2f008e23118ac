"""Result pages shared by /search, /similar and /paper: sources, the results view and the paper view.

``ResultsView`` = :class:`~bot.ui.paginator.Paginator` + a "Save a paper from this page…" select and a
"Similar papers to…" select (rows 1 and 2). ``PaperView`` = Save + Similar buttons under one paper.
``save_for_user`` is the one place a click turns into ``bot.store.save_paper``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import discord

from bot.ui import embeds as E
from bot.ui.paginator import Page, PageSource, Paginator
from bot.ui.views import BaseView
from retrieval.errors import UnknownPaperError
from retrieval.models import Hit

if TYPE_CHECKING:
    from bot.app import PaperBot
    from bot.engine import Engine

log = logging.getLogger(__name__)

SIMILAR_POOL = 25  # similar papers fetched once and paged in memory


class SearchSource(PageSource):
    """Pages of ``engine.search`` for one query; each page is a fresh ranked slice (offset paging)."""

    def __init__(
        self,
        engine: Engine,
        query: str,
        *,
        per_page: int,
        area: str | None = None,
        author: str | None = None,
        saved_ids: set[str] | None = None,
    ) -> None:
        self.engine = engine
        self.query = query
        self.per_page = per_page
        self.area = area
        self.author = author
        self.saved_ids = saved_ids or set()
        self.total = 0

    async def get_page(self, index: int) -> Page:
        results = self.engine.search(
            self.query,
            self.per_page,
            offset=max(index, 0) * self.per_page,
            area=self.area,
            author=self.author,
        )
        if not results.hits and index > 0 and results.total:
            # The index changed under us (reindex) and this page no longer exists: show the last one.
            return await self.get_page(math.ceil(results.total / self.per_page) - 1)
        self.total = results.total
        pages = max(1, math.ceil(results.total / self.per_page))
        filters = "".join(
            f" · {name}: {E.truncate(value, 60)}"
            for name, value in (("area", self.area), ("author", self.author))
            if value
        )
        header = E.page_header("Search", self.query, results.total, index, pages) + filters
        return Page(
            content=header,
            embeds=E.hits_embeds(results.hits, self.saved_ids),
            page_count=pages,
            data=list(results.hits),
        )


class HitListSource(PageSource):
    """Pages over a fixed list of hits (used for /similar)."""

    def __init__(
        self,
        hits: Sequence[Hit],
        *,
        title: str,
        subject: str,
        per_page: int,
        saved_ids: set[str] | None = None,
    ) -> None:
        self.hits = list(hits)
        self.title = title
        self.subject = subject
        self.per_page = per_page
        self.saved_ids = saved_ids or set()

    async def get_page(self, index: int) -> Page:
        pages = max(1, math.ceil(len(self.hits) / self.per_page))
        index = max(0, min(index, pages - 1))
        chunk = self.hits[index * self.per_page : (index + 1) * self.per_page]
        header = E.page_header(self.title, self.subject, len(self.hits), index, pages)
        return Page(content=header, embeds=E.hits_embeds(chunk, self.saved_ids), page_count=pages, data=chunk)


def hit_option(hit: Hit) -> discord.SelectOption:
    """A select option for a hit: title as label, id as value, authors · area as description."""
    paper = hit.paper
    detail = E.shorten_authors(paper.authors, paper.et_al, keep=2)
    if paper.area:
        detail += f" · {paper.area}"
    return discord.SelectOption(
        label=E.label(f"{hit.rank}. {E.plain(paper.title or paper.id)}"),
        value=E.label(paper.id),
        description=E.label(detail),
    )


async def save_for_user(bot: PaperBot, interaction: discord.Interaction, paper_id: str) -> None:
    """Save ``paper_id`` to the clicking user's default list and confirm ephemerally."""
    paper = bot.engine.get(paper_id) if bot.engine is not None else None
    if paper is None:
        raise UnknownPaperError(paper_id)
    result = await bot.store.save_paper(interaction.user.id, paper)
    title = E.truncate(paper.title or paper.id, 150)
    if result.created:
        text = f"Saved **{title}** (`{paper.id}`) to your list *{result.list_name}*. See it with /saved."
    else:
        text = f"**{title}** (`{paper.id}`) is already in your list *{result.list_name}*."
    await interaction.response.send_message(E.fit_content(text), ephemeral=True)


class ResultsView(Paginator):
    """A results page with paging, a save select and a similar-papers select (owner-only)."""

    def __init__(
        self, bot: PaperBot, source: PageSource, *, owner: discord.abc.User, ephemeral: bool
    ) -> None:
        super().__init__(source, owner=owner, timeout=bot.settings.view_timeout)
        self.bot = bot
        self.ephemeral = ephemeral
        self.save_select = self._paper_select("Save a paper from this page…", 1, self._on_save)
        self.similar_select = self._paper_select("Show papers similar to…", 2, self._on_similar)

    def _paper_select(
        self,
        placeholder: str,
        row: int,
        callback: Callable[[discord.Interaction], Awaitable[None]],
    ) -> discord.ui.Select[ResultsView]:
        """A select of this page's papers (options are filled per page by update_items)."""
        select: discord.ui.Select[ResultsView] = discord.ui.Select(
            placeholder=placeholder,
            min_values=1,
            max_values=1,
            row=row,
            options=[discord.SelectOption(label="—", value="-")],
        )
        select.callback = callback  # type: ignore[method-assign]
        self.add_item(select)
        return select

    def update_items(self, page: Page) -> None:
        super().update_items(page)
        hits: list[Hit] = page.data or []
        options = [hit_option(hit) for hit in hits[: E.OPTIONS_PER_SELECT]]
        # Two hits can never share an id, but guard: Discord rejects duplicate option values.
        unique = list({o.value: o for o in options}.values())
        for select in (self.save_select, self.similar_select):
            if unique:
                select.options = unique
                if select not in self.children:
                    self.add_item(select)
            elif select in self.children:
                self.remove_item(select)

    async def _on_save(self, interaction: discord.Interaction) -> None:
        paper_id = self.save_select.values[0]
        if isinstance(self.source, SearchSource | HitListSource):
            self.source.saved_ids.add(paper_id)
        await save_for_user(self.bot, interaction, paper_id)

    async def _on_similar(self, interaction: discord.Interaction) -> None:
        await show_similar(self.bot, interaction, self.similar_select.values[0], ephemeral=True)


async def show_similar(
    bot: PaperBot, interaction: discord.Interaction, paper_id: str, *, ephemeral: bool
) -> None:
    """Answer ``interaction`` with a paged list of papers similar to ``paper_id``."""
    engine = bot.engine
    assert engine is not None  # noqa: S101 - set in setup_hook before any command can run
    paper = engine.require(paper_id)
    hits = engine.similar(paper.id, SIMILAR_POOL)
    if not hits:
        await interaction.response.send_message(
            f"No other paper shares enough words with `{paper.id}` to count as similar.", ephemeral=True
        )
        return
    saved = await bot.store.saved_ids(interaction.user.id)
    source = HitListSource(
        hits,
        title="Similar to",
        subject=E.plain(paper.title or paper.id),
        per_page=bot.settings.page_size,
        saved_ids=saved,
    )
    view = ResultsView(bot, source, owner=interaction.user, ephemeral=ephemeral)
    await view.start(interaction, ephemeral=ephemeral)


class PaperView(BaseView):
    """Under one paper: Save (to the clicker's own list — anyone may save) and Similar papers."""

    def __init__(self, bot: PaperBot, paper_id: str) -> None:
        super().__init__(owner=None, timeout=bot.settings.view_timeout)
        self.bot = bot
        self.paper_id = paper_id

    @discord.ui.button(label="Save", emoji="⭐", style=discord.ButtonStyle.primary)
    async def save(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await save_for_user(self.bot, interaction, self.paper_id)

    @discord.ui.button(label="Similar papers", style=discord.ButtonStyle.secondary)
    async def similar(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await show_similar(self.bot, interaction, self.paper_id, ephemeral=True)
