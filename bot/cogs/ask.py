"""/ask and mention chat: extractive answers quoted from the abstracts, with [n] citations
(rules: bot/services/answers.py; rendering: bot/ui/answers.py)."""

from __future__ import annotations

import logging
import re

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cooldown import shared_cooldown
from bot.errors import describe_query_error, new_error_id
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.answers import answer_message
from retrieval.errors import QueryError

log = logging.getLogger(__name__)


class AskCog(commands.Cog, name="Ask"):
    """Questions answered with quotes from the abstracts."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="ask", description="Ask a research question; get quoted sentences with citations"
    )
    @app_commands.describe(
        question="Your question, in plain words", public="Show the answer to everyone in the channel"
    )
    @shared_cooldown()
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 500],
        public: bool = False,
    ) -> None:
        """Ask a research question; get quoted sentences with citations."""
        content, embeds = answer_message(await self.bot.services.answers.ask(question))
        ephemeral = not public or not embeds  # "nothing found" is only for the asker
        await respond.send(interaction, E.fit_content(content), embeds=embeds, ephemeral=ephemeral)

    # -- mention chat -------------------------------------------------------------------------

    def question_from(self, message: discord.Message) -> str | None:
        """The message's question, or None when it is not for the bot.

        A message is for the bot when it mentions the bot, mentions the bot's own managed role (Discord's
        @-menu often offers the role first), or is a DM: in a DM every message is for the bot.
        """
        me = self.bot.user
        if me is None:
            return None
        patterns = [rf"<@!?{me.id}>"]
        guild = message.guild
        role = guild.self_role if isinstance(guild, discord.Guild) else None
        if role is not None:
            patterns.append(rf"<@&{role.id}>")
        for_me = (
            any(user.id == me.id for user in message.mentions)
            or (role is not None and role.id in message.raw_role_mentions)
            or isinstance(message.channel, discord.DMChannel)
        )
        if not for_me:
            return None
        return re.sub("|".join(patterns), " ", message.content).strip()

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        """Answer a message for the bot (a mention in a channel, any DM) as a reply to it."""
        if message.author.bot or (self.bot.user is not None and message.author.id == self.bot.user.id):
            return
        question = self.question_from(message)
        if question is None:
            return
        try:
            await self.answer_mention(message, question)
        except discord.HTTPException as exc:
            log.warning("could not reply to message %s: %s", message.id, exc)
        except Exception:
            error_id = new_error_id()
            log.exception("unexpected error %s answering mention %s", error_id, message.id)
            await self.reply(message, f"Something went wrong on our side (error id `{error_id}`).")

    async def answer_mention(self, message: discord.Message, question: str) -> None:
        """Help for an empty mention, the cooldown notice, or the answer."""
        if not question:
            name = self.bot.user.name if self.bot.user else "paperbot"
            await self.reply(message, self.bot.services.answers.mention_help(name))
            return
        retry = self.bot.cooldowns.retry_after(message.author.id)
        if retry:
            await self.reply(message, f"You're going a bit fast: try again in {max(1, round(retry))} s.")
            return
        try:
            reply = await self.bot.services.answers.ask(question)
        except QueryError as exc:
            await self.reply(message, describe_query_error(exc, question))
            return
        content, embeds = answer_message(reply)
        await self.reply(message, content, embeds=embeds)

    async def reply(
        self, message: discord.Message, content: str | None, *, embeds: list[discord.Embed] | None = None
    ) -> None:
        """Reply to ``message`` without pinging its author or anyone named in the text."""
        await message.reply(
            content=E.fit_content(content),
            embeds=embeds or [],
            mention_author=False,
            allowed_mentions=discord.AllowedMentions.none(),
        )


async def setup(bot: PaperBot) -> None:
    """Load the ask cog."""
    await bot.add_cog(AskCog(bot))
