"""The one storage interface: :class:`Store`. Callers never see which database runs behind it.

:func:`bot.store.open_store` picks the driver from the target:

* a path → :class:`bot.store.sqlite.SQLiteStore` (one embedded file; the default);
* a ``postgresql://`` URL → :class:`bot.store.postgres.PostgresStore` (many processes, one server;
  imported only then, so a bot on the SQLite file never loads asyncpg).

Both share the rules and the SQL in :class:`bot.store.sql.SqlStore`. Adding a feature's table: a
numbered migration per backend (``bot/store/migrations/<backend>/NNNN_name.sql``), then an
intent-named abstract method here and its implementation in ``sql.py`` (portable SQL with ``?``
placeholders); only a statement the two dialects spell differently goes in the drivers.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from bot.store.records import (
    MAX_CLUB_PAPERS,
    MAX_WATCHES_PER_USER,
    ClubEntry,
    CopyCounts,
    ForgetResult,
    ImportedList,
    ImportResult,
    IndexGeneration,
    ListInfo,
    ReconcileResult,
    SavedItem,
    SavedPage,
    SaveResult,
    StoreStats,
    UserFootprint,
    WatchInfo,
)
from retrieval.models import Paper

#: Finds a corpus paper by id (None when the corpus has no such paper).
CorpusLookup = Callable[[str], Paper | None]


class IndexLock(Protocol):
    """A held index lock (:meth:`Store.acquire_index_lock`)."""

    async def release(self) -> None:
        """Let another process build. Idempotent."""


def is_url(target: str | Path) -> bool:
    """True for a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(target, str) and target.split("://", 1)[0].lower() in {"postgresql", "postgres"}


class Store(abc.ABC):
    """Per-user saved-paper lists. Open with ``await open_store(path_or_url)``.

    Every method is one transaction and safe to call concurrently from many tasks and processes.
    User ids are Discord snowflakes (ints); every query on a user's rows is scoped to that user.
    """

    #: The file or the password-masked URL (for logs and operator messages).
    target: str
    max_saved_per_user: int
    max_lists_per_user: int
    note_max: int

    @classmethod
    @abc.abstractmethod
    async def connect(
        cls, target: str | Path, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> Store:
        """Open this driver's database at ``target`` (called by :func:`bot.store.open_store`)."""

    # ------------------------------------------------------------------------------- lifecycle

    @abc.abstractmethod
    async def close(self) -> None:
        """Finish the running operations, then close. Idempotent."""

    async def __aenter__(self) -> Self:
        """``async with await open_store(target) as store:`` closes the store on exit."""
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close the store, whatever happened inside the block."""
        await self.close()

    # ---------------------------------------------------------------------------------- saving

    @abc.abstractmethod
    async def save_paper(
        self, user_id: int, paper: Paper, list_name: str | None = None, note: str | None = None
    ) -> SaveResult:
        """Save ``paper`` into a list (default ``reading``), creating the list if needed.

        Idempotent: saving again keeps one row and its original ``saved_at``; a given ``note``
        replaces the old one (``None`` keeps it, ``""`` clears it). Every save refreshes the snapshot.

        Raises:
            InvalidListNameError, NoteTooLongError, ListLimitError (new list), SavedLimitError.
        """

    @abc.abstractmethod
    async def unsave_paper(self, user_id: int, paper_id: str, list_name: str | None = None) -> int:
        """Remove a paper from one list, or from every list of the user (``None``); rows removed (≥ 1).

        Raises:
            ListNotFoundError, NotSavedError.
        """

    @abc.abstractmethod
    async def move_paper(self, user_id: int, paper_id: str, from_list: str, to_list: str) -> None:
        """Move a saved paper to another list (created if needed), keeping its note and ``saved_at``.

        Raises:
            ListNotFoundError (source), NotSavedError, InvalidListNameError, ListLimitError.
        """

    @abc.abstractmethod
    async def set_note(self, user_id: int, paper_id: str, note: str, list_name: str | None = None) -> None:
        """Set (``""``: clear) the note of a saved paper in one list, or in every list holding it.

        Raises:
            NoteTooLongError, ListNotFoundError, NotSavedError.
        """

    # ----------------------------------------------------------------------------------- lists

    @abc.abstractmethod
    async def create_list(self, user_id: int, name: str) -> str:
        """Create an empty list; returns its display name.

        Raises:
            InvalidListNameError, ListExistsError, ListLimitError.
        """

    @abc.abstractmethod
    async def rename_list(self, user_id: int, old: str, new: str) -> None:
        """Rename a list (changing only the case of its name is allowed).

        Raises:
            ListNotFoundError, InvalidListNameError, ListExistsError.
        """

    @abc.abstractmethod
    async def delete_list(self, user_id: int, name: str) -> int:
        """Delete a list and everything in it; returns how many items were removed.

        Raises:
            ListNotFoundError.
        """

    @abc.abstractmethod
    async def get_list(
        self, user_id: int, list_name: str | None = None, *, offset: int = 0, limit: int = 10
    ) -> SavedPage:
        """One page of a list, newest save first. The default list reads as empty until used.

        Raises:
            ListNotFoundError: A named (non-default) list does not exist.
            ValueError: ``limit`` outside 1..MAX_PAGE (a caller bug).
        """

    @abc.abstractmethod
    async def list_lists(self, user_id: int) -> list[ListInfo]:
        """The user's lists, oldest first, with item counts."""

    @abc.abstractmethod
    async def saved_ids(self, user_id: int) -> set[str]:
        """Ids of every paper the user saved, in any list."""

    @abc.abstractmethod
    async def lists_holding(self, user_id: int, paper_id: str) -> list[str]:
        """Display names of the user's lists that hold the paper, oldest list first."""

    @abc.abstractmethod
    async def stats(self) -> StoreStats:
        """Whole-database counts."""

    # -------------------------------------------------------------------------- export / import

    @abc.abstractmethod
    async def export_items(
        self, user_id: int, list_name: str | None = None
    ) -> tuple[list[SavedItem], list[ListInfo]]:
        """Everything an export shows: the items (grouped by list, oldest list first, newest save
        first) and the lists (all of them, or only ``list_name``). :mod:`bot.export` formats them.

        Raises:
            ListNotFoundError: The named list does not exist.
        """

    @abc.abstractmethod
    async def import_items(
        self,
        user_id: int,
        lists: Sequence[ImportedList],
        list_name: str | None = None,
        *,
        corpus: CorpusLookup | None = None,
    ) -> ImportResult:
        """Merge parsed import lists (see :func:`bot.export.parse_json`) into the user's lists.

        With ``list_name`` every item goes to that list; otherwise to the lists named in the file
        (created as needed, keeping their ``created_at``). Items keep their note and ``saved_at``;
        papers already in the target list are skipped. The imported fields are the importer's alone:
        a paper in the corpus (``corpus``) or already known is shown from the corpus's snapshot; any
        other is shown from the file to this user only. One transaction: all or nothing.

        Raises:
            SavedLimitError / ListLimitError: The import would pass a cap (nothing is imported).
        """

    # ----------------------------------------------------------------------------- maintenance

    @abc.abstractmethod
    async def club_add(
        self, guild_id: int, paper: Paper, user_id: int, note: str = "", *, limit: int = MAX_CLUB_PAPERS
    ) -> bool:
        """Add a corpus paper to the server's reading list (or update its note); True when added.

        Raises:
            ClubLimitError: The list holds ``limit`` papers already. NoteTooLongError.
        """

    @abc.abstractmethod
    async def club_remove(self, guild_id: int, paper_id: str) -> ClubEntry | None:
        """Remove a paper from the server's reading list; the removed entry, or None."""

    @abc.abstractmethod
    async def club_list(self, guild_id: int) -> list[ClubEntry]:
        """The server's reading list, oldest addition first."""

    @abc.abstractmethod
    async def add_watch(
        self, user_id: int, query: str, area: str = "", author: str = "", *, limit: int = MAX_WATCHES_PER_USER
    ) -> WatchInfo:
        """Save a watch (the caller checked the query parses); the cap is checked in the transaction.

        Raises:
            WatchLimitError: The user has ``limit`` watches already.
        """

    @abc.abstractmethod
    async def list_watches(self, user_id: int) -> list[WatchInfo]:
        """The user's watches, oldest first."""

    @abc.abstractmethod
    async def remove_watch(self, user_id: int, watch_id: int) -> WatchInfo:
        """Delete one of the user's watches and return it.

        Raises:
            WatchNotFoundError: The user has no watch with that number.
        """

    @abc.abstractmethod
    async def active_watches(self) -> list[WatchInfo]:
        """Every watch of every user whose watches are not paused, by user then age."""

    @abc.abstractmethod
    async def pause_watches(self, user_id: int) -> None:
        """Pause the user's watches (their DMs are closed) until :meth:`resume_watches`."""

    @abc.abstractmethod
    async def resume_watches(self, user_id: int) -> bool:
        """Un-pause the user's watches; True when they were paused."""

    @abc.abstractmethod
    async def untold_pauses(self) -> set[int]:
        """Users whose watches were paused and who have not been told yet."""

    @abc.abstractmethod
    async def mark_pause_told(self, user_id: int) -> None:
        """Remember that the user was told their watches are paused."""

    @abc.abstractmethod
    async def user_footprint(self, user_id: int) -> UserFootprint:
        """How many rows of each table name the user (what :meth:`forget_user` would reach)."""

    @abc.abstractmethod
    async def forget_user(self, user_id: int) -> ForgetResult:
        """Delete every row of the user (items, lists, imported fields, snapshots nobody else saved,
        watches and their pause); entries the user added to a server's reading list stay on that
        list, no longer naming the user (``added_by`` 0)."""

    @abc.abstractmethod
    async def reconcile(self, papers: Iterable[Paper]) -> ReconcileResult:
        """Align the snapshots with a freshly (re)built corpus. Call after every (re)index.

        A saved paper missing from ``papers`` stays in every list, flagged not-in-corpus with its
        snapshot kept; one that reappears is flagged back and its snapshot refreshed. Saved rows are
        never touched.
        """

    # ------------------------------------------------------------------------- the shared index
    # Every process on one database serves one index: the process that builds it (holding the index
    # lock) publishes a generation, the others follow it (bot/index_share.py).

    @abc.abstractmethod
    async def index_generation(self) -> IndexGeneration | None:
        """The generation every process should serve (None before the first publication)."""

    @abc.abstractmethod
    async def publish_index_generation(
        self,
        papers: Sequence[Paper],
        *,
        corpus_path: str,
        params: str,
        cache_file: str,
        fingerprint: str,
        built_by: str,
    ) -> tuple[IndexGeneration, ReconcileResult]:
        """Record the next generation (the index of ``papers``) and reconcile the snapshots with it,
        in one transaction, so a published generation is always a reconciled one."""

    @abc.abstractmethod
    async def reconcile_generation(self, papers: Iterable[Paper], generation: int) -> ReconcileResult | None:
        """:meth:`reconcile` with the index of ``generation`` unless some process already did
        (then None: only this process's idea of the corpus is updated)."""

    @abc.abstractmethod
    async def acquire_index_lock(self, *, wait: bool) -> IndexLock | None:
        """The lock one builder holds while it builds and publishes an index; it is released when
        its holder dies. ``wait=False``: None when another process holds it."""

    async def listen_index_generations(
        self, callback: Callable[[], None]
    ) -> Callable[[], Awaitable[None]] | None:
        """Call ``callback`` (on the loop) whenever a generation is published elsewhere; returns the
        function that stops listening, or None where the backend cannot notify (callers poll)."""
        return None

    @abc.abstractmethod
    async def copy_from(self, source: Store) -> CopyCounts:
        """Copy every row of user data of ``source`` into this store, in one transaction: lists, saved
        items (notes, timestamps), snapshots, imported records, watches (with their numbers), watch
        pauses and the servers' reading lists. Rows already here are kept (safe to run twice); the
        index generation is this store's own and stays. Returns the rows read and written per table.

        Raises:
            CopyConflictError: This store numbers other watches as the source's; nothing is written.
        """

    @abc.abstractmethod
    async def dump(self) -> dict[str, list[tuple[object, ...]]]:
        """Every row of user data, per table (``bot.store.sql.TABLES``), in a backend-neutral form:
        times as aware datetimes, rows in primary-key order."""
