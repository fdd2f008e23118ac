"""``paperbot run`` with ``PROCESSES`` against the tests' fake Discord: the product's supervisor whose
children run the real :func:`bot.app.run_bot` (login, gateway, shards), with discord.py pointed at the
fake's URLs (``PAPERBOT_TEST_API`` and ``PAPERBOT_TEST_GATEWAY``) and every other host refused.

Usage: ``python tests/bot/_prefork_run.py`` with the settings in the environment (``DISCORD_TOKEN``,
``PROCESSES``, ``SHARD_COUNT``, ``CORPUS_PATH``, ``INDEX_CACHE_DIR``, ``DATABASE_PATH``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import discord  # noqa: E402
import yarl  # noqa: E402

from bot.app import run_bot  # noqa: E402
from bot.logs import setup_logging  # noqa: E402
from bot.settings import Settings, load_settings  # noqa: E402
from bot.supervisor import Supervisor  # noqa: E402
from tests.support.fake_discord import identify_without_pause, loopback_only_trace  # noqa: E402


def target(settings: Settings) -> int:
    return run_bot(settings, http_trace=loopback_only_trace())


if __name__ == "__main__":
    setup_logging("INFO")
    discord.http.Route.BASE = os.environ["PAPERBOT_TEST_API"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(os.environ["PAPERBOT_TEST_GATEWAY"])
    identify_without_pause()
    settings = load_settings(env=os.environ, dotenv=False)
    raise SystemExit(Supervisor(settings, target=target, stop_grace=30.0).run())
