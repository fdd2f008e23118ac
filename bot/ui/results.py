"""Result pages shared by /search, /similar and /paper: the results view and the paper view.

``ResultsView`` = :class:`~bot.ui.paginator.Paginator` over a :class:`~bot.services.search.ResultPage`
fetcher + a "Save a paper from this page…" select and a "Show papers similar to…" select (rows 1
and 2). ``PaperView`` = Save + Similar + "Ask about this paper" buttons under one paper; the last opens
:func:`bot.ui.followup.ask_paper_modal`, whose question is answered from that paper alone (as
``/ask paper:`` does).
Every control calls one service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord

from bot import limits
from bot.services.search import ResultPage
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.followup import ask_paper_modal
from bot.ui.paginator import Page, PageSource, Paginator
from bot.ui.views import BaseView
from retrieval.models import Hit

if TYPE_CHECKING:
    from bot.services.registry import Services

FetchResults = Callable[[int], Awaitable[ResultPage]]
SAVE_PLACEHOLDER = "Save a paper from this page…"
SIMILAR_PLACEHOLDER = "Show papers similar to…"


def result_content(page: ResultPage) -> str:
    """The header line of a result page: what was asked, how many matched, which page, the filters."""
    header = E.page_header(page.title, page.subject, page.total, page.page, page.pages, quoted=page.quoted)
    filters = "".join(
        f" · {name}: {E.truncate(value, 60)}"
        for name, value in (("area", page.area), ("author", page.author))
        if value
    )
    return header + filters


def hit_option(hit: Hit) -> discord.SelectOption:
    """A select option for a hit: title as label, id as value, authors · area as description."""
    paper = hit.paper
    return discord.SelectOption(
        label=E.label(f"{hit.rank}. {paper.title or paper.id}"),
        value=E.label(paper.id),
        description=E.label(E.byline(paper)),
    )


def hit_options(hits: tuple[Hit, ...] | list[Hit]) -> list[discord.SelectOption]:
    """Options for a page's hits (at most 25, never two with one value: Discord rejects that)."""
    options = [hit_option(hit) for hit in hits[: limits.OPTIONS_PER_SELECT]]
    return list({o.value: o for o in options}.values())


class ResultSource(PageSource):
    """Pages of a :class:`ResultPage` fetcher (a search or a similar list), rendered as embeds."""

    def __init__(self, fetch: FetchResults, first: ResultPage | None = None) -> None:
        self.fetch = fetch
        self.first = first

    async def get_page(self, index: int) -> Page:
        if self.first is not None and self.first.page == index:
            result, self.first = self.first, None  # the page the command already computed
        else:
            result = await self.fetch(index)
        return Page(
            content=result_content(result),
            embeds=E.hits_embeds(result.hits, result.saved_ids, result.reasons),
            page_count=result.pages,
            data=result,
        )


async def send_notice(interaction: discord.Interaction, text: str) -> None:
    """Answer ``interaction`` with ``text``, only for the user (responded or deferred, either works)."""
    await respond.send(interaction, E.fit_content(text), ephemeral=True)


class ResultsView(Paginator):
    """A results page with paging, a save select and a similar-papers select (owner-only)."""

    def __init__(
        self, services: Services, source: ResultSource, *, owner: discord.abc.User, ephemeral: bool
    ) -> None:
        super().__init__(source, owner=owner, timeout=services.context.settings.view_timeout)
        self.services = services
        self.ephemeral = ephemeral
        self.save_select = self._paper_select(SAVE_PLACEHOLDER, 1, self._on_save)
        self.similar_select = self._paper_select(SIMILAR_PLACEHOLDER, 2, self._on_similar)

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
        result: ResultPage | None = page.data
        options = hit_options(result.hits if result is not None else ())
        for select in (self.save_select, self.similar_select):
            if options:
                select.options = options
                if select not in self.children:
                    self.add_item(select)
            elif select in self.children:
                self.remove_item(select)

    async def _on_save(self, interaction: discord.Interaction) -> None:
        await save_for_user(self.services, interaction, self.save_select.values[0])

    async def _on_similar(self, interaction: discord.Interaction) -> None:
        await show_similar(self.services, interaction, self.similar_select.values[0], ephemeral=True)


async def save_for_user(services: Services, interaction: discord.Interaction, paper_id: str) -> None:
    """Save ``paper_id`` to the clicking user's default list and confirm ephemerally."""
    notice = await services.library.quick_save(interaction.user.id, paper_id)
    await send_notice(interaction, notice.text)


async def show_results(
    services: Services,
    interaction: discord.Interaction,
    first: ResultPage,
    fetch: FetchResults,
    *,
    ephemeral: bool,
) -> None:
    """Answer ``interaction`` with ``first`` and the controls to page, save and find similar papers;
    with the notice alone (only for the user) when there is no result."""
    if first.notice is not None:
        await send_notice(interaction, first.notice)
        return
    view = ResultsView(services, ResultSource(fetch, first), owner=interaction.user, ephemeral=ephemeral)
    await view.start(interaction, ephemeral=ephemeral, index=first.page)


async def show_similar(
    services: Services, interaction: discord.Interaction, paper_id: str, *, ephemeral: bool
) -> None:
    """Answer ``interaction`` with a paged list of papers similar to ``paper_id``."""
    user_id = interaction.user.id

    async def fetch(index: int) -> ResultPage:
        return await services.papers.similar(user_id, paper_id, page=index)

    await show_results(services, interaction, await fetch(0), fetch, ephemeral=ephemeral)


class PaperView(BaseView):
    """Under one paper: Save (to the clicker's own list — anyone may save), Similar papers, and Ask
    about this paper (a modal; the answer is shown like the page: to everyone when it is public)."""

    def __init__(self, services: Services, paper_id: str, *, ephemeral: bool = True) -> None:
        super().__init__(owner=None, timeout=services.context.settings.view_timeout)
        self.services = services
        self.paper_id = paper_id
        self.ephemeral = ephemeral

    @discord.ui.button(label="Save", emoji="⭐", style=discord.ButtonStyle.primary)
    async def save(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await save_for_user(self.services, interaction, self.paper_id)

    @discord.ui.button(label="Similar papers", style=discord.ButtonStyle.secondary)
    async def similar(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await show_similar(self.services, interaction, self.paper_id, ephemeral=True)

    @discord.ui.button(label="Ask about this paper", emoji="\u2753", style=discord.ButtonStyle.secondary)
    async def ask(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await respond.send_modal(
            interaction, ask_paper_modal(self.services, self.paper_id, ephemeral=self.ephemeral)
        )
