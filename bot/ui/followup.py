"""Asking in a form: the "Ask a follow-up" button under every answer and the paper page's "Ask about
this paper", both a modal (Discord's form) whose question one service call answers.

A form works wherever a reply cannot: under an ephemeral answer (nobody can reply to one), under a
slash command's answer and without the Message Content intent (Discord passes on a form's text always).

The follow-up button is a :class:`discord.ui.DynamicItem` with one fixed ``custom_id``: the bot answers a
press on any answer it ever sent, after a restart and in any process, because the conversation is read
back from the message the button is on (:func:`bot.ui.answers.thread_of`), never from memory.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import discord

from bot.cooldown import wait_message
from bot.errors import handle_interaction_error
from bot.services.conversation import FollowUp
from bot.ui import embeds as E
from bot.ui import respond
from bot.ui.answers import follow_up_message, thread_of
from bot.ui.deadline import watch

if TYPE_CHECKING:
    from bot.services.registry import Services

FOLLOW_UP_ID = "paperbot:followup"
FOLLOW_UP_LABEL = "Ask a follow-up"
NO_THREAD = "That message carries no answer to follow up on: ask with /ask or by mentioning me."

Answerer = Callable[[str], Awaitable[FollowUp]]


def follow_up_view(embeds: Sequence[discord.Embed]) -> discord.ui.View | None:
    """The "Ask a follow-up" button for a message whose embeds carry a conversation (None otherwise)."""
    if thread_of(embeds) is None:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(FollowUpButton())
    return view


async def send_answer(
    interaction: discord.Interaction, result: FollowUp, *, ephemeral: bool
) -> None:
    """Answer ``interaction`` with a reply in a conversation and its follow-up button; a sentence alone
    (a save, nothing found) only for the user."""
    content, embeds = follow_up_message(result)
    view = follow_up_view(embeds)
    fields: dict[str, Any] = {"embeds": embeds, "ephemeral": ephemeral or not embeds}
    if view is not None:
        fields["view"] = view
    await respond.send(interaction, E.fit_content(content), **fields)


class QuestionModal(discord.ui.Modal):
    """One question, answered by ``answer`` (a service call), within the per-user cooldown of /ask."""

    def __init__(self, *, title: str, label: str, answer: Answerer, ephemeral: bool, where: str) -> None:
        super().__init__(title=title)
        self.question: discord.ui.TextInput[QuestionModal] = discord.ui.TextInput(
            custom_id="question",
            placeholder="e.g. how is it trained? what data did they use? who wrote it?",
            min_length=1,
            max_length=500,
        )
        self.add_item(discord.ui.Label(text=label, component=self.question))
        self.answer = answer
        self.ephemeral = ephemeral
        self.where = where

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        watch(interaction, update=False)  # a slow answer is deferred, not dropped
        return True

    async def on_submit(self, interaction: discord.Interaction) -> None:
        cooldowns = getattr(interaction.client, "cooldowns", None)
        retry = cooldowns.retry_after(interaction.user.id) if cooldowns is not None else 0.0
        if retry:
            await respond.send(interaction, wait_message(retry), ephemeral=True)
            return
        await send_answer(interaction, await self.answer(self.question.value), ephemeral=self.ephemeral)

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        await handle_interaction_error(interaction, error, where=self.where)


def ask_paper_modal(services: Services, paper_id: str, *, ephemeral: bool) -> QuestionModal:
    """The paper page's form: the question is answered from that paper alone (as /ask paper: does)."""

    async def answer(question: str) -> FollowUp:
        return await services.conversation.ask_paper(question, paper_id)

    return QuestionModal(
        title="Ask about this paper",
        label="Your question about this paper",
        answer=answer,
        ephemeral=ephemeral,
        where="the Ask about this paper form",
    )


class FollowUpButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=re.escape(FOLLOW_UP_ID)):
    """Under an answer: opens a form whose question is a follow-up of the answer the button is on."""

    def __init__(self) -> None:
        super().__init__(
            discord.ui.Button(
                label=FOLLOW_UP_LABEL, emoji="\U0001f4ac", style=discord.ButtonStyle.secondary,
                custom_id=FOLLOW_UP_ID,
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> FollowUpButton:
        return cls()

    async def callback(self, interaction: discord.Interaction) -> None:
        message = interaction.message
        thread = thread_of(message.embeds) if message is not None else None
        if thread is None:
            await respond.send(interaction, NO_THREAD, ephemeral=True)
            return
        services: Services = interaction.client.services  # type: ignore[attr-defined]
        user_id = interaction.user.id

        async def answer(question: str) -> FollowUp:
            return await services.conversation.follow_up(user_id, thread, question)

        ephemeral = bool(message is not None and message.flags.ephemeral)
        modal = QuestionModal(
            title=FOLLOW_UP_LABEL,
            label="Your follow-up question",
            answer=answer,
            ephemeral=ephemeral,
            where="the Ask a follow-up form",
        )
        await respond.send_modal(interaction, modal)
