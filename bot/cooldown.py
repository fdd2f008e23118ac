"""One per-user rate limit shared by /search, /ask, /similar and mention chat.

Use the :func:`shared_cooldown` check on an app command, or ``bot.cooldowns.retry_after(user_id)``
directly (mention chat, follow-ups, the "Ask about this paper" form): it records a use and returns 0.0,
or the seconds to wait (:func:`wait_message` says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import discord
from discord import app_commands

T = TypeVar("T")


def wait_message(retry_after: float) -> str:
    """What a user who went over the limit is told."""
    return f"You're going a bit fast: try again in {max(1, round(retry_after))} s."


class UserCooldowns:
    """``rate`` uses per ``per`` seconds per user, one bucket per user across every rate-limited entry."""

    def __init__(self, rate: int, per: float) -> None:
        self.rate = rate
        self.per = per
        self._buckets: dict[int, app_commands.Cooldown] = {}

    def bucket(self, user_id: int) -> app_commands.Cooldown:
        """The user's bucket (created on first use)."""
        bucket = self._buckets.get(user_id)
        if bucket is None:
            if len(self._buckets) > 10_000:  # forget idle users instead of growing forever
                self._buckets = {k: v for k, v in self._buckets.items() if v.get_tokens() < v.rate}
            bucket = self._buckets[user_id] = app_commands.Cooldown(self.rate, self.per)
        return bucket

    def retry_after(self, user_id: int) -> float:
        """Record one use by ``user_id``: 0.0 when allowed, else the seconds until the next use."""
        if self.per <= 0:
            return 0.0
        return self.bucket(user_id).update_rate_limit() or 0.0


def shared_cooldown() -> Callable[[T], T]:
    """An app-command check applying ``interaction.client.cooldowns`` (raises CommandOnCooldown)."""

    async def predicate(interaction: discord.Interaction[Any]) -> bool:
        cooldowns: UserCooldowns | None = getattr(interaction.client, "cooldowns", None)
        if cooldowns is None:
            return True
        retry = cooldowns.retry_after(interaction.user.id)
        if retry:
            raise app_commands.CommandOnCooldown(cooldowns.bucket(interaction.user.id), retry)
        return True

    return app_commands.check(predicate)
