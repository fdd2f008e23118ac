"""Autocomplete choices shared by the cogs: corpus paper ids with their titles, and areas.

Discord shows at most 25 choices, each name and string value at most 100 characters; every builder
here stays within that. They answer from memory (the engine's index), never from disk or network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord import app_commands

from bot.ui import embeds as E

if TYPE_CHECKING:
    from bot.engine import Engine

#: Most choices Discord accepts in one autocomplete answer.
MAX_CHOICES = 25


def paper_choice(paper_id: str, title: str) -> app_commands.Choice[str]:
    """``"<id> — <title>"`` (markdown removed, within 100 characters) whose value is the id."""
    return app_commands.Choice(name=E.label(f"{paper_id} — {E.plain(title)}"), value=paper_id[:100])


def id_choices(engine: Engine | None, current: str) -> list[app_commands.Choice[str]]:
    """Corpus papers whose id starts with ``current``, then titles containing its words."""
    if engine is None:
        return []
    return [paper_choice(pid, title) for pid, title in engine.complete_ids(current, MAX_CHOICES)]


def area_choices(engine: Engine | None, current: str) -> list[app_commands.Choice[str]]:
    """Areas of the corpus starting with (then containing) ``current``."""
    if engine is None:
        return []
    return [
        app_commands.Choice(name=E.label(name), value=E.label(name))
        for name in engine.complete_areas(current, MAX_CHOICES)
    ]
