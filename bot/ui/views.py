"""Base view: optional owner-only controls, disable-on-timeout, and errors through bot/errors.py.

Subclass :class:`BaseView` for any view (the paginator does). After sending, call
:meth:`BaseView.attach` with the response (or set ``view.message``) so the timeout can edit the message::

    view = MyView(owner=interaction.user, timeout=bot.settings.view_timeout)
    callback = await interaction.response.send_message("…", view=view, ephemeral=True)
    view.attach(callback)
"""

from __future__ import annotations

import logging
from typing import Any

import discord

from bot.errors import handle_interaction_error

log = logging.getLogger(__name__)

NOT_YOURS = "These buttons belong to someone else's search — run the command yourself to get your own."


class BaseView(discord.ui.View):
    """A view whose controls only ``owner`` may use (when given) and that disables itself on timeout."""

    def __init__(
        self,
        *,
        owner: discord.abc.User | None = None,
        timeout: float | None = 600.0,
        not_owner_message: str = NOT_YOURS,
    ) -> None:
        super().__init__(timeout=timeout)
        self.owner_id = owner.id if owner is not None else None
        self.not_owner_message = not_owner_message
        self.message: discord.InteractionMessage | discord.WebhookMessage | discord.Message | None = None

    def attach(self, sent: Any) -> None:
        """Remember the message this view was sent on (a callback response, webhook message or message)."""
        resource = getattr(sent, "resource", sent)
        if isinstance(resource, discord.Message):
            self.message = resource

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Refuse (ephemerally) anyone but the owner, when the view has one."""
        if self.owner_id is None or interaction.user.id == self.owner_id:
            return True
        await interaction.response.send_message(self.not_owner_message, ephemeral=True)
        return False

    def disable_all(self) -> None:
        """Disable every control (links stay usable)."""
        for item in self.children:
            if isinstance(item, discord.ui.Button) and item.url:
                continue
            if hasattr(item, "disabled"):
                item.disabled = True  # type: ignore[attr-defined]

    async def on_timeout(self) -> None:
        """Disable every control and edit the message so a stale message does not look clickable."""
        self.disable_all()
        if self.message is None:
            return
        try:
            await self.message.edit(view=self)
        except discord.HTTPException as exc:
            # The interaction token lives 15 minutes; after that an ephemeral message can't be edited.
            log.debug("could not disable the controls of message %s: %s", self.message.id, exc)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        """Known errors become short ephemeral messages; the rest are logged with an error id."""
        await handle_interaction_error(interaction, error, where=f"{type(self).__name__} control")
