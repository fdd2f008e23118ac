"""Canaries: one test per private discord.py name the fake Discord (tests/support/fake_discord.py)
relies on, so a discord.py release that moves one fails here, by name, instead of somewhere deep in
the cog tests. .ci/run runs them on the lowest and the newest discord.py the project allows."""

from __future__ import annotations

import inspect
import re

import discord
from discord import app_commands

from bot.settings import PROJECT_ROOT as ROOT
from tests.support.fake_discord import _live_views


def test_canary_discord_version_is_in_the_allowed_range():
    """The suite runs on the lowest and the newest allowed discord.py (.ci/run); pyproject says which."""
    spec = re.search(r'"discord\.py>=([\d.]+),<(\d+)"', (ROOT / "pyproject.toml").read_text()).groups()
    version = tuple(int(part) for part in re.findall(r"\d+", discord.__version__)[:3])
    assert tuple(int(part) for part in spec[0].split(".")) <= version < (int(spec[1]),)


def test_canary_route_base_is_shared_by_rest_and_webhooks():
    assert isinstance(discord.http.Route.BASE, str)
    assert discord.webhook.async_.Route is discord.http.Route


def test_canary_default_gateway():
    assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY).startswith("wss://gateway.discord.gg")
    assert "cls.DEFAULT_GATEWAY" in inspect.getsource(discord.gateway.DiscordWebSocket.from_client)


def test_canary_task_names():
    assert "name='CommandTree-invoker'" in inspect.getsource(app_commands.CommandTree._from_interaction)
    assert "discord-ui-view-dispatch-" in inspect.getsource(discord.ui.View._dispatch_item)
    assert "discord-ui-modal-dispatch-" in inspect.getsource(discord.ui.Modal)
    assert "discord-ui-dynamic-item-" in inspect.getsource(discord.ui.view.ViewStore)
    assert "name=f'discord.py: {event_name}'" in inspect.getsource(discord.Client._schedule_event)


async def test_canary_connection_parsers(harness):
    parsers = harness.bot._connection.parsers
    assert callable(parsers["INTERACTION_CREATE"]) and callable(parsers["MESSAGE_CREATE"])


async def test_canary_view_store_views(harness):
    # Harness.timeout_views/close walk ConnectionState._view_store._views to find live views.
    ex = await harness.run_command("search", {"query": "learning"})
    store = harness.bot._connection._view_store
    assert isinstance(store._views, dict)
    assert [v for v in _live_views(harness.bot) if not v.is_finished()]
    assert ex.message
