"""Autocomplete choices: services' suggestions as Discord ``Choice`` objects.

Discord shows at most 25 choices, each name and string value at most 100 characters; every builder
here stays within that. The suggestions come from the services, which answer from memory.
"""

from __future__ import annotations

from collections.abc import Iterable

from discord import app_commands

from bot.limits import MAX_CHOICES, OPTION_LIMIT
from bot.services.base import Suggestion
from bot.ui import embeds as E


def paper_choice(paper_id: str, title: str) -> app_commands.Choice[str]:
    """``"<id> — <title>"`` (within 100 characters) whose value is the id."""
    return app_commands.Choice(name=E.label(f"{paper_id} — {title}"), value=paper_id[:OPTION_LIMIT])


def id_choices(papers: Iterable[tuple[str, str]]) -> list[app_commands.Choice[str]]:
    """Choices for ``(id, title)`` pairs (corpus papers matching what was typed)."""
    return [paper_choice(pid, title) for pid, title in list(papers)[:MAX_CHOICES]]


def area_choices(areas: Iterable[str]) -> list[app_commands.Choice[str]]:
    """Choices for area names."""
    return [
        app_commands.Choice(name=E.label(name), value=E.label(name)) for name in list(areas)[:MAX_CHOICES]
    ]


def suggestion_choices(suggestions: Iterable[Suggestion]) -> list[app_commands.Choice[str]]:
    """Choices for a service's suggestions (labels fitted; values are ids or list names, within 100)."""
    return [
        app_commands.Choice(name=E.label(s.label), value=s.value[:OPTION_LIMIT])
        for s in list(suggestions)[:MAX_CHOICES]
    ]
