"""Every answer to an interaction goes through here: send, edit, defer, send_modal.

Discord accepts exactly one *response* (callback) per interaction, within 3 s of its creation; after
that, the interaction's token sends *followups* and edits its original response for 15 minutes. The
helpers below pick the right one from discord.py's public ``interaction.response.is_done()``:

- :func:`send` answers with a message, or, when the interaction was answered or deferred already,
  sends a followup (after a "thinking…" deferral the first followup replaces the placeholder);
- :func:`edit` edits the message a component is on, or, once the press was deferred, edits the
  original response (the same message);
- :func:`defer` acknowledges now (False, doing nothing, when something answered already);
- :func:`send_modal` opens a modal; it must be the first answer, so call it before any slow work.

The 3-second watchdog (:mod:`bot.ui.deadline`) defers through :func:`defer` too. Each interaction has
one lock (kept in the public ``interaction.extras``) held from the ``is_done()`` check until Discord
has acknowledged the callback, so the watchdog and the handler never both answer (Discord's 40060,
"already acknowledged") and a handler whose answer comes after the watchdog's deferral becomes a
followup or an edit. Handlers need not know whether a deferral happened.

Cogs and views never touch ``interaction.response`` or ``interaction.followup`` themselves (a test
in tests/test_project.py keeps it so): everything they send in answer to an interaction goes through
this module. Editing a message later through a stored token (a view's timeout, a progress message)
uses ``edit_original_response`` directly, as that is no answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

import discord

_LOCK = "paperbot.respond.lock"
#: Options ``response.send_message`` / ``edit_message`` take that followups and edits do not.
_RESPONSE_ONLY = ("delete_after", "suppress_embeds")


def _lock(interaction: discord.Interaction) -> asyncio.Lock:
    lock = interaction.extras.get(_LOCK)
    if lock is None:
        lock = interaction.extras[_LOCK] = asyncio.Lock()
    return lock


def answered(interaction: discord.Interaction) -> bool:
    """True once the interaction has its response (a message, an update, a deferral or a modal)."""
    return interaction.response.is_done()


def response_type(interaction: discord.Interaction) -> discord.InteractionResponseType | None:
    """How the interaction was answered (None while it is not)."""
    return interaction.response.type


async def send(interaction: discord.Interaction, content: Any = None, **fields: Any) -> Any:
    """Answer with a message; a followup once the interaction was answered or deferred.

    Takes ``response.send_message``'s options (``ephemeral``, ``embeds``, ``view``, ``file``…).
    Returns discord.py's callback response or the followup's message; :meth:`BaseView.attach`
    takes either.
    """
    async with _lock(interaction):
        if not interaction.response.is_done():
            return await interaction.response.send_message(content, **fields)
    for name in _RESPONSE_ONLY:
        fields.pop(name, None)
    if content is not None:
        fields["content"] = content
    return await interaction.followup.send(wait=True, **fields)


async def edit(interaction: discord.Interaction, **fields: Any) -> Any:
    """Edit the message a component press is on (its response); the original response once deferred."""
    async with _lock(interaction):
        if not interaction.response.is_done():
            return await interaction.response.edit_message(**fields)
    for name in _RESPONSE_ONLY:
        fields.pop(name, None)
    return await interaction.edit_original_response(**fields)


async def defer(interaction: discord.Interaction, *, ephemeral: bool = False, thinking: bool = False) -> bool:
    """Acknowledge now, unless something answered already; True when this call deferred.

    For a command, ``thinking=True`` shows "thinking…" (``ephemeral`` decides who sees the answer);
    for a component press, a plain ``defer`` is a silent update of the message it is on.
    """
    async with _lock(interaction):
        if interaction.response.is_done():
            return False
        await interaction.response.defer(ephemeral=ephemeral, thinking=thinking)
        return True


async def send_modal(interaction: discord.Interaction, modal: discord.ui.Modal, /) -> Any:
    """Open ``modal``; raises :class:`discord.InteractionResponded` if the interaction was answered."""
    async with _lock(interaction):
        return await interaction.response.send_modal(modal)
