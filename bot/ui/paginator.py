"""The one paginator view: ◀ previous / next ▶ over any :class:`PageSource`, owner-only, self-disabling.

How to use it (e.g. a paged list in a cog)::

    class SavedSource(PageSource):
        async def get_page(self, index: int) -> Page:
            page = await store.get_list(user_id, offset=index * 5, limit=5)
            return Page(content=f"Saved — page {index + 1}", embeds=[...],
                        page_count=max(1, -(-page.total // 5)), data=page.items)

    view = Paginator(SavedSource(), owner=interaction.user, timeout=bot.settings.view_timeout)
    await view.start(interaction, ephemeral=True)

Subclasses add their own per-page controls by overriding :meth:`Paginator.update_items` (called
before every render with the new :class:`Page`) — keep ≤ 5 rows and ≤ 25 options per select.
``start`` works whether or not the interaction was deferred. Only ``owner`` may press the controls
(others get an ephemeral refusal); on timeout every control is disabled and the message edited.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import discord

from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.views import NOT_YOURS, BaseView

log = logging.getLogger(__name__)


@dataclass
class Page:
    """One rendered page: what to send, how many pages exist, and the source's own data for controls."""

    content: str | None
    embeds: list[discord.Embed]
    page_count: int = 1
    data: Any = None


class PageSource(ABC):
    """Something that can render page ``index`` (0-based) on demand."""

    @abstractmethod
    async def get_page(self, index: int) -> Page:
        """Render page ``index``; the returned ``page_count`` drives the buttons."""


class Paginator(BaseView):
    """Previous/next buttons over a :class:`PageSource`; owner-only; disables itself on timeout."""

    def __init__(
        self,
        source: PageSource,
        *,
        owner: discord.abc.User,
        timeout: float | None = 600.0,
        not_owner_message: str = NOT_YOURS,
    ) -> None:
        super().__init__(owner=owner, timeout=timeout, not_owner_message=not_owner_message)
        self.source = source
        self.index = 0
        self.page: Page | None = None

    # -- rendering ---------------------------------------------------------------------------------

    def update_items(self, page: Page) -> None:
        """Refresh the controls for ``page``; subclasses call super() and then update their own items."""
        many = page.page_count > 1
        self.previous_page.disabled = self.index <= 0
        self.next_page.disabled = self.index >= page.page_count - 1
        self.page_label.label = f"{self.index + 1}/{max(page.page_count, 1)}"
        for item in (self.previous_page, self.page_label, self.next_page):
            if many and item not in self.children:
                self.add_item(item)
            elif not many and item in self.children:
                self.remove_item(item)

    def _kwargs(self, page: Page) -> dict[str, Any]:
        return {"content": E.fit_content(page.content), "embeds": E.fit_embeds(page.embeds), "view": self}

    async def render(self, index: int) -> Page:
        """Load page ``index`` from the source and update the controls (does not send anything)."""
        page = await self.source.get_page(index)
        self.index = max(0, min(index, page.page_count - 1))
        self.page = page
        self.update_items(page)
        return page

    async def start(
        self,
        interaction: discord.Interaction,
        *,
        ephemeral: bool = True,
        index: int = 0,
    ) -> None:
        """Send page ``index`` as the answer to ``interaction`` (responded or deferred, either works)."""
        page = await self.render(index)
        kwargs = self._kwargs(page)
        if not self.children:
            kwargs["view"] = discord.utils.MISSING  # a single page needs no view at all
        sent = await respond.send(interaction, ephemeral=ephemeral, **kwargs)
        self.attach(sent, interaction)
        if not self.children:
            self.stop()

    async def show_page(self, interaction: discord.Interaction, index: int) -> None:
        """Re-render the message in place at page ``index`` (a component interaction's response)."""
        page = await self.render(index)
        await respond.edit(interaction, **self._kwargs(page))

    # -- controls --------------------------------------------------------------------------------

    @discord.ui.button(label="◀ Previous", style=discord.ButtonStyle.secondary, row=0)
    async def previous_page(
        self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]
    ) -> None:
        await self.show_page(interaction, self.index - 1)

    @discord.ui.button(label="1/1", style=discord.ButtonStyle.secondary, disabled=True, row=0)
    async def page_label(
        self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]
    ) -> None:
        await respond.defer(interaction)  # never enabled; here only to show the page number

    @discord.ui.button(label="Next ▶", style=discord.ButtonStyle.secondary, row=0)
    async def next_page(self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]) -> None:
        await self.show_page(interaction, self.index + 1)
