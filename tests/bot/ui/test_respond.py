"""bot.ui.respond, the one reply helper, on the real discord.py path: an answer is the interaction's
response until something answered, then a followup; a deferral happens once; a modal only first."""

from __future__ import annotations

import discord
import pytest
from discord import app_commands

from bot.ui import respond


def webhook_posts(ex):
    return [r for r in ex.requests if r.method == "POST" and r.path.startswith("/webhooks/")]


def add_command(harness, callback) -> str:
    command = app_commands.Command(name="replytest", description="Reply helper test", callback=callback)
    harness.bot.tree.add_command(command)
    return "replytest"


async def test_send_answers_first_then_follows_up(harness):
    seen = []

    async def twice(interaction: discord.Interaction) -> None:
        seen.append(respond.answered(interaction))
        await respond.send(interaction, "first", ephemeral=True)
        seen.append(respond.answered(interaction))
        await respond.send(interaction, "second", ephemeral=True, delete_after=60)  # dropped: a followup

    ex = await harness.run_command(add_command(harness, twice))
    assert seen == [False, True]
    assert ex.callback_type == 4 and ex.callback.body["content"] == "first" and ex.callback.ephemeral
    [followup] = webhook_posts(ex)
    assert followup.body["content"] == "second" and followup.ephemeral


async def test_defer_happens_once_and_the_answer_replaces_thinking(harness):
    deferred = []

    async def slow(interaction: discord.Interaction) -> None:
        deferred.append(await respond.defer(interaction, ephemeral=True, thinking=True))
        deferred.append(await respond.defer(interaction, ephemeral=True, thinking=True))
        await respond.send(interaction, "done", ephemeral=True)

    ex = await harness.run_command(add_command(harness, slow))
    assert deferred == [True, False]
    assert ex.callback_type == 5 and ex.callback.ephemeral
    [followup] = webhook_posts(ex)
    assert followup.body["content"] == "done"


async def test_response_type_reports_how_it_was_answered(harness):
    kinds = []

    async def answer(interaction: discord.Interaction) -> None:
        kinds.append(respond.response_type(interaction))
        await respond.send(interaction, "hi", ephemeral=True)
        kinds.append(respond.response_type(interaction))

    await harness.run_command(add_command(harness, answer))
    assert kinds == [None, discord.InteractionResponseType.channel_message]


async def test_a_modal_must_be_the_first_answer(harness):
    raised = []

    class Modal(discord.ui.Modal, title="Note"):
        note = discord.ui.TextInput(label="Note", custom_id="note")

    async def late_modal(interaction: discord.Interaction) -> None:
        await respond.send(interaction, "answered", ephemeral=True)
        with pytest.raises(discord.InteractionResponded):
            await respond.send_modal(interaction, Modal())
        raised.append(True)

    ex = await harness.run_command(add_command(harness, late_modal))
    assert raised == [True] and ex.callback_type == 4 and not harness.fake.modals
