"""The rules of each feature: plain arguments in (user id, query, paper id…), plain dataclasses out.

Two thin adapters sit on top: the cogs (:mod:`bot.cogs`, Discord) and the offline console
(:mod:`bot.console`, a terminal). Neither decides anything a user could notice — caps, validation,
the wording of a reply — they parse their input, call one service method and render what it returns
(``bot/ui`` turns results into embeds and views; the console prints the same embeds as text).
Services never import discord.py's client machinery, the cogs or the console.

One module per feature, each with one service class built from a :class:`Context`:

=================  ==========================================================================
``search``         /search result pages, the no-hit explanation, area and id autocomplete
``papers``         /paper pages and /similar result pages
``answers``        /ask and mention chat answers
``library``        saving, unsaving, saved-list pages, list management, /forgetme
``transfer``       /export files and /import merges
``admin``          /admin reindex and /admin stats
=================  ==========================================================================

Adding a feature (say ``watch``):

1. ``bot/services/watch.py``: ``class WatchService`` taking a :class:`Context`, async methods whose
   arguments are plain values and whose results are frozen dataclasses (or :class:`Notice` for a
   sentence to show). Known failures raise :class:`~bot.errors.UserFacingError` (or a store/retrieval
   error), which both adapters turn into the same sentence.
2. A field for it on :class:`Services` below.
3. A cog in ``bot/cogs/`` that parses the interaction, calls it and renders (``bot/ui``), and a
   handler in :mod:`bot.console` (``tests/bot/test_console.py`` fails while a command has none).
4. ``tests/bot/services/test_watch.py`` with plain arguments, and a cog test through the fake Discord.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.engine import Engine
from bot.errors import StartupError
from bot.services.admin import AdminService
from bot.services.answers import AnswerService
from bot.services.base import Context, Notice
from bot.services.library import LibraryService
from bot.services.papers import PaperService
from bot.services.search import SearchService
from bot.services.transfer import TransferService
from bot.store import Store, StoreError
from retrieval.errors import RetrievalError

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["Context", "Notice", "Services", "StartupError", "open_services"]


@dataclass
class Services:
    """Every feature's service, sharing one :class:`Context` (settings, engine, store)."""

    context: Context
    search: SearchService = field(init=False)
    papers: PaperService = field(init=False)
    answers: AnswerService = field(init=False)
    library: LibraryService = field(init=False)
    transfer: TransferService = field(init=False)
    admin: AdminService = field(init=False)

    def __post_init__(self) -> None:
        ctx = self.context
        self.search = SearchService(ctx)
        self.papers = PaperService(ctx)
        self.answers = AnswerService(ctx)
        self.library = LibraryService(ctx)
        self.transfer = TransferService(ctx)
        self.admin = AdminService(ctx)

    async def close(self) -> None:
        """Close the store (once)."""
        await self.context.close()


async def open_services(settings: Settings, *, started_at: dt.datetime | None = None) -> Services:
    """Open the store and the index, reconcile them, and return the services over them.

    Raises:
        StartupError: The database or the corpus cannot be opened (one line, fit for a terminal).
    """
    try:
        settings.database_path.parent.mkdir(parents=True, exist_ok=True)
        store: Any = await Store.open(
            settings.database_path,
            max_saved_per_user=settings.max_saved_per_user,
            max_lists_per_user=settings.max_lists_per_user,
        )
    except (StoreError, OSError) as exc:
        raise StartupError(f"cannot open the database {settings.database_path}: {exc}") from None
    try:
        try:
            engine = await Engine.load(settings, store=store)
        except (RetrievalError, OSError, ValueError) as exc:
            raise StartupError(f"cannot load the corpus {settings.corpus_path}: {exc}") from None
        result = await store.reconcile(engine.index.papers)
    except BaseException:
        await store.close()
        raise
    log.info("saved lists reconciled with the corpus: %s", result)
    context = Context(
        settings=settings,
        engine=engine,
        store=store,
        started_at=started_at or dt.datetime.now(dt.UTC),
    )
    return Services(context)
