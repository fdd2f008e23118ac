"""The server driver: PostgreSQL through an asyncpg pool (:class:`PostgresStore`), for ``DATABASE_URL``.

Why asyncpg: it is the maintained asyncio driver for PostgreSQL (binary protocol, prepared-statement
cache, a connection pool that replaces broken connections), so paperbot needs no ORM and no thread
pool; the store's portable SQL runs on it once ``?`` placeholders are numbered ``$1, $2…``.

Design notes (the *why*):

* **Per-user advisory locks.** Every write takes ``pg_advisory_xact_lock(user_id)`` first: a user's
  read-modify-write (cap check, then insert; a list name, then create) is serialised exactly as
  SQLite's one writer does, while different users write in parallel from any number of processes.
  Shared snapshots a write touches are locked by paper (two-key advisory locks, a separate key
  space); a reconcile locks the ``papers`` table against writers.
* **Durable commits.** PostgreSQL acknowledges a commit once its WAL is flushed (``synchronous_commit``
  on, the server default), so a save the user was told about survives a crash of either side.
* **Migrations once.** ``bot/store/migrations/postgres/NNNN_*.sql`` run under a session advisory lock
  and are recorded in ``schema_migrations``: processes starting together migrate once.
* **The server may go away.** A lost connection is retried on a fresh one (the pool reconnects by
  itself); if the server stays away, users read "The database is unavailable, try again in a moment."
  A commit whose answer was lost is never replayed (it may have happened).
* **Start-up errors are one line** naming the URL with its password masked, and the cause.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Container, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import asyncpg

from bot.settings import mask_url
from bot.store.base import IndexLock
from bot.store.batch import SaveBatcher, SaveRequest
from bot.store.errors import DatabaseError, DatabaseUnavailableError, StoreError
from bot.store.migrations import load as load_migrations
from bot.store.records import SaveResult
from bot.store.sql import SNAPSHOT_UPSERT, SqlStore, Tx, _log_saved, now
from retrieval.models import Paper

log = logging.getLogger("bot.store")

T = TypeVar("T")

#: Numbered migrations (``bot/store/migrations/postgres/``), recorded in ``schema_migrations``.
MIGRATIONS = load_migrations("postgres")
SCHEMA_VERSION = len(MIGRATIONS)
#: Key of the session advisory lock migrations run under ("papr", 1).
MIGRATION_LOCK = (0x70617072, 1)
#: First key of the per-paper advisory locks (the second is ``hashtext(paper_id)``).
PAPER_LOCK = 0x70617073
#: Shared by every writer of snapshots, taken alone by a reconcile (or a copy).
SNAPSHOT_LOCK = (0x70617072, 2)
#: Held (session lock, on its own connection) by the one process building and publishing an index.
INDEX_LOCK = (0x70617072, 3)
#: The channel a published index generation is announced on (the payload is its number).
INDEX_CHANNEL = "paperbot_index"
#: Pool size per process: a few connections serve 50 concurrent users (each call is one short
#: transaction); several processes share the server's ``max_connections``.
POOL_MIN, POOL_MAX = 1, 10
#: Group commit (bot/store/batch.py): batches in flight at once per process, and saves per batch.
BATCH_WORKERS, BATCH_MAX = 2, 64
#: Seconds to wait for a connection (at start and from the pool) before calling the server unavailable.
CONNECT_TIMEOUT = 10.0
#: Transient failures (a dropped connection, a deadlock between two users' snapshots) are retried.
RETRIES = 4
_BACKOFF = (0.05, 0.2, 0.5, 1.0)

#: Errors that mean the server cannot be reached right now.
UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
)
#: Errors on a connection whose protocol was left in the middle of an operation: asyncpg's
#: ``InternalClientError: cannot switch to state 12; another operation (2) is in progress``, raised
#: by the *next* statement after the server went away during the previous one (a fast shutdown, a
#: crash) while the connection still looked open. The connection is dropped and the transaction
#: runs again on a fresh one, like a lost connection (which is what it is).
_STUCK = (asyncpg.exceptions.InternalClientError,)
_LOST = (*UNAVAILABLE, *_STUCK)
#: Errors after which the same transaction, run again, may well succeed.
_RETRY_SAME = (asyncpg.exceptions.SerializationError, asyncpg.exceptions.DeadlockDetectedError)


async def _rollback(conn: asyncpg.Connection, tx: asyncpg.transaction.Transaction) -> None:
    """Roll back after a failed operation; a rollback that fails never masks the first error.

    When the server goes away in the middle of a statement (a fast shutdown, a crash), the connection
    can still look open while its protocol is stuck in the failed operation: the rollback then raises
    ``InternalClientError: cannot switch to state 12; another operation (2) is in progress``, which
    would replace the error that says the server is gone. The connection is closed instead (the pool
    opens a fresh one) and the first error goes on.
    """
    if conn.is_closed():
        return
    try:
        await tx.rollback()
    except Exception as exc:  # noqa: BLE001 - the first error is the one that matters
        log.debug("rollback failed (%s: %s); closing the connection", type(exc).__name__, exc)
        conn.terminate()


@lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """``?`` placeholders as ``$1, $2…`` (the store's SQL has no ``?`` inside literals)."""
    counter = iter(range(1, 10_000))
    return re.sub(r"\?", lambda _: f"${next(counter)}", sql)


def _status_count(status: str) -> int:
    """Rows changed, from a command status such as ``INSERT 0 1`` or ``UPDATE 3``."""
    tail = status.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _password(url: str) -> str | None:
    try:
        secret = urlsplit(url).password
    except ValueError:
        return None
    return unquote(secret) if secret else None


def describe_error(exc: BaseException, url: str) -> str:
    """An operator's words for why the server at ``url`` cannot be used (never the password)."""
    if isinstance(exc, asyncpg.exceptions.InvalidPasswordError):
        cause = f"the server refused the password ({exc})"
    elif isinstance(exc, asyncpg.exceptions.InvalidAuthorizationSpecificationError):
        cause = f"the server refused the login ({exc})"
    elif isinstance(exc, asyncpg.exceptions.InvalidCatalogNameError):
        cause = f"no such database ({exc})"
    elif isinstance(exc, ConnectionRefusedError):
        cause = "connection refused: is the server running and listening there?"
    elif isinstance(exc, asyncio.TimeoutError):
        cause = f"no answer within {CONNECT_TIMEOUT:.0f} s"
    elif isinstance(exc, OSError):
        cause = f"cannot reach the server ({exc.strerror or exc})"
    elif isinstance(exc, ValueError | asyncpg.exceptions.ClientConfigurationError):
        cause = f"not a usable PostgreSQL URL ({exc})"
    else:
        cause = f"{type(exc).__name__}: {exc}"
    secret = _password(url)
    return cause.replace(secret, "***") if secret else cause


# The hot path: a batch of saves (bot/store/batch.py, one per user) in two statements after BEGIN.
# Locks come first, in their own statement: in READ COMMITTED a statement sees what was committed when
# it started, so what is read under the locks must be read by a later statement. Every writer takes
# its locks in one order (users ascending, the shared snapshot lock, papers by hash), so batches of
# overlapping users or papers, from any number of processes, cannot deadlock.
_BATCH_LOCKS = (
    "SELECT (SELECT count(pg_advisory_xact_lock(u)) FROM "
    "(SELECT DISTINCT u FROM unnest($1::bigint[]) AS u ORDER BY u) AS users), "
    "pg_advisory_xact_lock_shared($2, $3), "
    "(SELECT count(pg_advisory_xact_lock($4::int, h)) FROM "
    "(SELECT DISTINCT hashtext(x) AS h FROM unnest($5::text[]) AS x ORDER BY h) AS papers)"
)
# Then, for every request at once: find its list, decide (already there; else the user's count under
# the cap), refresh the snapshots of the papers that are kept, insert, update notes; one row back per
# request. All parts read the same snapshot (taken after the locks), and data-modifying CTEs always
# run to completion. A request whose list does not exist yet gets list_id NULL and is retried by the
# caller once the list is made.
_BATCH_WRITE = (
    "WITH req AS ("
    "SELECT r.n, r.uid, r.pid, r.note, r.has_note, l.id AS list_id, l.name AS list_name, "
    "EXISTS (SELECT 1 FROM saved AS s WHERE s.list_id = l.id AND s.paper_id = r.pid) AS present, "
    "(SELECT count(*) FROM saved AS s WHERE s.user_id = r.uid) AS total "
    "FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bool[]) "
    "WITH ORDINALITY AS r(uid, key, pid, note, has_note, n) "
    "LEFT JOIN lists AS l ON l.user_id = r.uid AND l.name_key = r.key), "
    "ok AS (SELECT * FROM req WHERE list_id IS NOT NULL AND (present OR total < $6)), "
    "snap AS (INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, "
    "last_seen, in_corpus) "
    "SELECT p.paper_id, p.title, p.authors, p.et_al, p.area, p.abstract, p.url, $7, $7, p.in_corpus "
    "FROM unnest($8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::text[], "
    "$15::int[]) AS p(paper_id, title, authors, et_al, area, abstract, url, in_corpus) "
    "WHERE p.paper_id IN (SELECT pid FROM ok) "
    + " ".join(SNAPSHOT_UPSERT[SNAPSHOT_UPSERT.index("ON CONFLICT") :].split())
    + " RETURNING 1), "
    "ins AS (INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) "
    "SELECT list_id, pid, uid, note, $7 FROM ok WHERE NOT present "
    "ON CONFLICT (list_id, paper_id) DO NOTHING RETURNING 1), "
    "upd AS (UPDATE saved AS s SET note = ok.note FROM ok "
    "WHERE ok.present AND ok.has_note AND s.list_id = ok.list_id AND s.paper_id = ok.pid RETURNING 1) "
    "SELECT list_id, list_name, present, total FROM req ORDER BY n"
)


def _batch_arguments(
    batch: Sequence[SaveRequest], corpus: Container[str] | None, max_saved: int, moment: datetime
) -> list[Any]:
    """The array parameters of :data:`_BATCH_WRITE` for ``batch`` (snapshots once per paper)."""
    snapshots = {r.paper.id: r.snapshot for r in batch}  # the same paper twice: the later one wins
    columns: list[list[Any]] = [list(c) for c in zip(*snapshots.values(), strict=True)]
    in_corpus = [int(corpus is None or pid in corpus) for pid in snapshots]
    return [
        [r.user_id for r in batch],
        [r.key for r in batch],
        [r.paper.id for r in batch],
        [r.note or "" for r in batch],
        [r.note is not None for r in batch],
        max_saved,
        moment,
        *columns,
        in_corpus,
    ]


class _PgTx:
    """:class:`~bot.store.sql.Tx` over one pooled asyncpg connection inside a transaction."""

    __slots__ = ("conn",)

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return list(await self.conn.fetch(numbered(sql), *args))

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        return await self.conn.fetchrow(numbered(sql), *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self.conn.fetchval(numbered(sql), *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return _status_count(await self.conn.execute(numbered(sql), *args))

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            await self.conn.executemany(numbered(sql), rows)

    async def lock_papers(self, paper_ids: Iterable[str]) -> None:
        ids = sorted(set(paper_ids))
        # Writers of snapshots share SNAPSHOT_LOCK; a reconcile takes it alone and waits for them all,
        # they for it, so a save decides "in the corpus?" against the corpus that was reconciled.
        # Then the papers themselves, in hash order, so two writers of overlapping sets cannot wait on
        # each other.
        await self.conn.execute(
            "SELECT pg_advisory_xact_lock_shared($1, $2), "
            "(SELECT count(pg_advisory_xact_lock($3::int, h)) FROM "
            "(SELECT DISTINCT hashtext(x) AS h FROM unnest($4::text[]) AS x ORDER BY h) AS t)",
            *SNAPSHOT_LOCK,
            PAPER_LOCK,
            ids,
        )


class PostgresStore(SqlStore):
    """Per-user saved-paper lists in a PostgreSQL database. Open with ``await open_store(url)``."""

    def __init__(
        self, pool: asyncpg.Pool, url: str, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> None:
        super().__init__(
            mask_url(url), max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user
        )
        self._pool: asyncpg.Pool | None = pool
        self._url = url
        self._batcher = SaveBatcher(
            self._save_batch, workers=BATCH_WORKERS, max_batch=BATCH_MAX, target=self.target
        )

    @classmethod
    async def connect(
        cls, target: str | Path, *, max_saved_per_user: int, max_lists_per_user: int
    ) -> PostgresStore:
        """Connect, migrate (once, under an advisory lock) and check the server accepts writes."""
        url = str(target)
        masked = mask_url(url)
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=POOL_MIN,
                max_size=POOL_MAX,
                timeout=CONNECT_TIMEOUT,
                command_timeout=60,
                max_inactive_connection_lifetime=300,
            )
        except (*UNAVAILABLE, ValueError, asyncpg.PostgresError) as exc:
            cause = describe_error(exc, url)
            raise DatabaseError(
                f"Cannot open the database {masked}: {cause}.", target=masked, cause=cause
            ) from None
        try:
            version = await cls._migrate(pool, url)
        except BaseException:
            pool.terminate()
            raise
        log.info("saved-papers store %s open (schema %d)", masked, version)
        return cls(pool, url, max_saved_per_user=max_saved_per_user, max_lists_per_user=max_lists_per_user)

    @staticmethod
    async def _migrate(pool: asyncpg.Pool, url: str) -> int:
        masked = mask_url(url)

        def refuse(cause: str) -> DatabaseError:
            return DatabaseError(f"Cannot open the database {masked}: {cause}.", target=masked, cause=cause)

        try:
            async with pool.acquire() as conn:
                if await conn.fetchval("SELECT pg_is_in_recovery()") or (
                    await conn.fetchval("SHOW default_transaction_read_only") == "on"
                ):
                    raise refuse("the server is read-only (a standby, or default_transaction_read_only)")
                await conn.execute("SELECT pg_advisory_lock($1, $2)", *MIGRATION_LOCK)
                try:
                    await conn.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                        "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                    )
                    version = int(
                        await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_migrations")
                    )
                    if version > SCHEMA_VERSION:
                        raise refuse(
                            f"written by a newer paperbot (schema {version} > {SCHEMA_VERSION}); "
                            "upgrade paperbot or use another database"
                        )
                    for step in MIGRATIONS[version:]:
                        async with conn.transaction():
                            for statement in step.statements:
                                await conn.execute(statement)
                            await conn.execute(
                                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                step.version,
                                step.name,
                            )
                        log.info(
                            "%s: migrated schema %d -> %d (%s)",
                            masked,
                            step.version - 1,
                            step.version,
                            step.name,
                        )
                        version = step.version
                finally:
                    await conn.execute("SELECT pg_advisory_unlock($1, $2)", *MIGRATION_LOCK)
        except DatabaseError:
            raise
        except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
            raise refuse(describe_error(exc, url)) from None
        return version

    async def close(self) -> None:
        await self._batcher.close()
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            await asyncio.wait_for(pool.close(), timeout=10)
        except (TimeoutError, *_LOST):
            pool.terminate()
        log.info("saved-papers store %s closed", self.target)

    async def _run(
        self,
        op: Callable[[Tx], Awaitable[T]],
        *,
        write: bool,
        user: int | None = None,
        exclusive: bool = False,
    ) -> T:
        """One transaction on a pooled connection; transient failures are retried on a fresh one."""
        pool = self._pool
        if pool is None:
            raise DatabaseError("The saved-papers store is closed.", target=self.target)
        for attempt in range(RETRIES + 1):
            committing = committed = False
            try:
                async with pool.acquire(timeout=CONNECT_TIMEOUT) as conn:
                    tx = conn.transaction(
                        isolation="read_committed" if write else "repeatable_read", readonly=not write
                    )
                    await tx.start()
                    try:
                        if exclusive:
                            await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", *SNAPSHOT_LOCK)
                        elif write and user is not None:
                            await conn.execute("SELECT pg_advisory_xact_lock($1::bigint)", user)
                        result = await op(_PgTx(conn))
                    except _STUCK:
                        conn.terminate()  # its protocol is stuck: no rollback can be sent on it
                        raise
                    except BaseException:
                        await _rollback(conn, tx)
                        raise
                    committing = True
                    await tx.commit()
                    committed = True
                    return result
            except _RETRY_SAME as exc:
                if attempt == RETRIES:
                    raise DatabaseError(
                        "The database is busy; please try again in a moment.",
                        target=self.target,
                        cause=str(exc),
                    ) from exc
                log.debug("%s: %s; retrying", self.target, exc)
            except _LOST as exc:
                if committed:  # only the connection's release failed: the transaction is durable
                    log.debug("%s: releasing a connection failed after the commit: %s", self.target, exc)
                    return result
                if committing or attempt == RETRIES:
                    log.warning(
                        "%s: the database is unavailable: %s", self.target, describe_error(exc, self._url)
                    )
                    raise DatabaseUnavailableError(
                        target=self.target, cause=describe_error(exc, self._url)
                    ) from exc
                log.info("%s: connection lost (%s); retrying on a fresh one", self.target, type(exc).__name__)
            except asyncpg.exceptions.ReadOnlySQLTransactionError as exc:
                raise DatabaseError(
                    "The database cannot be written right now; please tell the bot's owner.",
                    target=self.target,
                    cause="the server is read-only",
                ) from exc
            except asyncpg.exceptions.DiskFullError as exc:
                raise DatabaseError(
                    "The database cannot be written right now; please tell the bot's owner.",
                    target=self.target,
                    cause="the server's disk is full",
                ) from exc
            await asyncio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
        raise AssertionError("unreachable")  # pragma: no cover

    async def save_paper(
        self, user_id: int, paper: Paper, list_name: str | None = None, note: str | None = None
    ) -> SaveResult:
        """:meth:`bot.store.Store.save_paper`, group-committed: saves of different users made at the
        same time share one transaction (bot/store/batch.py). The same rules as the portable version
        in bot/store/sql.py, which the SQLite driver runs."""
        request = self._save_request(user_id, paper, list_name, note)
        result = await self._batcher.save(request)
        _log_saved(request, paper, result)
        return result

    async def _save_batch(self, batch: Sequence[SaveRequest]) -> list[SaveResult | BaseException]:
        """Write ``batch`` (at most one save per user) in one transaction: BEGIN, the locks, one
        statement for every save, COMMIT; each request gets its own result or error."""

        async def op(tx: Tx) -> list[SaveResult | BaseException]:
            conn = tx.conn  # type: ignore[attr-defined]
            await conn.execute(
                _BATCH_LOCKS,
                [r.user_id for r in batch],
                *SNAPSHOT_LOCK,
                PAPER_LOCK,
                [r.paper.id for r in batch],
            )
            # Read after the locks: a reconcile running meanwhile has committed (and set the ids).
            corpus = self._corpus_ids
            outcomes: list[SaveResult | BaseException | None] = [None] * len(batch)
            created_lists: set[int] = set()
            pending = list(range(len(batch)))
            for _ in range(2):
                moment = now()
                rows = await conn.fetch(
                    _BATCH_WRITE,
                    *_batch_arguments([batch[i] for i in pending], corpus, self.max_saved_per_user, moment),
                )
                missing = []
                for i, (list_id, display, present, total) in zip(pending, rows, strict=True):
                    if list_id is None:
                        missing.append((i, total))
                    elif present:
                        outcomes[i] = SaveResult(False, display, i in created_lists)
                    elif total >= self.max_saved_per_user:
                        outcomes[i] = self._saved_limit_error()
                    else:
                        outcomes[i] = SaveResult(True, display, i in created_lists)
                pending = []
                for i, total in missing:  # a new list: create it (caps checked as alone), save again
                    if i in created_lists:
                        raise AssertionError("a list created in this transaction is missing")
                    request = batch[i]
                    try:
                        await self._check_list_room(tx, request.user_id)
                        if total >= self.max_saved_per_user:
                            raise self._saved_limit_error()  # a full user's failed save makes no list
                        await self._insert_list(tx, request.user_id, request.name)
                    except StoreError as exc:
                        outcomes[i] = exc
                        continue
                    created_lists.add(i)
                    pending.append(i)
                if not pending:
                    break
            # (Every request has its outcome by now: a list made above is found by the second pass.)
            return [o if o is not None else AssertionError("no outcome") for o in outcomes]

        return await self._run(op, write=True)

    async def _follow_ids(self, tx: Tx, table: str) -> None:
        """A copy inserted rows of ``table`` with their own ids: move its identity sequence past them."""
        # Only forward: ids handed out and since deleted are not handed out again.
        sequence = f"pg_get_serial_sequence('{table}', 'id')"
        await tx.execute(
            f"SELECT setval({sequence}, m) FROM (SELECT max(id) AS m FROM {table}) AS t "  # noqa: S608 - a name from TABLES
            f"WHERE m > coalesce(pg_sequence_last_value({sequence}), 0)"
        )

    # ------------------------------------------------------------------------- the shared index

    async def _announce_generation(self, tx: Tx, generation: int) -> None:
        await tx.execute("SELECT pg_notify(?, ?)", INDEX_CHANNEL, str(generation))

    async def _connect_alone(self) -> asyncpg.Connection:
        """A connection of its own (not the pool's): a session lock or a LISTEN lives as long as it."""
        try:
            return await asyncpg.connect(self._url, timeout=CONNECT_TIMEOUT)
        except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
            raise DatabaseUnavailableError(target=self.target, cause=describe_error(exc, self._url)) from exc

    async def acquire_index_lock(self, *, wait: bool) -> IndexLock | None:
        """A session advisory lock on a connection of its own: the server drops it when that
        connection ends, so a builder that dies (on any host) frees it."""
        conn = await self._connect_alone()
        try:
            if wait:
                await conn.execute("SELECT pg_advisory_lock($1, $2)", *INDEX_LOCK)
            elif not await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", *INDEX_LOCK):
                await conn.close()
                return None
        except BaseException:
            conn.terminate()
            raise
        return _AdvisoryLock(conn)

    async def listen_index_generations(
        self, callback: Callable[[], None]
    ) -> Callable[[], Awaitable[None]] | None:
        """LISTEN on its own connection; a lost connection only delays pick-up to the next poll."""
        conn = await self._connect_alone()

        def notified(*_: object) -> None:
            callback()

        try:
            await conn.add_listener(INDEX_CHANNEL, notified)
        except BaseException:
            conn.terminate()
            raise

        async def stop() -> None:
            try:
                await asyncio.wait_for(conn.close(), timeout=5)
            except (TimeoutError, *_LOST):
                conn.terminate()

        return stop


class _AdvisoryLock:
    """A held index lock: the session advisory lock of one dedicated connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn: asyncpg.Connection | None = conn

    async def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            await asyncio.wait_for(conn.close(), timeout=5)  # the session ends: its lock goes with it
        except (TimeoutError, *_LOST):
            conn.terminate()
