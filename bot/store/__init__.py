"""Saved-paper lists that never lose a paper: one interface, two databases.

``await open_store(target)`` opens a SQLite file (a path: the embedded default) or a PostgreSQL
database (a ``postgresql://`` URL, from ``DATABASE_URL``). Every SQL statement of paperbot lives in
this package:

* :mod:`bot.store.base` — :class:`Store`, the interface (intent-named async methods);
* :mod:`bot.store.sql` — the rules and the portable SQL both drivers run;
* :mod:`bot.store.sqlite`, :mod:`bot.store.postgres` — the drivers (connections, transactions,
  locking, error translation);
* :mod:`bot.store.migrations` — numbered schema migrations per backend;
* :mod:`bot.store.records`, :mod:`bot.store.errors` — what goes in and out.

Export formats and import parsing are not here: :mod:`bot.export` formats what
:meth:`Store.export_items` returns and parses files into what :meth:`Store.import_items` takes.
"""

from pathlib import Path

from bot.store.base import CorpusLookup, Store, is_url
from bot.store.errors import (
    ClubLimitError,
    CopyConflictError,
    DatabaseBusyError,
    DatabaseCorruptError,
    DatabaseError,
    DatabaseUnavailableError,
    ImportFormatError,
    InvalidListNameError,
    ListExistsError,
    ListLimitError,
    ListNotFoundError,
    NoteTooLongError,
    NotSavedError,
    SavedLimitError,
    StoreError,
    WatchLimitError,
    WatchNotFoundError,
)
from bot.store.records import (
    DEFAULT_LIST,
    LIST_NAME_MAX,
    MAX_CLUB_PAPERS,
    MAX_LISTS_PER_USER,
    MAX_PAGE,
    MAX_SAVED_PER_USER,
    NOTE_MAX,
    PAPER_ID_MAX,
    WATCH_QUERY_MAX,
    ClubEntry,
    CopiedTable,
    CopyCounts,
    ForgetResult,
    ImportedItem,
    ImportedList,
    ImportResult,
    IndexGeneration,
    ListInfo,
    PaperSnapshot,
    ReconcileResult,
    SavedItem,
    SavedPage,
    SaveResult,
    StoreStats,
    UserFootprint,
    WatchInfo,
    list_key,
    normalize_list_name,
    normalize_note,
)
from bot.store.sqlite import SQLiteStore


async def open_store(
    target: str | Path,
    *,
    max_saved_per_user: int = MAX_SAVED_PER_USER,
    max_lists_per_user: int = MAX_LISTS_PER_USER,
) -> Store:
    """Open (and migrate) the store at ``target``: a SQLite path or a ``postgresql://`` URL.

    Raises:
        DatabaseError (or a subclass): the database cannot be opened, migrated or written; the
            message names the target (password masked) and the cause.
    """
    if max_saved_per_user < 1 or max_lists_per_user < 1:
        raise ValueError("caps must be at least 1")
    driver: type[Store]
    if is_url(target):
        from bot.store.postgres import PostgresStore as driver  # asyncpg: ~2 MB, loaded when used
    elif isinstance(target, str) and "://" in target:
        raise DatabaseError(f"No database driver opens {target!r}.", target=target)
    else:
        driver = SQLiteStore
    return await driver.connect(
        target, max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user
    )


__all__ = [
    "open_store",
    "DEFAULT_LIST",
    "LIST_NAME_MAX",
    "MAX_LISTS_PER_USER",
    "MAX_PAGE",
    "MAX_SAVED_PER_USER",
    "NOTE_MAX",
    "PAPER_ID_MAX",
    "ClubEntry",
    "ClubLimitError",
    "CopiedTable",
    "CopyConflictError",
    "CopyCounts",
    "MAX_CLUB_PAPERS",
    "CorpusLookup",
    "DatabaseBusyError",
    "DatabaseCorruptError",
    "DatabaseError",
    "DatabaseUnavailableError",
    "ForgetResult",
    "ImportFormatError",
    "ImportResult",
    "ImportedItem",
    "ImportedList",
    "InvalidListNameError",
    "ListExistsError",
    "ListInfo",
    "ListLimitError",
    "ListNotFoundError",
    "NoteTooLongError",
    "NotSavedError",
    "PaperSnapshot",
    "IndexGeneration",
    "ReconcileResult",
    "SQLiteStore",
    "SaveResult",
    "SavedItem",
    "SavedLimitError",
    "SavedPage",
    "Store",
    "StoreError",
    "StoreStats",
    "UserFootprint",
    "WATCH_QUERY_MAX",
    "WatchInfo",
    "WatchLimitError",
    "WatchNotFoundError",
    "is_url",
    "list_key",
    "normalize_list_name",
    "normalize_note",
]
