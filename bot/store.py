"""Saved-paper lists that never lose a paper: one SQLite file, reached through aiosqlite.

Every SQL statement of paperbot lives in this module. The bot talks to :class:`Store` only.

Design notes (the *why*):

* **One connection per Store, one asyncio lock.** aiosqlite runs a connection on one worker thread;
  two coroutines sharing it would interleave their statements inside one transaction. The lock makes
  every public method one whole transaction. Several processes (or several ``Store`` objects) on the
  same file are fine: SQLite's own locking plus a busy timeout serialise their writers.
* **WAL + ``synchronous=FULL``.** Readers never block the writer, and a commit that returned is on
  disk (fsync), so neither a crash nor a power cut loses a save the user was told about.
* **``BEGIN IMMEDIATE`` for every write.** Each write is a read-modify-write (check a cap, look a
  list up, then insert); taking the write lock up front means no other writer can slip in between
  the check and the insert, and no ``SQLITE_BUSY`` can surface half-way through.
* **Snapshots.** The store keeps its own copy of every saved paper, so a paper that leaves the corpus
  still shows in the lists holding it (flagged ``in_corpus=False``) and comes back when re-indexed.
* **Never destroy a damaged file.** A file that is not SQLite or fails ``PRAGMA quick_check`` raises
  :class:`DatabaseCorruptError` before anything is written to it.
* **Users are isolated by construction.** Every statement on a user's rows has a ``user_id = ?`` term
  and list ids are internal, never leaving this module. Only :meth:`Store.stats` and the pruning of
  shared snapshots look across users.
* **Cancellation-safe.** A cancelled call rolls its transaction back; the store stays usable.

Timestamps are stored as fixed-width ISO-8601 UTC strings (microseconds), so text order is time order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
import time
import unicodedata
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite

from bot import export as _export
from retrieval.models import Paper

log = logging.getLogger(__name__)

#: The list used when a command names none. Created on the first save into it.
DEFAULT_LIST = "reading"
#: Longest list name, in characters, after trimming.
LIST_NAME_MAX = 32
#: Longest note, in characters, after trimming.
NOTE_MAX = 500
#: Default caps (constructor arguments of :meth:`Store.open`).
MAX_SAVED_PER_USER = 1000
MAX_LISTS_PER_USER = 50
#: How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_MS = 5000
#: Largest page :meth:`Store.get_list` returns.
MAX_PAGE = 1000
#: Largest import document accepted, in characters (1000 papers with long abstracts fit easily).
MAX_IMPORT_CHARS = 20_000_000
#: Export formats and the spellings accepted for them.
EXPORT_FORMATS = ("bib", "md", "json")
_FORMAT_ALIASES = {"bibtex": "bib", "markdown": "md", "bib": "bib", "md": "md", "json": "json"}
#: Longest paper id the store accepts.
PAPER_ID_MAX = 200

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26


# --------------------------------------------------------------------------------------------- errors


class StoreError(Exception):
    """Base of every error the store raises on purpose; ``str()`` is a short sentence fit for a user."""


class DatabaseError(StoreError):
    """The database cannot be used: newer schema, busy for too long, closed, or an I/O failure."""


class DatabaseBusyError(DatabaseError):
    """Another process held the write lock for longer than the busy timeout; retrying may work."""


class DatabaseCorruptError(DatabaseError):
    """The file is not a SQLite database or fails ``PRAGMA quick_check``; it was left untouched."""

    def __init__(self, path: Path, detail: str, *, at_open: bool = True) -> None:
        if at_open:  # seen by the operator starting the bot: name the file and what to do
            message = (
                f"The saved-papers database {path} is damaged or not a database ({detail}); "
                "it was left untouched: restore a backup or move it aside."
            )
        else:  # seen by a Discord user: no server paths
            message = "The saved-papers database is damaged; please tell the bot's owner."
        super().__init__(message)
        self.path = path
        self.detail = detail


class InvalidListNameError(StoreError, ValueError):
    """A list name breaks the naming rules (1-32 letters, digits, spaces, ``-`` or ``_``)."""


class ListExistsError(InvalidListNameError):
    """Creating or renaming would give the user two lists with the same (case-insensitive) name."""


class ListNotFoundError(StoreError, LookupError):
    """The user has no list of that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"You have no list named “{name}”.")
        self.name = name


class ListLimitError(StoreError):
    """The user already has the most lists allowed."""


class SavedLimitError(StoreError):
    """The user already has the most saved items allowed."""


class NoteTooLongError(StoreError, ValueError):
    """A note is longer than :data:`NOTE_MAX` characters."""


class NotSavedError(StoreError, LookupError):
    """The paper is not saved (in that list, or at all) for this user."""

    def __init__(self, paper_id: str, list_name: str | None = None) -> None:
        where = f"in your list “{list_name}”" if list_name else "in any of your lists"
        super().__init__(f"Paper {paper_id} is not saved {where}.")
        self.paper_id = paper_id
        self.list_name = list_name


class ImportFormatError(StoreError, ValueError):
    """An import document is not paperbot JSON at all (bad JSON, wrong shape, too large)."""


# -------------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class SavedItem(_export.PaperSnapshot):
    """One paper in one of a user's lists: the store's snapshot of the paper (refreshed on save and on
    reconcile, see :class:`~bot.export.PaperSnapshot`) and the user's side of it.

    Attributes:
        list_name: Display name of the list holding it.
        note: The user's note (``""`` when none).
        saved_at: When it was saved into this list (tz-aware UTC).
        in_corpus: False when the paper has left the corpus (the snapshot is what remains).
    """

    list_name: str
    note: str
    saved_at: datetime
    in_corpus: bool


@dataclass(frozen=True, slots=True)
class SavedPage:
    """A page of one list, newest save first, plus what is needed to page further."""

    items: tuple[SavedItem, ...]
    total: int
    offset: int
    list_name: str

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What :meth:`Store.save_paper` did.

    Attributes:
        created: False when the paper was already in the list (the note may have been updated).
        list_name: Display name of the list it is in.
        list_created: True when the list did not exist and was created by this save.
    """

    created: bool
    list_name: str
    list_created: bool = False


@dataclass(frozen=True, slots=True)
class ListInfo:
    """One of a user's lists."""

    name: str
    count: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Whole-database counts (for an owner's status command; no per-user data)."""

    saved_items: int
    users: int
    lists: int
    snapshots: int
    missing_from_corpus: int


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :meth:`Store.import_json` did: items added, duplicates skipped, records rejected (why)."""

    added: int
    skipped: int
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """Rows deleted by :meth:`Store.forget_user`, per table (snapshots: those no one else saved)."""

    saved_items: int
    lists: int
    snapshots: int

    @property
    def total(self) -> int:
        """All rows deleted."""
        return self.saved_items + self.lists + self.snapshots


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """What :meth:`Store.reconcile` changed.

    Attributes:
        gone: Saved paper ids that were in the corpus and now are not (sorted).
        returned: Saved paper ids that were missing and are back (sorted).
        refreshed: Snapshots whose metadata (title, authors, area, abstract, url) changed.
    """

    gone: list[str]
    returned: list[str]
    refreshed: int

    def __str__(self) -> str:
        """A one-line summary for logs (the id lists can be long)."""
        return f"{len(self.gone)} gone, {len(self.returned)} returned, {self.refreshed} refreshed"


# ----------------------------------------------------------------------------------------- migrations

#: Schema migrations: ``MIGRATIONS[n]`` takes a database from ``user_version`` n to n + 1.
#: Append only; never edit a step that has shipped.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: base tables. ``name_key`` is the case-folded name (uniqueness), ``name`` the display spelling.
    (
        """CREATE TABLE lists (
            id INTEGER PRIMARY KEY,
            user_id INTEGER NOT NULL,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (user_id, name_key)
        )""",
        """CREATE TABLE papers (
            paper_id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            authors TEXT NOT NULL,
            et_al INTEGER NOT NULL,
            area TEXT NOT NULL,
            abstract TEXT NOT NULL,
            url TEXT,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        )""",
        """CREATE TABLE saved (
            list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL REFERENCES papers (paper_id),
            user_id INTEGER NOT NULL,
            saved_at TEXT NOT NULL,
            PRIMARY KEY (list_id, paper_id)
        )""",
    ),
    # 2: notes, the in-corpus flag of snapshots, and the indexes paging and per-user lookups need.
    (
        "ALTER TABLE saved ADD COLUMN note TEXT NOT NULL DEFAULT ''",
        # Snapshots written by v1 were taken from the live corpus; the next reconcile corrects them.
        "ALTER TABLE papers ADD COLUMN in_corpus INTEGER NOT NULL DEFAULT 1",
        # Paging a list newest-first walks this index backwards (rowid breaks saved_at ties).
        "CREATE INDEX saved_by_user_list_time ON saved (user_id, list_id, saved_at)",
        "CREATE INDEX saved_by_user_paper ON saved (user_id, paper_id)",
        # Orphan-snapshot pruning and the papers -> saved foreign key look saved rows up by paper.
        "CREATE INDEX saved_by_paper ON saved (paper_id)",
    ),
)
#: The schema version this code writes.
SCHEMA_VERSION = len(MIGRATIONS)


# ------------------------------------------------------------------------------------------ SQL text

_SNAPSHOT_UPSERT = """
INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, in_corpus)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (paper_id) DO UPDATE SET
    title = excluded.title, authors = excluded.authors, et_al = excluded.et_al, area = excluded.area,
    abstract = excluded.abstract, url = excluded.url,
    last_seen = CASE WHEN excluded.in_corpus THEN excluded.last_seen ELSE papers.last_seen END,
    in_corpus = excluded.in_corpus
"""
# Imports never overwrite a snapshot: the existing one came from the corpus, the file from a user.
_SNAPSHOT_INSERT_IF_NEW = """
INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, in_corpus)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (paper_id) DO NOTHING
"""
_PRUNE_ONE = (
    "DELETE FROM papers WHERE paper_id = ? AND NOT EXISTS (SELECT 1 FROM saved WHERE saved.paper_id = ?)"
)
_PRUNE_ALL = (
    "DELETE FROM papers WHERE NOT EXISTS (SELECT 1 FROM saved WHERE saved.paper_id = papers.paper_id)"
)
# Both item queries select the columns _item() reads, in its order.
_PAGE = """
SELECT l.name, s.paper_id, p.title, p.authors, p.et_al, p.area, p.abstract, p.url,
    s.note, s.saved_at, p.in_corpus
FROM saved AS s JOIN lists AS l ON l.id = s.list_id JOIN papers AS p ON p.paper_id = s.paper_id
WHERE s.user_id = ? AND s.list_id = ?
ORDER BY s.saved_at DESC, s.rowid DESC
LIMIT ? OFFSET ?
"""
_ALL_ITEMS = """
SELECT l.name, s.paper_id, p.title, p.authors, p.et_al, p.area, p.abstract, p.url,
    s.note, s.saved_at, p.in_corpus
FROM saved AS s JOIN lists AS l ON l.id = s.list_id JOIN papers AS p ON p.paper_id = s.paper_id
WHERE s.user_id = ?
ORDER BY l.created_at, l.id, s.saved_at DESC, s.rowid DESC
"""
_LISTS = """
SELECT l.name, l.created_at,
    (SELECT count(*) FROM saved AS s WHERE s.user_id = l.user_id AND s.list_id = l.id)
FROM lists AS l WHERE l.user_id = ?
ORDER BY l.created_at, l.id
"""


# ---------------------------------------------------------------------------------------- validation

_SPACE_RUN = re.compile(" {2,}")
_NAME_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Mn", "Mc"})


def normalize_list_name(name: str) -> str:
    """Return the display form of a list name, or raise :class:`InvalidListNameError`.

    Rules: NFC-normalised, trimmed, runs of spaces collapsed; 1-32 characters; only letters, digits,
    spaces, ``-`` and ``_``, with at least one letter or digit. Uniqueness is case-insensitive (see
    :func:`list_key`) but the name is shown as first written.
    """
    if not isinstance(name, str):
        raise InvalidListNameError("A list name must be text.")
    text = _SPACE_RUN.sub(" ", unicodedata.normalize("NFC", name).strip())
    if not text:
        raise InvalidListNameError("A list name cannot be empty.")
    if len(text) > LIST_NAME_MAX:
        raise InvalidListNameError(f"A list name can be at most {LIST_NAME_MAX} characters long.")
    if not all(ch in " -_" or unicodedata.category(ch) in _NAME_CATEGORIES for ch in text):
        raise InvalidListNameError("A list name may only use letters, digits, spaces, “-” and “_”.")
    if not any(ch.isalnum() for ch in text):
        raise InvalidListNameError("A list name needs at least one letter or digit.")
    return text


def list_key(display_name: str) -> str:
    """The case-insensitive identity of a (normalised) list name."""
    return unicodedata.normalize("NFC", display_name.casefold())


def normalize_note(note: str) -> str:
    """Return a note trimmed, or raise :class:`NoteTooLongError` past :data:`NOTE_MAX` characters."""
    if not isinstance(note, str):
        raise NoteTooLongError("A note must be text.")
    text = _export.clean_text(note).strip()
    if len(text) > NOTE_MAX:
        raise NoteTooLongError(f"A note can be at most {NOTE_MAX} characters long (yours has {len(text)}).")
    return text


def _clean_paper_id(paper_id: str) -> str:
    """Trim a user-typed paper id; an empty or absurd id can never be saved, so say "not saved"."""
    if not isinstance(paper_id, str):
        raise TypeError(f"paper id must be a str, not {type(paper_id).__name__}")
    text = paper_id.strip()
    if not text or len(text) > PAPER_ID_MAX:
        raise NotSavedError(text[:40] or "(empty)")
    return _export.clean_text(text)


def _check_user(user_id: int) -> int:
    """Reject ids that are not ints in SQLite's range (a caller bug, hence not a StoreError)."""
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise TypeError(f"user id must be an int, not {type(user_id).__name__}")
    if not -(2**63) <= user_id < 2**63:
        raise ValueError(f"user id {user_id} is outside the 64-bit range")
    return user_id


def _snapshot_values(paper: Paper) -> tuple[str, str, str, int, str, str, str | None]:
    """The stored snapshot columns of a paper (authors as a JSON array)."""
    pid = paper.id
    if not isinstance(pid, str) or not pid.strip() or len(pid) > PAPER_ID_MAX:
        raise ValueError(f"cannot save a paper with id {pid!r}")
    return (
        pid,
        _export.clean_text(paper.title),
        json.dumps([_export.clean_text(a) for a in paper.authors], ensure_ascii=False),
        int(bool(paper.et_al)),
        _export.clean_text(paper.area),
        _export.clean_text(paper.abstract),
        _export.clean_text(paper.url) if paper.url else None,
    )


# ------------------------------------------------------------------------------------------- time


def _now() -> str:
    """The current time as stored."""
    return _ts(datetime.now(UTC))


def _ts(moment: datetime) -> str:
    """Fixed-width UTC text, so that string order is time order."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _parse_ts(text: str) -> datetime:
    """A stored timestamp as a tz-aware UTC datetime."""
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _item(row: Sequence[Any]) -> SavedItem:
    """Build a :class:`SavedItem` from a row of ``_PAGE`` / ``_ALL_ITEMS``."""
    return SavedItem(
        list_name=row[0],
        paper_id=row[1],
        title=row[2],
        authors=tuple(json.loads(row[3])),
        et_al=bool(row[4]),
        area=row[5],
        abstract=row[6],
        url=row[7],
        note=row[8],
        saved_at=_parse_ts(row[9]),
        in_corpus=bool(row[10]),
    )


# -------------------------------------------------------------------------------------- file checks


def _check_header(path: Path) -> None:
    """Refuse a non-empty file that does not start with SQLite's magic, before SQLite opens it."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DatabaseError(f"Cannot read the saved-papers database {path}: {exc.strerror}.") from exc
    if head and head != _SQLITE_MAGIC:
        raise DatabaseCorruptError(path, "not a SQLite database")


def _wrap_sqlite_error(exc: sqlite3.Error, path: Path, *, at_open: bool = False) -> DatabaseError:
    """Turn an unexpected sqlite3 error into a :class:`DatabaseError` fit for whoever will read it."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return DatabaseCorruptError(path, str(exc), at_open=at_open)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return DatabaseBusyError("The saved-papers database is busy; please try again in a moment.")
    if at_open:
        return DatabaseError(f"Cannot open the saved-papers database {path}: {exc}.")
    return DatabaseError("The saved-papers database failed; please try again later.")


async def _fetch_one(db: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """First row of a query, or None."""
    rows = list(await db.execute_fetchall(sql, params))
    return rows[0] if rows else None


async def _fetch_value(db: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """First column of the first row of a query, or None."""
    row = await _fetch_one(db, sql, params)
    return None if row is None else row[0]


# ---------------------------------------------------------------------------------------------- Store


class Store:
    """Per-user saved-paper lists in one SQLite file. Open with ``await Store.open(path)``.

    Every method is one transaction and is safe to call concurrently from many tasks. User ids are
    Discord snowflakes (ints); every query is scoped to the given user.
    """

    def __init__(
        self, db: aiosqlite.Connection, path: Path, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> None:
        """Use :meth:`open`; this only wires an already prepared connection."""
        self._db: aiosqlite.Connection | None = db
        self.path = path
        self.max_saved_per_user = max_saved_per_user
        self.max_lists_per_user = max_lists_per_user
        self.note_max = NOTE_MAX
        self._lock = asyncio.Lock()
        # Ids of the corpus given to the last reconcile() of this process (None until then). A save of
        # a paper outside it (a stale Paper object) must not mark the snapshot as in the corpus.
        self._corpus_ids: set[str] | None = None

    # ---------------------------------------------------------------------------- open / close

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        max_saved_per_user: int = MAX_SAVED_PER_USER,
        max_lists_per_user: int = MAX_LISTS_PER_USER,
    ) -> Store:
        """Open (creating it and its folder if needed) and migrate the database at ``path``.

        Raises:
            DatabaseCorruptError: The file is not SQLite or fails ``quick_check`` (it is not modified).
            DatabaseError: The file was written by a newer paperbot, or cannot be opened.
        """
        if max_saved_per_user < 1 or max_lists_per_user < 1:
            raise ValueError("caps must be at least 1")
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(f"Cannot create the folder of {path}: {exc.strerror}.") from exc
        _check_header(path)
        try:
            # isolation_level=None: the sqlite3 module must not open transactions behind our back.
            db = await aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise DatabaseError(f"Cannot open the saved-papers database {path}: {exc}.") from exc
        try:
            version = await cls._prepare(db, path)
        except BaseException:
            await db.close()
            raise
        log.info("saved-papers store %s open (schema %d)", path, version)
        return cls(db, path, max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user)

    @staticmethod
    async def _prepare(db: aiosqlite.Connection, path: Path) -> int:
        """Check the file, set the connection up and migrate; returns the schema version."""
        try:
            await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Read-only checks first: nothing may be written to a file we may have to refuse.
            problems = [row[0] for row in await db.execute_fetchall("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise DatabaseCorruptError(path, "; ".join(str(p) for p in problems[:3]))
            version = await _fetch_value(db, "PRAGMA user_version")
            if version > SCHEMA_VERSION:
                raise DatabaseError(
                    f"The saved-papers database {path} was written by a newer paperbot "
                    f"(schema {version} > {SCHEMA_VERSION}); upgrade paperbot or use another file."
                )
            mode = await _fetch_value(db, "PRAGMA journal_mode = WAL")
            if str(mode).lower() != "wal":
                log.warning("%s: journal mode is %s, not WAL", path, mode)
            # FULL: a commit that returned survives a power cut too; fsync is cheap next to a Discord RTT.
            await db.execute("PRAGMA synchronous = FULL")
            await db.execute("PRAGMA foreign_keys = ON")
            return await Store._migrate(db, path)
        except sqlite3.Error as exc:
            raise _wrap_sqlite_error(exc, path, at_open=True) from exc

    @staticmethod
    async def _migrate(db: aiosqlite.Connection, path: Path) -> int:
        """Apply pending migrations, one transaction per step (another process may race us)."""
        while True:
            try:
                await db.execute("BEGIN IMMEDIATE")
                # Re-read under the write lock: a concurrent opener may have migrated meanwhile.
                version = await _fetch_value(db, "PRAGMA user_version")
                if version > SCHEMA_VERSION:
                    raise DatabaseError(
                        f"The saved-papers database {path} was written by a newer paperbot "
                        f"(schema {version} > {SCHEMA_VERSION}); upgrade paperbot or use another file."
                    )
                if version == SCHEMA_VERSION:
                    await db.execute("COMMIT")
                    return version
                for statement in MIGRATIONS[version]:
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {version + 1}")
                await db.execute("COMMIT")
            except BaseException:
                await _rollback(db)
                raise
            log.info("%s: migrated schema %d -> %d", path, version, version + 1)

    async def close(self) -> None:
        """Finish the running operation, then close. Idempotent."""
        async with self._lock:
            db, self._db = self._db, None
            if db is None:
                return
            try:
                await db.execute("PRAGMA optimize")
            except sqlite3.Error:
                log.debug("PRAGMA optimize failed on close", exc_info=True)
            await db.close()
        log.info("saved-papers store %s closed", self.path)

    async def __aenter__(self) -> Self:
        """``async with await Store.open(path) as store:`` closes the store on exit."""
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close the store, whatever happened inside the block."""
        await self.close()

    # ------------------------------------------------------------------------------ transactions

    @asynccontextmanager
    async def _tx(self, *, write: bool) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction on the shared connection, exclusive among this Store's tasks.

        Writes use ``BEGIN IMMEDIATE`` (take the write lock now, waiting up to the busy timeout);
        reads use a deferred transaction so that several SELECTs see one snapshot.
        """
        async with self._lock:
            db = self._db
            if db is None:
                raise DatabaseError("The saved-papers store is closed.")
            # aiosqlite runs statements in order on its thread, and a statement already queued runs
            # even if the awaiting task is cancelled. So on *any* exception, BEGIN included, a
            # ROLLBACK is queued behind it: the connection never stays inside a stray transaction.
            try:
                await db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                yield db
                await db.execute("COMMIT")
            except sqlite3.Error as exc:
                await _rollback(db)
                wrapped = _wrap_sqlite_error(exc, self.path)
                if isinstance(wrapped, DatabaseCorruptError):
                    log.critical("%s is damaged: %s", self.path, exc)
                elif isinstance(wrapped, DatabaseBusyError):
                    log.warning("%s: busy for %d ms: %s", self.path, BUSY_TIMEOUT_MS, exc)
                else:
                    log.error("%s: database error: %s", self.path, exc, exc_info=True)
                raise wrapped from exc
            except BaseException:
                # StoreErrors raised on purpose (caps, not found...) and cancellation: undo everything.
                await _rollback(db)
                raise

    async def _find_list(self, db: aiosqlite.Connection, user_id: int, name: str) -> tuple[int, str] | None:
        """``(list id, display name)`` of the user's list called ``name`` (any case), or None."""
        row = await _fetch_one(
            db, "SELECT id, name FROM lists WHERE user_id = ? AND name_key = ?", (user_id, list_key(name))
        )
        return None if row is None else (row[0], row[1])

    async def _require_list(self, db: aiosqlite.Connection, user_id: int, name: str) -> tuple[int, str]:
        """Like :meth:`_find_list`, raising :class:`ListNotFoundError` when there is no such list."""
        found = await self._find_list(db, user_id, name)
        if found is None:
            raise ListNotFoundError(name)
        return found

    async def _insert_list(
        self, db: aiosqlite.Connection, user_id: int, name: str, created_at: str | None = None
    ) -> int:
        """Create a list (cap checked inside the caller's write transaction); returns its id."""
        count = await _fetch_value(db, "SELECT count(*) FROM lists WHERE user_id = ?", (user_id,))
        if count >= self.max_lists_per_user:
            raise ListLimitError(
                f"You already have {count} lists, the most allowed ({self.max_lists_per_user}); "
                "delete one first."
            )
        cursor = await db.execute(
            "INSERT INTO lists (user_id, name, name_key, created_at) VALUES (?, ?, ?, ?)",
            (user_id, name, list_key(name), created_at or _now()),
        )
        return int(cursor.lastrowid or 0)

    async def _get_or_create_list(
        self, db: aiosqlite.Connection, user_id: int, name: str
    ) -> tuple[int, str, bool]:
        """``(list id, display name, created)`` for a list that exists after the call."""
        found = await self._find_list(db, user_id, name)
        if found is not None:
            return found[0], found[1], False
        return await self._insert_list(db, user_id, name), name, True

    async def _count_saved(self, db: aiosqlite.Connection, user_id: int) -> int:
        """Saved rows of the user, across lists (what the saved cap counts)."""
        return int(await _fetch_value(db, "SELECT count(*) FROM saved WHERE user_id = ?", (user_id,)))

    async def _prune(self, db: aiosqlite.Connection, paper_ids: Iterable[str]) -> int:
        """Delete the snapshots of these papers that no list holds any more; returns how many."""
        params = [(pid, pid) for pid in set(paper_ids)]
        if not params:
            return 0
        cursor = await db.executemany(_PRUNE_ONE, params)
        return max(0, cursor.rowcount)

    def _saved_limit_error(self) -> SavedLimitError:
        """The error for a save past ``max_saved_per_user``."""
        return SavedLimitError(
            f"You have saved {self.max_saved_per_user} papers, the most allowed; "
            "remove some before saving more."
        )

    # ----------------------------------------------------------------------------------- saving

    async def save_paper(
        self, user_id: int, paper: Paper, list_name: str | None = None, note: str | None = None
    ) -> SaveResult:
        """Save ``paper`` into a list (default :data:`DEFAULT_LIST`), creating the list if needed.

        Idempotent: saving again keeps one row and its original ``saved_at``; a given ``note``
        replaces the old one (``None`` keeps it, ``""`` clears it). Every save refreshes the snapshot.

        Raises:
            InvalidListNameError, NoteTooLongError, ListLimitError (new list), SavedLimitError.
        """
        uid = _check_user(user_id)
        name = DEFAULT_LIST if list_name is None else normalize_list_name(list_name)
        clean_note = None if note is None else normalize_note(note)
        snapshot = _snapshot_values(paper)
        async with self._tx(write=True) as db:
            list_id, display, list_created = await self._get_or_create_list(db, uid, name)
            in_corpus = self._corpus_ids is None or paper.id in self._corpus_ids
            now = _now()
            await db.execute(_SNAPSHOT_UPSERT, (*snapshot, now, now, int(in_corpus)))
            cursor = await db.execute(
                "INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (list_id, paper_id) DO NOTHING",
                (list_id, paper.id, uid, clean_note or "", now),
            )
            created = cursor.rowcount == 1
            if created:
                # Counting after the insert, inside the write lock, cannot race another saver.
                if await self._count_saved(db, uid) > self.max_saved_per_user:
                    raise self._saved_limit_error()
            elif clean_note is not None:
                await db.execute(
                    "UPDATE saved SET note = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    (clean_note, uid, list_id, paper.id),
                )
        log.debug("user %d saved %s in list %r (created=%s)", uid, paper.id, display, created)
        return SaveResult(created=created, list_name=display, list_created=list_created)

    async def unsave_paper(self, user_id: int, paper_id: str, list_name: str | None = None) -> int:
        """Remove a paper from one list, or from **every** list of the user when ``list_name`` is None.

        Returns the number of rows removed (>= 1).

        Raises:
            ListNotFoundError: The named list does not exist.
            NotSavedError: The paper was not there, so nothing was removed.
        """
        uid = _check_user(user_id)
        name = None if list_name is None else normalize_list_name(list_name)
        pid = _clean_paper_id(paper_id)
        async with self._tx(write=True) as db:
            if name is None:
                cursor = await db.execute("DELETE FROM saved WHERE user_id = ? AND paper_id = ?", (uid, pid))
                display = None
            else:
                list_id, display = await self._require_list(db, uid, name)
                cursor = await db.execute(
                    "DELETE FROM saved WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    (uid, list_id, pid),
                )
            removed = cursor.rowcount
            if removed == 0:
                raise NotSavedError(pid, display)
            await self._prune(db, [pid])
        log.debug("user %d unsaved %s from %d list(s)", uid, pid, removed)
        return removed

    async def move_paper(self, user_id: int, paper_id: str, from_list: str, to_list: str) -> None:
        """Move a saved paper to another list (created if needed), keeping its note and ``saved_at``.

        If the target list already holds the paper, the source row is dropped and the target keeps its
        own note (or takes the source's note when it had none). Moving to the same list is a no-op.

        Raises:
            ListNotFoundError (source), NotSavedError, InvalidListNameError, ListLimitError (new target).
        """
        uid = _check_user(user_id)
        source, target = normalize_list_name(from_list), normalize_list_name(to_list)
        pid = _clean_paper_id(paper_id)
        async with self._tx(write=True) as db:
            source_id, source_name = await self._require_list(db, uid, source)
            row = await _fetch_one(
                db,
                "SELECT note FROM saved WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                (uid, source_id, pid),
            )
            if row is None:
                raise NotSavedError(pid, source_name)
            target_id, _, _ = await self._get_or_create_list(db, uid, target)
            if target_id == source_id:
                return
            existing = await _fetch_one(
                db,
                "SELECT note FROM saved WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                (uid, target_id, pid),
            )
            if existing is None:
                await db.execute(
                    "UPDATE saved SET list_id = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    (target_id, uid, source_id, pid),
                )
            else:
                if not existing[0] and row[0]:
                    await db.execute(
                        "UPDATE saved SET note = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                        (row[0], uid, target_id, pid),
                    )
                await db.execute(
                    "DELETE FROM saved WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    (uid, source_id, pid),
                )
        log.debug("user %d moved %s", uid, pid)

    async def set_note(self, user_id: int, paper_id: str, note: str, list_name: str | None = None) -> None:
        """Set (``""``: clear) the note of a saved paper in one list, or in every list holding it (None).

        Raises:
            NoteTooLongError, ListNotFoundError, NotSavedError.
        """
        uid = _check_user(user_id)
        name = None if list_name is None else normalize_list_name(list_name)
        clean = normalize_note(note)
        pid = _clean_paper_id(paper_id)
        async with self._tx(write=True) as db:
            if name is None:
                cursor = await db.execute(
                    "UPDATE saved SET note = ? WHERE user_id = ? AND paper_id = ?", (clean, uid, pid)
                )
                display = None
            else:
                list_id, display = await self._require_list(db, uid, name)
                cursor = await db.execute(
                    "UPDATE saved SET note = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    (clean, uid, list_id, pid),
                )
            if cursor.rowcount == 0:
                raise NotSavedError(pid, display)
        log.debug("user %d set a note on %s (%d chars)", uid, pid, len(clean))

    # ------------------------------------------------------------------------------------ lists

    async def create_list(self, user_id: int, name: str) -> str:
        """Create an empty list; returns its display name.

        Raises:
            InvalidListNameError, ListExistsError (same name ignoring case), ListLimitError.
        """
        uid = _check_user(user_id)
        display = normalize_list_name(name)
        async with self._tx(write=True) as db:
            found = await self._find_list(db, uid, display)
            if found is not None:
                raise ListExistsError(f"You already have a list named “{found[1]}”.")
            await self._insert_list(db, uid, display)
        log.debug("user %d created list %r", uid, display)
        return display

    async def rename_list(self, user_id: int, old: str, new: str) -> None:
        """Rename a list (changing only the case of its name is allowed).

        Raises:
            ListNotFoundError, InvalidListNameError, ListExistsError.
        """
        uid = _check_user(user_id)
        old_name, new_name = normalize_list_name(old), normalize_list_name(new)
        async with self._tx(write=True) as db:
            list_id, _ = await self._require_list(db, uid, old_name)
            clash = await self._find_list(db, uid, new_name)
            if clash is not None and clash[0] != list_id:
                raise ListExistsError(f"You already have a list named “{clash[1]}”.")
            await db.execute(
                "UPDATE lists SET name = ?, name_key = ? WHERE user_id = ? AND id = ?",
                (new_name, list_key(new_name), uid, list_id),
            )
        log.debug("user %d renamed a list", uid)

    async def delete_list(self, user_id: int, name: str) -> int:
        """Delete a list and everything in it; returns how many items were removed.

        Deleting :data:`DEFAULT_LIST` is allowed; it is created again by the next default save.

        Raises:
            ListNotFoundError.
        """
        uid = _check_user(user_id)
        display = normalize_list_name(name)
        async with self._tx(write=True) as db:
            list_id, _ = await self._require_list(db, uid, display)
            ids = [
                row[0]
                for row in await db.execute_fetchall(
                    "SELECT paper_id FROM saved WHERE user_id = ? AND list_id = ?", (uid, list_id)
                )
            ]
            cursor = await db.execute("DELETE FROM saved WHERE user_id = ? AND list_id = ?", (uid, list_id))
            removed = cursor.rowcount
            await db.execute("DELETE FROM lists WHERE user_id = ? AND id = ?", (uid, list_id))
            await self._prune(db, ids)
        log.debug("user %d deleted a list with %d items", uid, removed)
        return removed

    async def get_list(
        self, user_id: int, list_name: str | None = None, *, offset: int = 0, limit: int = 10
    ) -> SavedPage:
        """One page of a list, newest save first (ties: latest insert first).

        The default list reads as empty until something is saved in it. A negative offset counts as 0;
        an offset past the end gives an empty page with the right ``total``.

        Raises:
            ListNotFoundError: A named (non-default) list does not exist.
            ValueError: ``limit`` outside 1..MAX_PAGE (a caller bug).
        """
        uid = _check_user(user_id)
        name = DEFAULT_LIST if list_name is None else normalize_list_name(list_name)
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be in 1..{MAX_PAGE}, not {limit}")
        offset = max(0, offset)
        async with self._tx(write=False) as db:
            found = await self._find_list(db, uid, name)
            if found is None:
                if list_key(name) == list_key(DEFAULT_LIST):
                    return SavedPage(items=(), total=0, offset=offset, list_name=DEFAULT_LIST)
                raise ListNotFoundError(name)
            list_id, display = found
            total = await _fetch_value(
                db, "SELECT count(*) FROM saved WHERE user_id = ? AND list_id = ?", (uid, list_id)
            )
            rows = await db.execute_fetchall(_PAGE, (uid, list_id, limit, offset))
        return SavedPage(items=tuple(_item(r) for r in rows), total=total, offset=offset, list_name=display)

    async def list_lists(self, user_id: int) -> list[ListInfo]:
        """The user's lists, oldest first, with item counts (only lists that exist)."""
        uid = _check_user(user_id)
        async with self._tx(write=False) as db:
            rows = await db.execute_fetchall(_LISTS, (uid,))
        return [ListInfo(name=r[0], count=r[2], created_at=_parse_ts(r[1])) for r in rows]

    async def saved_ids(self, user_id: int) -> set[str]:
        """Ids of every paper the user saved, in any list (to mark search results as saved)."""
        uid = _check_user(user_id)
        async with self._tx(write=False) as db:
            rows = await db.execute_fetchall("SELECT DISTINCT paper_id FROM saved WHERE user_id = ?", (uid,))
        return {r[0] for r in rows}

    async def lists_holding(self, user_id: int, paper_id: str) -> list[str]:
        """Display names of the user's lists that hold the paper, oldest list first (one indexed query)."""
        uid = _check_user(user_id)
        pid = paper_id.strip() if isinstance(paper_id, str) else paper_id
        async with self._tx(write=False) as db:
            rows = await db.execute_fetchall(
                "SELECT l.name FROM saved AS s JOIN lists AS l ON l.id = s.list_id "
                "WHERE s.user_id = ? AND s.paper_id = ? ORDER BY l.created_at, l.id",
                (uid, pid),
            )
        return [r[0] for r in rows]

    async def stats(self) -> StoreStats:
        """Whole-database counts."""
        async with self._tx(write=False) as db:
            saved = await _fetch_value(db, "SELECT count(*) FROM saved")
            users = await _fetch_value(db, "SELECT count(DISTINCT user_id) FROM lists")
            lists = await _fetch_value(db, "SELECT count(*) FROM lists")
            snapshots = await _fetch_value(db, "SELECT count(*) FROM papers")
            missing = await _fetch_value(db, "SELECT count(*) FROM papers WHERE in_corpus = 0")
        return StoreStats(
            saved_items=saved, users=users, lists=lists, snapshots=snapshots, missing_from_corpus=missing
        )

    async def integrity_check(self) -> str:
        """Run SQLite's full ``PRAGMA integrity_check``; returns ``"ok"`` or the problems found."""
        async with self._tx(write=False) as db:
            rows = await db.execute_fetchall("PRAGMA integrity_check")
        return "\n".join(str(r[0]) for r in rows)

    # ------------------------------------------------------------------------- export / import

    async def export(self, user_id: int, fmt: str, list_name: str | None = None) -> str:
        """The user's saved papers as ``"bib"``, ``"md"`` or ``"json"`` text.

        ``list_name=None`` exports every list, grouped by list (oldest list first, newest save first).
        JSON is re-importable with :meth:`import_json`.

        Raises:
            StoreError: Unknown format. ListNotFoundError: The named list does not exist.
        """
        uid = _check_user(user_id)
        kind = _FORMAT_ALIASES.get(str(fmt).strip().lower())
        if kind is None:
            raise StoreError(f"Unknown export format “{fmt}”; use one of: {', '.join(EXPORT_FORMATS)}.")
        name = None if list_name is None else normalize_list_name(list_name)
        async with self._tx(write=False) as db:
            list_rows = await db.execute_fetchall(_LISTS, (uid,))
            lists = [ListInfo(name=r[0], count=r[2], created_at=_parse_ts(r[1])) for r in list_rows]
            if name is None:
                rows = await db.execute_fetchall(_ALL_ITEMS, (uid,))
            else:
                list_id, display = await self._require_list(db, uid, name)
                lists = [info for info in lists if info.name == display]
                rows = await db.execute_fetchall(_PAGE, (uid, list_id, -1, 0))
        items = [_item(r) for r in rows]
        log.debug("user %d exported %d items as %s", uid, len(items), kind)
        # Formatting thousands of items is pure CPU: keep it off the event loop (Discord heartbeats).
        if kind == "bib":
            return await asyncio.to_thread(_export.to_bibtex, items)
        if kind == "md":
            return await asyncio.to_thread(_export.to_markdown, items, lists=lists)
        return await asyncio.to_thread(_export.to_json, items, lists=lists)

    async def import_json(
        self, user_id: int, data: str | bytes, list_name: str | None = None
    ) -> ImportResult:
        """Merge a JSON export (or a bare JSON array of items) into the user's lists.

        With ``list_name`` every item goes to that list; otherwise to the lists named in the file
        (created as needed, keeping their ``created_at``). Items keep their note and ``saved_at``.
        Papers already in the target list are skipped. A snapshot already in the database is kept
        (it came from the corpus); new ones are taken from the file. Bad records are reported in
        ``errors`` and skipped; the rest is imported in one transaction.

        Raises:
            ImportFormatError: Not JSON, not an export, or too large.
            SavedLimitError / ListLimitError: The import would pass a cap (nothing is imported).
        """
        uid = _check_user(user_id)
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise ImportFormatError("The file is not UTF-8 text.") from exc
        if len(data) > MAX_IMPORT_CHARS:
            raise ImportFormatError("The file is too large to import.")
        target = None if list_name is None else normalize_list_name(list_name)
        try:
            parsed = await asyncio.to_thread(_export.parse_json, data, note_max=NOTE_MAX, id_max=PAPER_ID_MAX)
        except ValueError as exc:
            raise ImportFormatError(str(exc)) from exc
        errors = list(parsed.errors)

        # Group the items per destination list key, first spelling wins.
        groups: dict[str, tuple[str, str | None, list[_export.ImportedItem]]] = {}
        for imported in parsed.lists:
            if target is not None:
                display, created_at = target, None
            else:
                try:
                    display = DEFAULT_LIST if imported.name is None else normalize_list_name(imported.name)
                except InvalidListNameError as exc:
                    errors.append(f"list “{imported.name}”: {exc} ({len(imported.items)} items skipped)")
                    continue
                created_at = _ts(imported.created_at) if imported.created_at else None
            entry = groups.setdefault(list_key(display), (display, created_at, []))
            entry[2].extend(imported.items)

        now_dt = datetime.now(UTC)
        now = _ts(now_dt)
        added = skipped = 0
        async with self._tx(write=True) as db:
            existing_lists = {
                r[2]: (r[0], r[1])
                for r in await db.execute_fetchall(
                    "SELECT id, name, name_key FROM lists WHERE user_id = ?", (uid,)
                )
            }
            existing_pairs = {
                (r[0], r[1])
                for r in await db.execute_fetchall(
                    "SELECT list_id, paper_id FROM saved WHERE user_id = ?", (uid,)
                )
            }
            new_keys = [key for key in groups if key not in existing_lists]
            if len(existing_lists) + len(new_keys) > self.max_lists_per_user:
                raise ListLimitError(
                    f"This import needs {len(new_keys)} new lists but you can have at most "
                    f"{self.max_lists_per_user}; nothing was imported."
                )
            list_ids: dict[str, int] = {
                key: existing_lists[key][0] for key in groups if key in existing_lists
            }
            for key in new_keys:
                display, created_at, _ = groups[key]
                list_ids[key] = await self._insert_list(db, uid, display, created_at)

            rows: list[tuple[int, str, int, str, str]] = []
            snapshots: dict[str, tuple[Any, ...]] = {}
            for key, (_, _, items) in groups.items():
                for it in items:
                    pair = (list_ids[key], it.paper_id)
                    if pair in existing_pairs:
                        skipped += 1
                        continue
                    existing_pairs.add(pair)
                    saved_at = _ts(min(it.saved_at, now_dt)) if it.saved_at else now
                    rows.append((list_ids[key], it.paper_id, uid, it.note, saved_at))
                    in_corpus = it.in_corpus if self._corpus_ids is None else it.paper_id in self._corpus_ids
                    snapshots.setdefault(
                        it.paper_id,
                        (
                            it.paper_id,
                            it.title,
                            json.dumps(list(it.authors), ensure_ascii=False),
                            int(it.et_al),
                            it.area,
                            it.abstract,
                            it.url,
                            now,
                            now,
                            int(in_corpus),
                        ),
                    )
            if await self._count_saved(db, uid) + len(rows) > self.max_saved_per_user:
                raise SavedLimitError(
                    f"This import would bring you past {self.max_saved_per_user} saved papers; "
                    "nothing was imported."
                )
            await db.executemany(_SNAPSHOT_INSERT_IF_NEW, list(snapshots.values()))
            await db.executemany(
                "INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) VALUES (?, ?, ?, ?, ?)", rows
            )
            added = len(rows)
        log.info("user %d imported %d items (%d duplicates, %d errors)", uid, added, skipped, len(errors))
        return ImportResult(added=added, skipped=skipped, errors=tuple(errors))

    # ------------------------------------------------------------------------------ maintenance

    async def forget_user(self, user_id: int) -> ForgetResult:
        """Delete every row of the user (items, lists, snapshots nobody else saved)."""
        uid = _check_user(user_id)
        async with self._tx(write=True) as db:
            ids = [
                r[0]
                for r in await db.execute_fetchall(
                    "SELECT DISTINCT paper_id FROM saved WHERE user_id = ?", (uid,)
                )
            ]
            saved = (await db.execute("DELETE FROM saved WHERE user_id = ?", (uid,))).rowcount
            lists = (await db.execute("DELETE FROM lists WHERE user_id = ?", (uid,))).rowcount
            snapshots = await self._prune(db, ids)
        log.info("forgot user %d: %d items, %d lists, %d snapshots", uid, saved, lists, snapshots)
        return ForgetResult(saved_items=saved, lists=lists, snapshots=snapshots)

    async def reconcile(self, papers: Iterable[Paper]) -> ReconcileResult:
        """Align the snapshots with a freshly (re)built corpus. Call after every (re)index.

        A saved paper missing from ``papers`` stays in every list, flagged not-in-corpus with its
        snapshot kept; one that reappears is flagged back and its snapshot refreshed. Saved rows are
        never touched. Orphan snapshots are pruned.

        ``papers`` is read once, in a worker thread: walking a 100k-paper corpus is tens of
        milliseconds of pure Python, which must not stall the event loop. Only the snapshot rows
        (the papers someone saved) are compared and updated.
        """
        now = _now()
        async with self._tx(write=True) as db:
            await db.execute(_PRUNE_ALL)
            rows = await db.execute_fetchall(
                "SELECT paper_id, title, authors, et_al, area, abstract, url, in_corpus FROM papers"
            )
            plan = await asyncio.to_thread(_plan_reconcile, papers, rows, now)
            await db.executemany("UPDATE papers SET in_corpus = 0 WHERE paper_id = ?", plan.gone_rows)
            await db.executemany(
                "UPDATE papers SET title = ?, authors = ?, et_al = ?, area = ?, abstract = ?, url = ?, "
                "last_seen = ?, in_corpus = 1 WHERE paper_id = ?",
                plan.changed_rows,
            )
            await db.executemany(
                "UPDATE papers SET last_seen = ?, in_corpus = 1 WHERE paper_id = ?", plan.seen_rows
            )
            # Set while still holding the lock, so no save can run between the commit and this hint.
            stale, self._corpus_ids = self._corpus_ids, plan.corpus_ids
        # The previous id set may be the last owner of 100k id strings: free them off the loop too.
        await asyncio.to_thread(_empty_piecewise, stale)
        result = plan.result
        log.info(
            "reconciled %d corpus papers: %d saved papers gone, %d returned, %d refreshed",
            len(plan.corpus_ids),
            len(result.gone),
            len(result.returned),
            result.refreshed,
        )
        return result


#: Papers walked (or ids freed) by a reconcile thread between two ``time.sleep(0)``: a pure-Python loop
#: keeps the GIL for the whole 5 ms switch interval unless it hands it over, and the event loop waits.
_RECONCILE_CHUNK = 5000
#: Snapshots compared between two ``time.sleep(0)`` (each costs a few µs).
_SNAPSHOT_CHUNK = 500


@dataclass(frozen=True, slots=True)
class _ReconcilePlan:
    """The updates :meth:`Store.reconcile` applies, computed off the event loop."""

    result: ReconcileResult
    corpus_ids: set[str]
    gone_rows: list[tuple[str]]
    changed_rows: list[tuple[Any, ...]]
    seen_rows: list[tuple[str, str]]


def _plan_reconcile(papers: Iterable[Paper], rows: Iterable[Sequence[Any]], now: str) -> _ReconcilePlan:
    """Compare the snapshot ``rows`` with the corpus (run in a worker thread: it walks every paper).

    Of the walk only the ids are kept, and the papers that have a snapshot.
    """
    snapshots = {row[0]: row for row in rows}
    ids: set[str] = set()
    saved: dict[str, Paper] = {}
    chunk: list[str] = []
    for paper in papers:
        chunk.append(paper.id)
        if paper.id in snapshots:
            saved[paper.id] = paper
        if len(chunk) == _RECONCILE_CHUNK:
            ids.update(chunk)
            chunk.clear()
            time.sleep(0)  # hand the GIL to the event loop if it is waiting for it
    ids.update(chunk)
    gone: list[str] = []
    returned: list[str] = []
    changed: list[tuple[Any, ...]] = []
    seen: list[tuple[str, str]] = []
    for n, (pid, row) in enumerate(snapshots.items(), 1):
        if n % _SNAPSHOT_CHUNK == 0:
            time.sleep(0)
        paper = saved.get(pid)
        if paper is None:
            if row[7]:
                gone.append(pid)
            continue
        values = _snapshot_values(paper)
        if tuple(row[1:7]) != values[1:]:
            changed.append((*values[1:], now, pid))
        else:
            seen.append((now, pid))
        if not row[7]:
            returned.append(pid)
    gone.sort()
    returned.sort()
    return _ReconcilePlan(
        result=ReconcileResult(gone=gone, returned=returned, refreshed=len(changed)),
        corpus_ids=ids,
        gone_rows=[(pid,) for pid in gone],
        changed_rows=changed,
        seen_rows=seen,
    )


def _empty_piecewise(ids: set[str] | None) -> None:
    """Empty a large set a chunk at a time (in a worker thread), letting the event loop in between."""
    while ids:
        for _ in range(min(_RECONCILE_CHUNK, len(ids))):
            ids.pop()
        time.sleep(0)


async def _rollback(db: aiosqlite.Connection) -> None:
    """Roll back if a transaction is open; a failed rollback is logged, never masks the first error."""
    try:
        await db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        # "no transaction is active": SQLite already rolled back (e.g. after SQLITE_FULL).
        log.debug("rollback: %s", exc)
