"""Discord's 3-second rule: any interaction still unanswered ~2 s after it was created is deferred.

Discord drops an interaction ("This interaction failed") unless its first response arrives within 3 s.
Most handlers answer in milliseconds, but any of them can wait: on a busy database, a large export or
import, the disk. Rather than guess which await may be slow, every command and every component press
gets a watchdog (:func:`watch`): if the handler has not answered by :data:`DEFER_AFTER` seconds after
the interaction was created, the watchdog defers it (a "thinking…" reply for commands, ephemeral unless
the command's ``public`` option is set; a silent deferred update for buttons and selects).

Handlers need not know: the interaction's :class:`DeadlineResponse` turns a later
``response.send_message`` into ``followup.send`` and ``response.edit_message`` into
``edit_original_response`` once the watchdog deferred, and a lock keeps the two from answering at
once. :class:`PaperTree` starts the watchdog for every command; :class:`bot.ui.views.BaseView` for
every accepted press.

Private discord.py name used (canary in tests/bot/test_deadline.py): ``Interaction._cs_response``, the
cached slot behind ``Interaction.response``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

import discord
from discord import app_commands

log = logging.getLogger(__name__)

#: Seconds after an interaction's creation at which an unanswered interaction is deferred.
DEFER_AFTER = 2.0
#: Never wait less than this (a host clock ahead of Discord's would otherwise defer everything).
MIN_WAIT = 0.25


class DeadlineResponse(discord.InteractionResponse):  # type: ignore[type-arg]
    """An interaction response that a watchdog may defer; answers after that become followups/edits."""

    __slots__ = ("_lock", "deferred_by_watchdog", "interaction")

    def __init__(self, parent: discord.Interaction) -> None:
        super().__init__(parent)
        self.interaction = parent  # our own reference: InteractionResponse keeps it in a private slot
        self._lock = asyncio.Lock()
        self.deferred_by_watchdog = False

    async def defer_for_time(self, *, ephemeral: bool, update: bool) -> bool:
        """Defer unless the handler answered already; True when this deferred."""
        async with self._lock:
            if self.is_done():
                return False
            if update:
                await super().defer()
            else:
                await super().defer(ephemeral=ephemeral, thinking=True)
            self.deferred_by_watchdog = True
            return True

    async def defer(self, **kwargs: Any) -> Any:
        async with self._lock:
            if self.deferred_by_watchdog:
                return None  # already deferred, as the handler now asks
            return await super().defer(**kwargs)

    async def send_message(self, content: Any = None, **kwargs: Any) -> Any:
        async with self._lock:
            if not self.deferred_by_watchdog:
                return await super().send_message(content, **kwargs)
        kwargs.pop("delete_after", None)
        if content is not None:
            kwargs["content"] = content
        return await self.interaction.followup.send(wait=True, **kwargs)

    async def edit_message(self, **kwargs: Any) -> Any:
        async with self._lock:
            if not self.deferred_by_watchdog:
                return await super().edit_message(**kwargs)
        kwargs.pop("delete_after", None)
        kwargs.pop("suppress_embeds", None)
        return await self.interaction.edit_original_response(**kwargs)

    async def send_modal(self, modal: discord.ui.Modal, /) -> Any:
        async with self._lock:
            return await super().send_modal(modal)


def install(interaction: discord.Interaction) -> DeadlineResponse | None:
    """Give ``interaction`` a :class:`DeadlineResponse` (before anything answered it); None if too late."""
    current = getattr(interaction, "_cs_response", None)
    if isinstance(current, DeadlineResponse):
        return current
    if current is not None and current.is_done():
        return None
    response = DeadlineResponse(interaction)
    interaction._cs_response = response  # type: ignore[attr-defined]
    return response


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
    response = install(interaction)
    handler = asyncio.current_task()
    if response is None or handler is None:
        return

    async def watchdog() -> None:
        await asyncio.sleep(seconds_left(interaction))
        try:
            if await response.defer_for_time(ephemeral=_ephemeral(interaction), update=update):
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
