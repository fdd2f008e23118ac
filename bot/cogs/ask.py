"""/ask, mention chat and follow-ups: extractive answers quoted from the abstracts, with [n] citations
(rules: bot/services/answers.py and bot/services/conversation.py; rendering: bot/ui/answers.py).

A message is for the bot when it mentions the bot (or its managed role), is a DM, or replies to one of
the bot's messages. A reply to one of its answers is a follow-up: the answer's conversation is read back
from that message (``referenced_message`` in the gateway event, else fetched), never from memory.

What Discord lets the bot read without the privileged Message Content intent: DMs, messages that
mention it, and replies to its regular messages (mention answers) that keep their @mention. A reply
that does not mention it, and any reply to a slash command's answer that does not @mention it in the
text, arrives without its text: the bot then says how to reach it, unless MESSAGE_CONTENT_INTENT says
the intent is on. Every answer also carries an "Ask a follow-up" button (bot/ui/followup.py): a form,
which needs no intent and works under ephemeral answers, which nobody can reply to.
"""

from __future__ import annotations

import asyncio
import logging
import re

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import PaperBot
from bot.cogs import ShortText
from bot.cooldown import shared_cooldown, wait_message
from bot.errors import describe_query_error, new_error_id
from bot.i18n import register
from bot.services.conversation import ASK_HINT, FollowUp
from bot.ui import embeds as E
from bot.ui.answers import follow_up_message, thread_of
from bot.ui.choices import id_choices
from bot.ui.followup import FollowUpButton, follow_up_view, send_answer
from retrieval.errors import QueryError, UnknownPaperError

log = logging.getLogger(__name__)

PAPER_OPTION = "Answer from this paper alone (start typing to search titles)"
register({PAPER_OPTION: "只根据这篇论文回答（输入文字以搜索标题）"})

#: Said to a reply whose text Discord withheld (no @mention, no Message Content intent).
UNREAD_REPLY = (
    "I can't read that reply: Discord only shows me replies that mention me. Put @{name} in your message, "
    "or press “Ask a follow-up” under my answer, or DM me; an admin can also switch on the Message "
    "Content intent for me."
)
#: Said when the message a follow-up replies to is gone.
DELETED = "I can't see the message you replied to (it was deleted), so this is answered as a new question."


class AskCog(commands.Cog, name="Ask"):
    """Questions answered with quotes from the abstracts."""

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="ask", description="Ask a research question; get quoted sentences with citations"
    )
    @app_commands.describe(
        question="Your question, in plain words",
        paper=PAPER_OPTION,
        public="Show the answer to everyone in the channel",
    )
    @shared_cooldown()
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 500],
        paper: ShortText | None = None,
        public: bool = False,
    ) -> None:
        """Ask a research question; get quoted sentences with citations."""
        services = self.bot.services
        if paper is None:
            result = FollowUp(await services.answers.ask(question))
        else:
            result = await services.conversation.ask_paper(question, paper)
        await send_answer(interaction, result, ephemeral=not public)  # "nothing found": only the asker

    @ask.autocomplete("paper")
    async def paper_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids starting with what was typed, then titles containing its words."""
        return id_choices(await asyncio.to_thread(self.bot.services.search.paper_ids, current))

    # -- mention chat and follow-ups -------------------------------------------------------------

    def mentioned(self, message: discord.Message) -> bool:
        """The message mentions the bot or its managed role (Discord's @-menu often offers the role
        first), or is a DM: in a DM every message is for the bot."""
        me = self.bot.user
        if me is None:
            return False
        role = message.guild.self_role if isinstance(message.guild, discord.Guild) else None
        return (
            any(user.id == me.id for user in message.mentions)
            or (role is not None and role.id in message.raw_role_mentions)
            or isinstance(message.channel, discord.DMChannel)
        )

    def question_from(self, message: discord.Message) -> str:
        """The message's text without the mentions of the bot (or its role)."""
        me = self.bot.user
        patterns = [rf"<@!?{me.id}>"] if me is not None else []
        role = message.guild.self_role if isinstance(message.guild, discord.Guild) else None
        if role is not None:
            patterns.append(rf"<@&{role.id}>")
        text = re.sub("|".join(patterns), " ", message.content) if patterns else message.content
        return " ".join(text.split())

    async def replied_to(self, message: discord.Message) -> tuple[discord.Message | None, bool]:
        """The message this one replies to (resolved by the gateway, cached, or fetched), and whether it
        is gone (deleted). ``(None, False)`` when it is not a reply or cannot be read."""
        ref = message.reference
        if ref is None or ref.message_id is None or ref.type is not discord.MessageReferenceType.reply:
            return None, False
        resolved = ref.resolved or ref.cached_message
        if isinstance(resolved, discord.Message):
            return resolved, False
        if isinstance(resolved, discord.DeletedReferencedMessage):
            return None, True
        try:
            return await message.channel.fetch_message(ref.message_id), False
        except discord.NotFound:
            return None, True
        except discord.HTTPException as exc:  # no Read Message History, Discord down: not a follow-up
            log.warning("could not fetch message %s that %s replies to: %s", ref.message_id, message.id, exc)
            return None, False

    def withheld(self, message: discord.Message) -> bool:
        """Discord withheld the message's text: nothing at all arrived, and the bot is not told it may
        read every message (a message always has text, a file, an embed, a sticker or a poll)."""
        return not (
            self.bot.settings.message_content_intent
            or message.content
            or message.attachments
            or message.embeds
            or message.stickers
            or message.poll
        )

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        """Answer a message for the bot as a reply to it: a follow-up, a question, or help."""
        me = self.bot.user
        if message.author.bot or me is None or message.author.id == me.id:
            return
        mentioned = self.mentioned(message)
        is_reply = message.reference is not None and message.reference.message_id is not None
        if not mentioned and not (is_reply and (message.content or self.withheld(message))):
            return  # neither for the bot nor possibly a reply to it: no fetch for every reply in a server
        try:
            target, gone = await self.replied_to(message) if is_reply else (None, False)
            ours = target if target is not None and target.author.id == me.id else None
            if mentioned or ours is not None:
                await self.answer_message(message, ours, mentioned=mentioned, gone=gone)
        except discord.HTTPException as exc:
            log.warning("could not reply to message %s: %s", message.id, exc)
        except Exception:
            error_id = new_error_id()
            log.exception("unexpected error %s answering message %s", error_id, message.id)
            await self.reply(message, f"Something went wrong on our side (error id `{error_id}`).")

    async def answer_message(
        self, message: discord.Message, ours: discord.Message | None, *, mentioned: bool, gone: bool
    ) -> None:
        """Help, the cooldown notice, how to reach the bot, a follow-up's reply, or a new question's answer.

        ``ours``: the bot's message this one replies to; ``gone``: it replies to a deleted message.
        """
        name = self.bot.user.name if self.bot.user else "paperbot"
        question = self.question_from(message)
        withheld = ours is not None and self.withheld(message)
        if not question and not withheld:
            if ours is None:
                await self.reply(message, self.bot.services.answers.mention_help(name))
            elif mentioned:
                await self.reply(message, ASK_HINT)
            return  # a reply to the bot with only a file or a sticker: nothing asked
        retry = self.bot.cooldowns.retry_after(message.author.id)
        if retry:
            await self.reply(message, wait_message(retry))
            return
        if withheld:
            await self.reply(message, UNREAD_REPLY.format(name=name))
            return
        thread = thread_of(ours.embeds) if ours is not None else None
        try:
            if thread is not None:
                result = await self.bot.services.conversation.follow_up(message.author.id, thread, question)
            else:
                result = FollowUp(await self.bot.services.answers.ask(question), DELETED if gone else None)
            content, embeds = follow_up_message(result)
        except QueryError as exc:
            await self.reply(message, describe_query_error(exc, question))
            return
        except UnknownPaperError as exc:  # the paper left the corpus between the answer and the save
            await self.reply(message, f"The paper {exc} is no longer in the corpus.")
            return
        await self.reply(message, content, embeds=embeds)

    async def reply(
        self, message: discord.Message, content: str | None, *, embeds: list[discord.Embed] | None = None
    ) -> None:
        """Reply to ``message`` without pinging its author or anyone named in the text; an answer with
        its "Ask a follow-up" button."""
        view = follow_up_view(embeds or [])
        await message.reply(
            content=E.fit_content(content),
            embeds=embeds or [],
            mention_author=False,
            allowed_mentions=discord.AllowedMentions.none(),
            **({"view": view} if view is not None else {}),
        )


async def setup(bot: PaperBot) -> None:
    """Load the ask cog, and the follow-up button of every answer it ever sent."""
    bot.add_dynamic_items(FollowUpButton)
    await bot.add_cog(AskCog(bot))

