"""Base view: optional owner-only controls, disable-on-timeout, and errors through bot/errors.py.

Subclass :class:`BaseView` for any view (the paginator does). After sending, call
:meth:`BaseView.attach` with the response and the interaction so the timeout can edit the message::

    view = MyView(owner=interaction.user, timeout=bot.settings.view_timeout)
    sent = await respond.send(interaction, "…", view=view, ephemeral=True)
    view.attach(sent, interaction)

Disabling on timeout needs an interaction token that can still edit the message, and Discord expires a
token 15 minutes after its interaction. discord.py restarts a view's timeout on every press, so the
original command's token alone is not enough: every press answered by editing the view's message
(``respond.edit`` / ``respond.defer``) becomes the view's editor, and the view's remaining
life is kept inside its editor token's life (:data:`VIEW_LIFE_MAX`), whatever ``timeout`` says.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

import discord

from bot.errors import handle_interaction_error
from bot.ui import respond
from bot.ui.deadline import watch

log = logging.getLogger(__name__)

NOT_YOURS = "These buttons belong to someone else's search — run the command yourself to get your own."
#: Discord accepts an interaction token for 15 minutes after the interaction.
TOKEN_LIFETIME = 15 * 60.0
#: A view times out at the latest this long after the interaction whose token edits its message,
#: leaving a minute for the disabling edit (and clock skew).
VIEW_LIFE_MAX = TOKEN_LIFETIME - 60.0
#: Responses after which a component interaction's ``@original`` is the message the component is on.
_EDITS_OWN_MESSAGE = (
    discord.InteractionResponseType.message_update,
    discord.InteractionResponseType.deferred_message_update,
)


class BaseView(discord.ui.View):
    """A view whose controls only ``owner`` may use (when given) and that disables itself on timeout."""

    def __init__(
        self,
        *,
        owner: discord.abc.User | None = None,
        timeout: float | None = 600.0,
        not_owner_message: str = NOT_YOURS,
    ) -> None:
        self.base_timeout = timeout
        super().__init__(timeout=None if timeout is None else min(timeout, VIEW_LIFE_MAX))
        self.owner_id = owner.id if owner is not None else None
        self.not_owner_message = not_owner_message
        self.message: discord.InteractionMessage | discord.WebhookMessage | discord.Message | None = None
        # The latest component interaction whose @original is self.message (None: the original command's
        # token, held by self.message, is the only one), and when the token that edits the message was born.
        self.editor: discord.Interaction | None = None
        self.token_born = dt.datetime.now(dt.UTC)

    def attach(self, sent: Any, interaction: discord.Interaction | None = None) -> None:
        """Remember the message this view was sent on (a callback response, webhook message or message).

        ``interaction`` is the one whose response (or followup) ``sent`` is: its token edits the message.
        """
        resource = getattr(sent, "resource", sent)
        if isinstance(resource, discord.Message):
            self.message = resource
        if interaction is not None:
            self.token_born = interaction.created_at
            if self.base_timeout is not None and not self.is_finished():
                self.timeout = self._life_left()

    def _life_left(self) -> float:
        """Seconds the view may still live so that its editor token can disable it (at least 1)."""
        age = (dt.datetime.now(dt.UTC) - self.token_born).total_seconds()
        left = VIEW_LIFE_MAX - age
        return max(1.0, left if self.base_timeout is None else min(self.base_timeout, left))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Refuse (ephemerally) anyone but the owner, when the view has one; track accepted presses."""
        if self.owner_id is None or interaction.user.id == self.owner_id:
            watch(interaction, update=True)  # a press still unanswered after 2 s is deferred
            self._track_press(interaction)
            return True
        await respond.send(interaction, self.not_owner_message, ephemeral=True)
        return False

    def _track_press(self, interaction: discord.Interaction) -> None:
        """Keep the view's life within the token that will disable it, across this press.

        discord.py restarts the timeout from ``self.timeout`` right after this check: until the press is
        answered, allow it the life of a fresh token (the press may edit the message); once the dispatch
        task is done, the press either became the editor or left the older token in charge.
        """
        if self.base_timeout is None:
            return
        self.timeout = min(self.base_timeout, VIEW_LIFE_MAX)
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - discord.py always dispatches in a task
            return
        task.add_done_callback(lambda _task: self._after_press(interaction))

    def _after_press(self, interaction: discord.Interaction) -> None:
        if self.is_finished():
            return
        if respond.response_type(interaction) in _EDITS_OWN_MESSAGE:
            self.editor = interaction
            self.token_born = interaction.created_at
        self.timeout = self._life_left()

    async def edit_message(self, **fields: Any) -> bool:
        """Edit the view's message through the freshest token that can; False (logged) when that failed."""
        if self.message is None:
            return False
        try:
            if self.editor is not None:
                await self.editor.edit_original_response(**fields)
            else:
                await self.message.edit(**fields)
        except discord.HTTPException as exc:
            age = (dt.datetime.now(dt.UTC) - self.token_born).total_seconds()
            log.warning(
                "could not update the controls of message %s (token %.0f s old): %s",
                self.message.id,
                age,
                exc,
            )
            return False
        return True

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
        await self.edit_message(view=self)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        """Known errors become short ephemeral messages; the rest are logged with an error id."""
        await handle_interaction_error(interaction, error, where=f"{type(self).__name__} control")
