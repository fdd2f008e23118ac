"""The DM a reindex sends for /watch: one embed per watch (bot/services/watch.py decides what)."""

from __future__ import annotations

import discord

from bot import limits
from bot.services.watch import DirectMessage, alert_lines, describe
from bot.ui import embeds as E


def dm_embeds(dm: DirectMessage) -> list[discord.Embed]:
    """One embed per watch: the watch as title, its new papers, "+N more" and the /search."""
    embeds = [
        discord.Embed(
            title=E.truncate(f"{describe(alert.watch)} — {alert.matches.total} new", limits.TITLE_LIMIT),
            description=E.truncate("\n".join(alert_lines(alert)), limits.DESCRIPTION_LIMIT),
            colour=E.BRAND,
        )
        for alert in dm.alerts
    ]
    return E.fit_embeds(embeds)
