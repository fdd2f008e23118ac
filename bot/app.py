"""The Discord bot: :class:`PaperBot` (all start-up work in ``setup_hook``) and :func:`run_bot`.

Attributes the cogs use: ``bot.services`` (:class:`bot.services.Services`, every feature's rules),
``bot.settings``, ``bot.cooldowns`` (shared per-user limit) and ``await bot.is_admin(user)``;
``bot.store`` and ``bot.engine`` are the services' store and engine.

Tests start the same bot against a fake Discord (tests/support/fake_discord.py); the offline console
does not start it at all: it calls the services directly (:mod:`bot.console`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import signal
from collections.abc import Sequence
from typing import Any

import aiohttp
import discord
from discord.ext import commands

from bot.cooldown import UserCooldowns
from bot.engine import Engine
from bot.errors import StartupError, on_tree_error
from bot.i18n import PaperTranslator
from bot.services.registry import Services, open_services
from bot.settings import Settings, SettingsError
from bot.ui.deadline import PaperTree
from retrieval.errors import RetrievalError

log = logging.getLogger(__name__)

# One cog per feature; tests may start the bot with a subset.
EXTENSIONS: tuple[str, ...] = (
    "bot.cogs.search",
    "bot.cogs.ask",
    "bot.cogs.library",
    "bot.cogs.admin",
    "bot.cogs.recommend",
    "bot.cogs.watch",
    "bot.cogs.club",
)


def default_intents(message_content: bool = False) -> discord.Intents:
    """Non-privileged intents, unless ``message_content`` (MESSAGE_CONTENT_INTENT) says the application has
    the privileged Message Content intent switched on. Without it DMs, mentions and replies that keep
    their @mention still carry their text; with it, replies to the bot that do not mention it do too."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = message_content
    return intents


class PaperBot(commands.AutoShardedBot):
    """The paper bot. Construct with settings; ``login`` runs :meth:`setup_hook`, which does all the work.

    Sharded the way discord.py does it: ``SHARD_COUNT``/``SHARD_IDS`` name this process's shards;
    unset, discord.py asks Discord how many are needed (one connection when one suffices).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        http_trace: aiohttp.TraceConfig | None = None,
        extensions: Sequence[str] | None = None,
        sync_commands: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(
            # Slash commands only; the mention prefix is never processed (see on_message below).
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=default_intents(settings.message_content_intent),
            # Abstracts and queries are untrusted text: nothing we send may ever ping anyone.
            allowed_mentions=discord.AllowedMentions.none(),
            http_trace=http_trace,
            tree_cls=PaperTree,  # defers any command still unanswered after 2 s (Discord allows 3)
            shard_count=settings.shard_count,
            shard_ids=list(settings.shard_ids) if settings.shard_ids is not None else None,
            **options,
        )
        self.settings = settings
        self.services: Services  # set by setup_hook, before any cog loads
        self.store: Any = None  # = services.context.store once setup_hook ran
        self.engine: Engine | None = None  # = services.context.engine once setup_hook ran
        self.started_at = dt.datetime.now(dt.UTC)
        self.cooldowns = UserCooldowns(settings.cooldown_rate, settings.cooldown_per)
        self.extension_names: tuple[str, ...] = tuple(extensions) if extensions is not None else EXTENSIONS
        self.sync_commands = sync_commands
        self.synced: list[discord.app_commands.AppCommand] = []
        self._closed_store = False

    async def setup_hook(self) -> None:
        """Open the services (store, index, reconcile), load the cogs, translate, sync to DEV_GUILD_ID."""
        settings = self.settings
        self.services = await open_services(settings, started_at=self.started_at)
        self.store = self.services.context.store
        self.engine = self.services.context.engine

        self.tree.error(on_tree_error)
        await self.tree.set_translator(PaperTranslator())
        for name in self.extension_names:
            await self.load_extension(name)
        log.info("loaded extensions: %s", ", ".join(self.extension_names))

        if self.sync_commands and settings.dev_guild_id is not None:
            # Guild commands update instantly; global sync is an explicit /admin sync, never automatic.
            guild = discord.Object(id=settings.dev_guild_id)
            self.tree.copy_global_to(guild=guild)
            self.synced = await self.tree.sync(guild=guild)
            log.info(
                "synced %d commands to the development guild %s", len(self.synced), settings.dev_guild_id
            )

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands: mention chat is a listener in the ask cog."""
        return

    async def on_ready(self) -> None:
        """Only a log line: start-up work lives in setup_hook because on_ready fires on every resume."""
        log.info(
            "connected as %s (%s) to %d guild(s)", self.user, self.user and self.user.id, len(self.guilds)
        )

    async def is_admin(self, user: discord.abc.User) -> bool:
        """True for ADMIN_USER_IDS and the application's owner (or team members)."""
        if user.id in self.settings.admin_user_ids:
            return True
        return await self.is_owner(user)

    async def close(self) -> None:
        """Close the gateway/HTTP session, then the database (once)."""
        try:
            await super().close()
        finally:
            if self.store is not None and not self._closed_store:
                self._closed_store = True
                await self.services.close()
                log.info("database closed")


async def serve(settings: Settings, *, stop: asyncio.Event | None = None, **bot_options: Any) -> int:
    """Run the bot until it stops or ``stop`` is set (SIGTERM/SIGINT set it); return an exit code."""
    token = settings.require_token()
    try:
        # Fail before logging in: a wrong CORPUS_PATH should not cost a round-trip to Discord.
        from retrieval.corpus import corpus_files

        corpus_files(settings.corpus_path)
    except RetrievalError as exc:
        log.critical("paperbot cannot start: cannot load the corpus (%s)", exc)
        return 2
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
            installed.append(signum)
    bot = PaperBot(settings, **bot_options)
    try:
        async with bot:
            runner = asyncio.create_task(bot.start(token), name="paperbot-runner")
            stopper = asyncio.create_task(stop.wait(), name="paperbot-stop")
            await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not runner.done():
                log.info("shutting down")
                await bot.close()
            stopper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner  # re-raises a start-up error
    except StartupError as exc:
        log.critical("paperbot cannot start: %s", exc)
        return 2
    except discord.LoginFailure:
        log.critical(
            "paperbot cannot start: Discord rejected DISCORD_TOKEN (reset it in the developer portal)"
        )
        return 2
    except (aiohttp.ClientError, OSError) as exc:
        log.critical("paperbot cannot reach Discord: %s", exc)
        return 1
    except discord.PrivilegedIntentsRequired:
        log.critical(
            "paperbot cannot start: MESSAGE_CONTENT_INTENT is true but the application's Message Content "
            "Intent is off: switch it on (developer portal, Bot page) or set MESSAGE_CONTENT_INTENT=false"
        )
        return 2
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
    return 0


def run_bot(settings: Settings, **bot_options: Any) -> int:
    """Run the Discord bot until SIGTERM/SIGINT; 0 on a clean stop, 2 on a start-up problem."""
    try:
        settings.require_token()
    except SettingsError as exc:
        log.critical("paperbot cannot start: %s", exc)
        return 2
    try:
        return asyncio.run(serve(settings, **bot_options))
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return 130
