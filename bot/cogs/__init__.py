"""The Discord adapters, one cog per feature; what their option annotations share."""

from __future__ import annotations

from discord import app_commands

from bot.limits import OPTION_LIMIT

#: A typed id, list name, area or author: what an autocomplete choice's value can hold.
ShortText = app_commands.Range[str, 1, OPTION_LIMIT]
