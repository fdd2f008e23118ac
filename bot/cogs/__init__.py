"""The Discord adapters, one cog per feature; what they share: the base :class:`Cog`, the option
annotation of short text and the autocomplete callbacks (``@app_commands.autocomplete(id=...)``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.limits import OPTION_LIMIT
from bot.services.base import Notice
from bot.store import StoreError
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.choices import area_choices, id_choices, suggestion_choices

if TYPE_CHECKING:
    from bot.app import PaperBot
    from bot.services.registry import Services

log = logging.getLogger(__name__)
T = TypeVar("T")

#: A typed id, list name, area or author: what an autocomplete choice's value can hold.
ShortText = app_commands.Range[str, 1, OPTION_LIMIT]
Choices = list[app_commands.Choice[str]]


class Cog(commands.Cog):
    """A feature's cog: the bot, its services, and the one way a cog answers with a sentence."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def services(self) -> Services:
        """The bot's services (opened in setup_hook, before any cog loads)."""
        return self.bot.services

    async def reply(self, interaction: discord.Interaction, notice: Notice | str, **fields: Any) -> None:
        """Answer with a service's notice (only for the user unless it is public) or a sentence (only for
        the user), whether or not the interaction was deferred."""
        if isinstance(notice, str):
            notice = Notice(notice)
        await respond.send(interaction, E.fit_content(notice.text), ephemeral=not notice.public, **fields)


# -- autocomplete: answered from memory or one store read, never an error (Discord cannot show one) ----


def _services(interaction: discord.Interaction) -> Services:
    return interaction.client.services  # type: ignore[attr-defined, no-any-return]


async def _or_nothing(what: str, suggestions: Awaitable[list[T]]) -> list[T]:
    """The store's suggestions, or none when it fails: an empty list is the honest answer."""
    try:
        return await suggestions
    except StoreError as exc:
        log.warning("%s autocomplete failed: %s", what, exc)
        return []


async def corpus_papers(interaction: discord.Interaction, current: str) -> Choices:
    """Paper ids of the corpus starting with what was typed, then titles containing its words."""
    return id_choices(await asyncio.to_thread(_services(interaction).search.paper_ids, current))


async def corpus_areas(interaction: discord.Interaction, current: str) -> Choices:
    """Areas of the corpus starting with (then containing) what was typed."""
    return area_choices(_services(interaction).search.areas(current))


async def user_saved_papers(interaction: discord.Interaction, current: str) -> Choices:
    """The user's own saved papers matching what was typed (id prefix or words of the title)."""
    found = _services(interaction).library.saved_suggestions(interaction.user.id, current)
    return suggestion_choices(await _or_nothing("saved-id", found))


async def user_lists(interaction: discord.Interaction, current: str) -> Choices:
    """The user's lists containing what was typed, with their counts."""
    found = _services(interaction).library.list_suggestions(interaction.user.id, current)
    return suggestion_choices(await _or_nothing("list", found))


async def user_lists_or_new(interaction: discord.Interaction, current: str) -> Choices:
    """Like :func:`user_lists`, plus what was typed (as a new list) and the default list."""
    found = _services(interaction).library.list_suggestions(interaction.user.id, current, new=True)
    return suggestion_choices(await _or_nothing("list", found))


async def club_papers(interaction: discord.Interaction, current: str) -> Choices:
    """The papers on this server's reading list whose id or title contains what was typed."""
    if interaction.guild_id is None:
        return []
    found = await _or_nothing("club", _services(interaction).club.suggestions(interaction.guild_id, current))
    return [app_commands.Choice(name=label, value=pid) for label, pid in found]


async def user_watches(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[int]]:
    """The user's watches whose number or query contains what was typed."""
    found = _services(interaction).watch.suggestions(interaction.user.id, str(current))
    return [app_commands.Choice(name=label, value=wid) for label, wid in await _or_nothing("watch", found)]
