"""What the saved-lists commands show: list pages, the lists overview, and the confirmation view.

Everything here only formats what :mod:`bot.services.library` returns and goes through
:mod:`bot.ui.embeds` for Discord's limits; a view never decides *what* to delete, only *whether* the
user confirmed (the service's :class:`~bot.services.base.Confirmation` does the rest).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord

from bot import limits, render
from bot.services.base import Confirmation
from bot.services.library import ListsOverview, SavedListPage, list_label
from bot.store import ListInfo, SavedItem, SavedPage, StoreError
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.paginator import Page, PageSource
from bot.ui.views import BaseView
from retrieval.english import plural

log = logging.getLogger(__name__)

MISSING_MARK = "⚠ no longer in the corpus"
CONFIRM_NOT_YOURS = "Only the person who ran this command can answer this question."
LIST_NOT_YOURS = "This list belongs to someone else — run /saved yourself to see your own."
# Room for the embed title, footer and per-field overhead inside Discord's 6000-character total.
_PAGE_BUDGET = 5400


def saved_item_field(item: SavedItem, number: int, *, budget: int = 1200) -> tuple[str, str]:
    """(field name, field value) for one saved paper, both within ``budget`` characters together.

    The value has the authors (et al.), area, id, saved date and the note; papers that left the corpus
    are marked and shown from the store's snapshot.
    """
    name_room = max(40, min(limits.FIELD_NAME_LIMIT, budget // 4))
    name = f"{number}. {render.title(item.title or item.paper_id, name_room - len(str(number)) - 2)}"
    lines = [
        " · ".join(
            part
            for part in (
                discord.utils.escape_markdown(E.shorten_authors(item.authors, item.et_al, limit=160)),
                item.area,
            )
            if part
        ),
        f"{render.code(item.paper_id)} · saved {discord.utils.format_dt(item.saved_at, 'd')}",
    ]
    if item.url:
        lines[-1] += f" · [link]({item.url})" if len(item.url) <= 300 else ""
    if not item.in_corpus:
        lines.append(f"**{MISSING_MARK}** (shown from your saved copy)")
    fixed = "\n".join(lines)
    value_room = max(80, min(limits.FIELD_VALUE_LIMIT, budget - len(name)))
    if item.note:
        # The note is the user's own text: it gets what is left of the field, cut with an ellipsis.
        note_room = value_room - len(fixed) - 4
        if note_room > 10:
            fixed += "\n> " + E.truncate(" ".join(item.note.split()), note_room)
    return name, E.truncate(fixed, value_room)


def saved_page_embed(
    page: SavedPage, *, page_index: int, page_count: int, other_lists: Sequence[ListInfo] = ()
) -> discord.Embed:
    """One page of a saved list as a single embed (one field per paper), within Discord's limits."""
    embed = discord.Embed(
        title=E.truncate(f"Saved papers — {list_label(page.list_name)}", limits.TITLE_LIMIT),
        colour=E.BRAND,
    )
    missing = sum(1 for item in page.items if not item.in_corpus)
    budget = _PAGE_BUDGET // max(1, len(page.items))
    for number, item in enumerate(page.items, start=page.offset + 1):
        name, value = saved_item_field(item, number, budget=budget)
        embed.add_field(name=name, value=value, inline=False)
    footer = f"{plural(page.total, 'paper')} · page {page_index + 1}/{max(page_count, 1)} · newest first"
    others = [info for info in other_lists if info.name != page.list_name]
    if others:
        shown = ", ".join(f"{info.name} ({info.count})" for info in others[:8])
        more = f" +{len(others) - 8} more" if len(others) > 8 else ""
        footer += f"\nOther lists: {shown}{more} — /saved list:<name>"
    embed.set_footer(text=E.truncate(footer, 300))
    if missing:
        embed.description = (
            f"{MISSING_MARK}: {plural(missing, 'paper')} on this page (kept from your saved copy)."
        )
    return E.clamp_embed(embed)


def saved_list_page(result: SavedListPage) -> Page:
    """A :class:`SavedListPage` as a paginator page (one embed)."""
    if result.notice is not None:
        return Page(content=None, embeds=[E.notice(result.notice)], page_count=1, data=result)
    embed = saved_page_embed(
        result.saved, page_index=result.page, page_count=result.pages, other_lists=result.other_lists
    )
    return Page(content=None, embeds=[embed], page_count=result.pages, data=result)


class SavedListSource(PageSource):
    """Pages of one user's list, read through the service on demand (so paging shows current data)."""

    def __init__(self, fetch: Callable[[int], Awaitable[SavedListPage]], first: SavedListPage) -> None:
        self.fetch = fetch
        self.first: SavedListPage | None = first

    async def get_page(self, index: int) -> Page:
        """Load page ``index`` (the service clamps it to the last page if the list shrank meanwhile)."""
        if self.first is not None and self.first.page == index:
            result, self.first = self.first, None
        else:
            result = await self.fetch(index)
        return saved_list_page(result)


def lists_embed(overview: ListsOverview) -> discord.Embed:
    """The user's lists with their item counts and creation dates."""
    lists, default_list = overview.lists, overview.default_list
    total = sum(info.count for info in lists)
    lines = [
        f"**{info.name}** — {plural(info.count, 'paper')} · "
        f"created {discord.utils.format_dt(info.created_at, 'd')}"
        + (" · default" if info.name.casefold() == default_list.casefold() else "")
        for info in lists
    ]
    embed = discord.Embed(
        title=f"Your lists — {plural(len(lists), 'list')}, {plural(total, 'paper')}",
        description=E.truncate("\n".join(lines), limits.DESCRIPTION_LIMIT),
        colour=E.BRAND,
    )
    embed.set_footer(text="/saved list:<name> shows one · /list create|rename|delete manage them")
    return E.clamp_embed(embed)


class ConfirmView(BaseView):
    """Confirm / Cancel for a service's :class:`Confirmation`: only the invoker may answer; a timeout
    disables both.

    The action runs only on Confirm and its text replaces the question; a
    :class:`~bot.store.StoreError` it raises is shown instead (nothing was changed in that case).
    """

    def __init__(self, *, owner: discord.abc.User, confirmation: Confirmation, timeout: float) -> None:
        super().__init__(owner=owner, timeout=timeout, not_owner_message=CONFIRM_NOT_YOURS)
        self.confirmation = confirmation
        self.outcome: str | None = None  # "confirmed", "cancelled", "expired"

    async def start(self, interaction: discord.Interaction) -> None:
        """Ask the question ephemerally as the response to ``interaction`` with the two buttons."""
        question = E.fit_content(self.confirmation.question)
        sent = await respond.send(interaction, question, view=self, ephemeral=True)
        self.attach(sent, interaction)

    def _finish(self, outcome: str) -> bool:
        """Record the outcome once; False when the view was already answered (double click)."""
        if self.outcome is not None:
            return False
        self.outcome = outcome
        self.disable_all()
        self.stop()
        return True

    @discord.ui.button(label="Confirm", style=discord.ButtonStyle.danger)
    async def confirm(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        """Run the action and replace the question with its result."""
        if not self._finish("confirmed"):
            await respond.defer(interaction)
            return
        try:
            text = await self.confirmation.confirm()
        except StoreError as exc:
            text = str(exc)
        await respond.edit(interaction, content=E.fit_content(text), view=None)

    @discord.ui.button(label="Cancel", style=discord.ButtonStyle.secondary)
    async def cancel(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        """Leave everything as it is."""
        if not self._finish("cancelled"):
            await respond.defer(interaction)
            return
        await respond.edit(interaction, content=self.confirmation.cancelled, view=None)

    async def on_timeout(self) -> None:
        """Disable both buttons and say that nothing happened."""
        if self.outcome is not None:
            return
        self.outcome = "expired"
        self.disable_all()
        await self.edit_message(content=self.confirmation.expired, view=self)
