"""What /ask and mention chat show: the answer embed, or the service's sentence when nothing answers."""

from __future__ import annotations

import discord

from bot.services.answers import AnswerReply
from bot.ui import embeds as E


def answer_message(reply: AnswerReply) -> tuple[str | None, list[discord.Embed]]:
    """(content, embeds) for an answer; the service's sentence instead when nothing was found."""
    if reply.notice is not None:
        return reply.notice, []
    return None, [E.answer_embed(reply.answer)]
