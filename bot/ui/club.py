"""The /club show embed: the server's reading list, who added each paper and when."""

from __future__ import annotations

import discord

from bot import limits, render
from bot.services.club import ClubPage
from bot.ui import embeds as E

#: Entries shown in /club show (the rest are in /export scope:club).
SHOWN = 20


def club_embed(page: ClubPage, guild_name: str | None = None) -> discord.Embed:
    """Up to :data:`SHOWN` entries, oldest first: title, id, who added it and when, the note."""
    lines = []
    for n, entry in enumerate(page.entries[:SHOWN], start=1):
        title = render.title(entry.title or entry.paper_id, 120)
        who = f"<@{entry.added_by}>" if entry.added_by else "a former member"
        line = (
            f"**{n}. {title}** ({render.code(entry.paper_id)})\n"
            f"added by {who} {discord.utils.format_dt(entry.added_at, 'R')}"
        )
        if entry.paper_id not in page.in_corpus:
            line += " · ⚠ no longer in the corpus"
        if entry.note:
            line += f"\n> {discord.utils.escape_markdown(render.truncate(entry.note, 200))}"
        lines.append(line)
    more = len(page.entries) - SHOWN
    if more > 0:
        lines.append(f"+{more} more: /export scope:club has them all.")
    where = f" — {guild_name}" if guild_name else ""
    embed = discord.Embed(
        title=E.truncate(f"Reading list{where} ({len(page.entries)})", limits.TITLE_LIMIT),
        description=E.truncate("\n\n".join(lines), limits.DESCRIPTION_LIMIT),
        colour=E.BRAND,
    )
    embed.set_footer(text="/club add id:<paper> · /club remove id:<paper> · /export scope:club")
    return E.clamp_embed(embed)
