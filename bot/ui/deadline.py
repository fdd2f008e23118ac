"""Discord's 3-second rule: any interaction still unanswered ~2 s after it was created is deferred.

Discord drops an interaction ("This interaction failed") unless its first response arrives within 3 s.
Most handlers answer in milliseconds, but any of them can wait: on a busy database, a large export or
import, the disk. Rather than guess which await may be slow, every command and every component press
gets a watchdog (:func:`watch`): if the handler has not answered by :data:`DEFER_AFTER` seconds after
the interaction was created, the watchdog defers it (a "thinking…" reply for commands, ephemeral unless
the command's ``public`` option is set; a silent deferred update for buttons and selects).

Handlers need not know: they answer through :mod:`bot.ui.respond`, which turns an answer that comes
after the watchdog's deferral into a followup (``send``) or an edit of the original response
(``edit``), and whose per-interaction lock keeps the watchdog and the handler from both answering.
:class:`PaperTree` starts the watchdog for every command; :class:`bot.ui.views.BaseView` for every
accepted press; a modal, when the bot has one, starts it from its ``interaction_check``
(``watch(interaction, update=False)``) so a slow submission is deferred too. A modal itself can only
be a first answer: open it before any slow work. Only public discord.py API is used.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

import discord
from discord import app_commands

from bot.ui import respond

log = logging.getLogger(__name__)

#: Seconds after an interaction's creation at which an unanswered interaction is deferred.
DEFER_AFTER = 2.0
#: Never wait less than this (a host clock ahead of Discord's would otherwise defer everything).
MIN_WAIT = 0.25


def seconds_left(interaction: discord.Interaction, after: float = DEFER_AFTER) -> float:
    """Seconds until ``interaction`` is ``after`` s old (at least :data:`MIN_WAIT`, at most ``after``)."""
    age = (dt.datetime.now(dt.UTC) - interaction.created_at).total_seconds()
    return min(after, max(MIN_WAIT, after - age))


def _ephemeral(interaction: discord.Interaction) -> bool:
    namespace = getattr(interaction, "namespace", None)
    return not bool(getattr(namespace, "public", False))


def watch(interaction: discord.Interaction, *, update: bool) -> None:
    """Defer ``interaction`` if it is still unanswered :data:`DEFER_AFTER` s after it was created.

    Call from inside the task that handles the interaction: the watchdog is cancelled when that task
    ends. ``update=True`` (buttons, selects) defers with a silent update of the message.
    """
    handler = asyncio.current_task()
    if handler is None or respond.answered(interaction):
        return

    async def watchdog() -> None:
        await asyncio.sleep(seconds_left(interaction))
        try:
            if update:
                deferred = await respond.defer(interaction)
            else:
                deferred = await respond.defer(interaction, ephemeral=_ephemeral(interaction), thinking=True)
            if deferred:
                log.info("deferred interaction %s: still working after %.0f s", interaction.id, DEFER_AFTER)
        except discord.HTTPException as exc:
            log.warning("could not defer interaction %s: %s", interaction.id, exc)

    task = asyncio.create_task(watchdog(), name=f"paperbot-deadline-{interaction.id}")
    handler.add_done_callback(lambda _handler: task.cancel())


class PaperTree(app_commands.CommandTree):  # type: ignore[type-arg]
    """The bot's command tree: every slash command gets the 3-second watchdog."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.type is discord.InteractionType.application_command:
            watch(interaction, update=False)
        return True
