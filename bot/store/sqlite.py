"""The embedded driver: one SQLite file, reached through aiosqlite (:class:`SQLiteStore`).

Design notes (the *why*):

* **One connection per store, one asyncio lock.** aiosqlite runs a connection on one worker thread;
  two coroutines sharing it would interleave their statements inside one transaction. The lock makes
  every public method one whole transaction. Several processes (or several stores) on one file are
  fine: SQLite's own locking plus a busy timeout serialise their writers.
* **WAL + ``synchronous=FULL``.** Readers never block the writer, and a commit that returned is on
  disk (fsync), so neither a crash nor a power cut loses a save the user was told about.
* **``BEGIN IMMEDIATE`` for every write.** Each write is a read-modify-write (check a cap, look a
  list up, then insert); taking the write lock up front means no other writer can slip in between.
* **Opening races.** Two openers meeting a fresh file contend for the switch to WAL, and SQLite
  answers that switch with ``SQLITE_BUSY`` *without* calling the busy handler; the whole (idempotent)
  preparation is retried until the busy timeout instead.
* **Never destroy a damaged file.** A file that is not SQLite or fails ``PRAGMA quick_check`` raises
  :class:`DatabaseCorruptError` before anything is written to it.
* **Writable or refused.** The open ends with a real write, so a read-only or immutable file, or a
  full disk, is one clear error at start-up, not a failure at the first save.
* **Cancellation-safe.** A cancelled call rolls its transaction back; the store stays usable.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from bot.store.base import IndexLock
from bot.store.errors import DatabaseBusyError, DatabaseCorruptError, DatabaseError
from bot.store.migrations import load as load_migrations
from bot.store.records import iso
from bot.store.sql import SqlStore, Tx

log = logging.getLogger("bot.store")

T = TypeVar("T")

#: How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_MS = 5000
#: Numbered migrations (``bot/store/migrations/sqlite/``); the schema is ``PRAGMA user_version``.
MIGRATIONS = load_migrations("sqlite")
#: The schema version this code writes.
SCHEMA_VERSION = len(MIGRATIONS)

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 10, 11, 13, 14, 26
#: What an operator reads for the SQLite result codes that mean "this file cannot be used here".
_CAUSES = {
    _SQLITE_READONLY: "the file is read-only (its permissions, an immutable flag or a read-only mount)",
    _SQLITE_FULL: "the disk is full",
    _SQLITE_IOERR: "an I/O error",
    _SQLITE_CANTOPEN: "the file cannot be created or opened (a missing folder, permissions or a read-only "
    "file system)",
    _SQLITE_PERM: "permission denied",
}


def _params(args: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(iso(a) if isinstance(a, datetime) else a for a in args)


def _code(exc: sqlite3.Error) -> int:
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF


def describe_error(exc: BaseException) -> str:
    """An operator's words for a sqlite3 error: the cause, then SQLite's own message."""
    if isinstance(exc, sqlite3.Error):
        cause = _CAUSES.get(_code(exc))
        if cause is not None:
            return f"{cause} ({exc})"
    return str(exc)


def _check_header(path: Path) -> None:
    """Refuse a non-empty file that does not start with SQLite's magic, before SQLite opens it."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DatabaseError(
            f"Cannot read the saved-papers database {path}: {exc.strerror}.",
            target=str(path),
            cause=f"cannot read it ({exc.strerror})",
        ) from exc
    if head and head != _SQLITE_MAGIC:
        raise DatabaseCorruptError(path, "not a SQLite database")


def _wrap(exc: sqlite3.Error, path: Path, *, at_open: bool = False) -> DatabaseError:
    """Turn an unexpected sqlite3 error into a :class:`DatabaseError` fit for whoever will read it."""
    code = _code(exc)
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return DatabaseCorruptError(path, str(exc), at_open=at_open)
    cause = describe_error(exc)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return DatabaseBusyError(
            "The saved-papers database is busy; please try again in a moment.",
            target=str(path),
            cause=f"busy for more than {BUSY_TIMEOUT_MS} ms ({exc})",
        )
    if at_open:
        return DatabaseError(
            f"Cannot open the saved-papers database {path}: {cause}.", target=str(path), cause=cause
        )
    return DatabaseError(
        "The saved-papers database failed; please try again later.", target=str(path), cause=cause
    )


def _probe_open(path: Path) -> None:
    """Open the file with the plain sqlite3 module first (in a worker thread): when it cannot be opened
    at all, no aiosqlite thread is started, so none can outlive a start-up that gives up at once."""
    raw = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        raw.execute("PRAGMA schema_version").fetchone()
    finally:
        raw.close()


class _SQLiteTx:
    """:class:`~bot.store.sql.Tx` over the store's aiosqlite connection."""

    __slots__ = ("db",)

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return list(await self.db.execute_fetchall(sql, _params(args)))

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        async with self.db.execute(sql, _params(args)) as cursor:
            return await cursor.fetchone()

    async def fetchval(self, sql: str, *args: Any) -> Any:
        row = await self.fetchrow(sql, *args)
        return None if row is None else row[0]

    async def execute(self, sql: str, *args: Any) -> int:
        async with self.db.execute(sql, _params(args)) as cursor:
            if cursor.description is not None:  # RETURNING: the rows must be read for the write to finish
                await cursor.fetchall()
            return max(0, cursor.rowcount)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [_params(r) for r in rows]
        if rows:
            await self.db.executemany(sql, rows)

    async def lock_papers(self, paper_ids: Iterable[str]) -> None:
        return None  # BEGIN IMMEDIATE already holds the whole database's write lock


class SQLiteStore(SqlStore):
    """Per-user saved-paper lists in one SQLite file. Open with ``await open_store(path)``."""

    def __init__(
        self, db: aiosqlite.Connection, path: Path, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> None:
        """Use :func:`bot.store.open_store`; this only wires an already prepared connection."""
        super().__init__(
            str(path), max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user
        )
        self._db: aiosqlite.Connection | None = db
        self.path = path
        self._lock = asyncio.Lock()

    # ---------------------------------------------------------------------------- open / close

    @classmethod
    async def connect(
        cls, target: str | Path, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> SQLiteStore:
        """Open (creating it and its folder if needed), migrate and probe the database at ``path``."""
        path = Path(target)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(
                f"Cannot create the folder of {path}: {exc.strerror}.",
                target=str(path),
                cause=f"cannot create its folder ({exc.strerror})",
            ) from exc
        _check_header(path)
        try:
            await asyncio.to_thread(_probe_open, path)
            # isolation_level=None: the sqlite3 module must not open transactions behind our back.
            db = await aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise _wrap(exc, path, at_open=True) from exc
        try:
            version = await cls._prepare(db, path)
        except BaseException:
            await db.close()
            raise
        log.info("saved-papers store %s open (schema %d)", path, version)
        return cls(db, path, max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user)

    @classmethod
    async def _prepare(cls, db: aiosqlite.Connection, path: Path) -> int:
        """Check, set up, migrate and probe; retried while another opener holds the file (see notes)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return await cls._prepare_once(db, path)
            except sqlite3.OperationalError as exc:
                if _code(exc) not in (_SQLITE_BUSY, _SQLITE_LOCKED) or time.monotonic() > deadline:
                    raise _wrap(exc, path, at_open=True) from exc
                log.debug("%s: busy while opening (%s); retrying", path, exc)
                await asyncio.sleep(random.uniform(0.005, 0.05))  # noqa: S311 - jitter, not security
            except sqlite3.Error as exc:
                raise _wrap(exc, path, at_open=True) from exc

    @staticmethod
    async def _prepare_once(db: aiosqlite.Connection, path: Path) -> int:
        await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # Read-only checks first: nothing may be written to a file we may have to refuse.
        problems = [row[0] for row in await db.execute_fetchall("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise DatabaseCorruptError(path, "; ".join(str(p) for p in problems[:3]))
        version = await _fetch_value(db, "PRAGMA user_version")
        _refuse_newer(version, path)
        mode = await _fetch_value(db, "PRAGMA journal_mode")
        if str(mode).lower() != "wal":
            mode = await _fetch_value(db, "PRAGMA journal_mode = WAL")
            if str(mode).lower() != "wal":
                log.warning("%s: journal mode is %s, not WAL", path, mode)
        # FULL: a commit that returned survives a power cut too; fsync is cheap next to a Discord RTT.
        await db.execute("PRAGMA synchronous = FULL")
        await db.execute("PRAGMA foreign_keys = ON")
        version = await SQLiteStore._migrate(db, path)
        # A real write (the header's schema version, unchanged): a read-only file or a full disk fails
        # here, at start-up, rather than at the first save or the reconcile.
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute(f"PRAGMA user_version = {version}")
            await db.execute("COMMIT")
        except BaseException:
            await _rollback(db)
            raise
        return version

    @staticmethod
    async def _migrate(db: aiosqlite.Connection, path: Path) -> int:
        """Apply pending migrations, one transaction per step (another process may race us)."""
        while True:
            try:
                await db.execute("BEGIN IMMEDIATE")
                # Re-read under the write lock: a concurrent opener may have migrated meanwhile.
                version = await _fetch_value(db, "PRAGMA user_version")
                _refuse_newer(version, path)
                if version == SCHEMA_VERSION:
                    await db.execute("COMMIT")
                    return version
                for statement in MIGRATIONS[version].statements:
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {version + 1}")
                await db.execute("COMMIT")
            except BaseException:
                await _rollback(db)
                raise
            log.info("%s: migrated schema %d -> %d", path, version, version + 1)

    async def close(self) -> None:
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

    # ------------------------------------------------------------------------------ transactions

    async def _run(
        self,
        op: Callable[[Tx], Awaitable[T]],
        *,
        write: bool,
        user: int | None = None,
        exclusive: bool = False,
    ) -> T:
        """One transaction on the shared connection, exclusive among this store's tasks.

        Writes use ``BEGIN IMMEDIATE`` (take the write lock now, waiting up to the busy timeout);
        reads a deferred transaction, so that several SELECTs see one snapshot.
        """
        async with self._lock:
            db = self._db
            if db is None:
                raise DatabaseError("The saved-papers store is closed.", target=str(self.path))
            # aiosqlite runs statements in order on its thread, and a statement already queued runs
            # even if the awaiting task is cancelled. So on *any* exception, BEGIN included, a
            # ROLLBACK is queued behind it: the connection never stays inside a stray transaction.
            try:
                await db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                result = await op(_SQLiteTx(db))
                await db.execute("COMMIT")
                return result
            except sqlite3.Error as exc:
                await _rollback(db)
                wrapped = _wrap(exc, self.path)
                if isinstance(wrapped, DatabaseCorruptError):
                    log.critical("%s is damaged: %s", self.path, exc)
                elif isinstance(wrapped, DatabaseBusyError):
                    log.warning("%s: busy for %d ms: %s", self.path, BUSY_TIMEOUT_MS, exc)
                else:
                    log.error("%s: database error: %s", self.path, describe_error(exc))
                raise wrapped from exc
            except BaseException:
                # StoreErrors raised on purpose (caps, not found...) and cancellation: undo everything.
                await _rollback(db)
                raise

    # ------------------------------------------------------------------------- the shared index

    async def acquire_index_lock(self, *, wait: bool) -> IndexLock | None:
        """An exclusive ``flock`` on ``<database>.index-lock`` beside the file (the processes sharing
        one SQLite file share a host): the kernel drops it when its holder dies, however it dies."""
        lock_path = self.path.with_name(self.path.name + ".index-lock")
        while True:
            try:
                held = await asyncio.to_thread(_try_flock, lock_path)
            except OSError as exc:
                cause = f"cannot lock {lock_path} ({exc.strerror or exc})"
                raise DatabaseError(
                    f"Cannot take the index lock: {cause}.", target=str(self.path), cause=cause
                ) from exc
            if held is not None or not wait:
                return held
            await asyncio.sleep(0.05)


class _FileLock:
    """A held ``flock`` (the open file descriptor that holds it)."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    async def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            await asyncio.to_thread(os.close, fd)  # closing the descriptor drops the lock


def _try_flock(path: Path) -> _FileLock | None:
    """Take an exclusive flock on ``path`` without waiting (None: another process holds it)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return _FileLock(fd)


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise DatabaseError(
            f"The saved-papers database {path} was written by a newer paperbot "
            f"(schema {version} > {SCHEMA_VERSION}); upgrade paperbot or use another file.",
            target=str(path),
            cause=f"written by a newer paperbot (schema {version} > {SCHEMA_VERSION})",
        )


async def _fetch_value(db: aiosqlite.Connection, sql: str) -> Any:
    rows = list(await db.execute_fetchall(sql))
    return rows[0][0] if rows else None


async def _rollback(db: aiosqlite.Connection) -> None:
    """Roll back if a transaction is open; a failed rollback is logged, never masks the first error."""
    try:
        await db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        # "no transaction is active": SQLite already rolled back (e.g. after SQLITE_FULL).
        log.debug("rollback: %s", exc)
