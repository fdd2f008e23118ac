"""Every feature's service, built once over the shared context (see bot/services/__init__.py)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.engine import Engine
from bot.errors import StartupError
from bot.index_share import IndexShare
from bot.services.admin import AdminService
from bot.services.answers import AnswerService
from bot.services.base import Context
from bot.services.club import ClubService
from bot.services.conversation import ConversationService
from bot.services.library import LibraryService
from bot.services.papers import PaperService
from bot.services.recommend import RecommendService
from bot.services.search import SearchService
from bot.services.transfer import TransferService
from bot.services.watch import WatchService
from bot.store import DatabaseError, StoreError, open_store
from bot.store.errors import cause_of
from retrieval.errors import RetrievalError

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger(__name__)

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
    recommend: RecommendService = field(init=False)
    watch: WatchService = field(init=False)
    club: ClubService = field(init=False)
    conversation: ConversationService = field(init=False)

    def __post_init__(self) -> None:
        ctx = self.context
        self.search = SearchService(ctx)
        self.papers = PaperService(ctx)
        self.answers = AnswerService(ctx)
        self.library = LibraryService(ctx)
        self.transfer = TransferService(ctx)
        self.admin = AdminService(ctx)
        self.recommend = RecommendService(ctx)
        self.watch = WatchService(ctx)
        self.club = ClubService(ctx)
        self.conversation = ConversationService(ctx, self.answers, self.library)

    async def close(self) -> None:
        """Close the store (once)."""
        await self.context.close()


def _where(exc: BaseException, settings: Settings) -> str:
    """The database an error is about (the URL's password masked)."""
    return str(getattr(exc, "target", None) or settings.database_label)


async def open_services(settings: Settings, *, started_at: dt.datetime | None = None) -> Services:
    """Open the store and the index, reconcile them, and return the services over them.

    Raises:
        StartupError: The database or the corpus cannot be opened (one line, fit for a terminal).
    """
    target = settings.database_target
    try:
        store: Any = await open_store(
            target,
            max_saved_per_user=settings.max_saved_per_user,
            max_lists_per_user=settings.max_lists_per_user,
        )
    except (StoreError, OSError) as exc:
        raise StartupError(f"cannot open the database {_where(exc, settings)}: {cause_of(exc)}") from None
    share = IndexShare(store)
    try:
        try:
            # Holding the index lock: processes starting together build once (the first one builds,
            # the others open its file) and reconcile once (bot/index_share.py).
            async with share.building():
                try:
                    engine = await Engine.load(settings, store=store)
                except (RetrievalError, OSError, ValueError) as exc:
                    raise StartupError(f"cannot load the corpus {settings.corpus_path}: {exc}") from None
                result = await share.settle(engine)
        except DatabaseError as exc:
            # The database opened, yet the first write failed (read-only file, full disk, server gone).
            where = _where(exc, settings)
            raise StartupError(f"cannot write the database {where}: {cause_of(exc)}") from None
        await share.start(engine)
    except BaseException:
        await store.close()
        raise
    if result is not None:
        log.info("saved lists reconciled with the corpus: %s", result)
    else:
        log.info("index generation %d is served and was already reconciled", share.generation)
    context = Context(
        settings=settings,
        engine=engine,
        store=store,
        started_at=started_at or dt.datetime.now(dt.UTC),
    )
    return Services(context)
