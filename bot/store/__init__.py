"""Saved-paper lists that never lose a paper: one interface, two databases.

``await Store.open(target)`` opens a SQLite file (a path: the embedded default) or a PostgreSQL
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
from typing import TYPE_CHECKING, Any

from bot.store.base import DRIVER_LOADERS, CorpusLookup, Store, is_url
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

if TYPE_CHECKING:
    from bot.store.postgres import PostgresStore


def _load_postgres(target: str | Path) -> None:
    if is_url(target):
        import bot.store.postgres  # noqa: F401 - registers the driver (a Store subclass)


DRIVER_LOADERS.append(_load_postgres)


def __getattr__(name: str) -> Any:
    # The PostgreSQL driver (asyncpg) is imported when first asked for: Store.open does for a URL, so
    # a bot on the embedded SQLite file never loads it (~2 MB of private memory per process).
    if name == "PostgresStore":
        from bot.store.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
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
    "PostgresStore",
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
