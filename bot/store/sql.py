"""The rules of the store, once, over portable SQL: :class:`SqlStore`.

Every statement is written with ``?`` placeholders and runs unchanged on SQLite and PostgreSQL (the
PostgreSQL driver numbers the placeholders). A driver provides :meth:`SqlStore._run` (one transaction,
retried when the database says so) and a :class:`Tx` (the statements of that transaction).

Design notes (the *why*):

* **Every public method is one transaction.** A method validates its arguments first, then runs one
  ``op(tx)``; a cap check and the insert it guards are in the same transaction, under a write lock
  that covers the user (SQLite: the database's write lock; PostgreSQL: an advisory lock per user).
* **Snapshots.** The store keeps its own copy of every saved paper taken from the corpus (``papers``,
  shared by every user), so a paper that leaves the corpus still shows in the lists holding it
  (flagged ``in_corpus=False``) and comes back when re-indexed.
* **Imports are private.** A record read from a user's file is stored in ``imported`` under that
  user's id, never in ``papers``: what one user imports can never change what another user sees.
  Where a corpus snapshot exists it wins, for the importer too.
* **Users are isolated by construction.** Every statement on a user's rows has a ``user_id = ?`` term
  and list ids never leave this module. Only :meth:`stats`, reconcile and copies look across users.
* **Timestamps** are aware UTC datetimes here; the SQLite driver stores them as fixed-width ISO-8601
  text (text order is time order), PostgreSQL as ``timestamptz``.
"""

from __future__ import annotations

import abc
import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from bot.store.base import CorpusLookup, Store
from bot.store.batch import SaveRequest
from bot.store.errors import (
    ClubLimitError,
    CopyConflictError,
    InvalidListNameError,
    ListExistsError,
    ListLimitError,
    ListNotFoundError,
    NotSavedError,
    SavedLimitError,
    StoreError,
    WatchLimitError,
    WatchNotFoundError,
)
from bot.store.records import (
    DEFAULT_LIST,
    MAX_CLUB_PAPERS,
    MAX_PAGE,
    MAX_WATCHES_PER_USER,
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
    ReconcileResult,
    SavedItem,
    SavedPage,
    SaveResult,
    StoreStats,
    UserFootprint,
    WatchInfo,
    check_user,
    clean_paper_id,
    clean_text,
    list_key,
    normalize_list_name,
    normalize_note,
    utc,
)
from retrieval.english import plural
from retrieval.models import Paper

log = logging.getLogger("bot.store")

T = TypeVar("T")
_WATCH_COLUMNS = "id, user_id, query, area, author, created_at"
_CLUB_COLUMNS = "paper_id, title, authors, et_al, area, abstract, url, note, added_by, added_at"


@dataclass(frozen=True, slots=True)
class Table:
    """A table of user data: what :meth:`SqlStore.copy_from` moves and :meth:`SqlStore.dump` returns.

    Attributes:
        rows: What one row is, for people (the counts ``paperbot db copy`` prints).
        key: The primary key (a dump's rows are in its order, the same on every backend).
        columns: Every column, in the order a dump gives them.
    """

    rows: str
    key: tuple[str, ...]
    columns: tuple[str, ...]


_SNAPSHOT_FIELDS = ("title", "authors", "et_al", "area", "abstract", "url")

#: Every table that holds what people saved (the users' lists, items, imports and watches; the
#: servers' reading lists) and the snapshots shown for them: a copy moves every row of each.
#: tests/bot/store/test_copy.py holds this and NOT_COPIED to both backends' schemas, so a new table
#: or column is copied, or named as left behind, not forgotten.
TABLES: dict[str, Table] = {
    "lists": Table("lists", ("id",), ("id", "user_id", "name", "name_key", "created_at")),
    "saved": Table("saved items", ("id",), ("id", "list_id", "paper_id", "user_id", "note", "saved_at")),
    "papers": Table(
        "paper snapshots",
        ("paper_id",),
        ("paper_id", *_SNAPSHOT_FIELDS, "first_seen", "last_seen", "in_corpus"),
    ),
    "imported": Table(
        "imported records", ("user_id", "paper_id"), ("user_id", "paper_id", *_SNAPSHOT_FIELDS)
    ),
    "watches": Table("watches", ("id",), ("id", "user_id", "query", "area", "author", "created_at")),
    "watch_pauses": Table("watch pauses", ("user_id",), ("user_id", "paused_at", "told")),
    "club_papers": Table(
        "club entries",
        ("guild_id", "paper_id"),
        ("guild_id", "paper_id", *_SNAPSHOT_FIELDS, "note", "added_by", "added_at"),
    ),
}
#: The columns of those tables that hold a time (``timestamptz`` on PostgreSQL, ISO text on SQLite).
TIME_COLUMNS = frozenset({"created_at", "saved_at", "first_seen", "last_seen", "paused_at", "added_at"})
#: The tables a copy leaves behind, and why: each describes one deployment, not what anyone saved.
NOT_COPIED: dict[str, str] = {
    "index_generation": (
        "the index this database's processes serve: a cache file on the host that built it and that "
        "host's generation count; the target's processes build and publish their own (the copy marks "
        "its generation unreconciled, so the copied snapshots are reconciled with it)"
    ),
    "schema_migrations": "PostgreSQL's record of the migrations run on that database (SQLite: user_version)",
}


#: The column of each table that names a user: what /forgetme reaches (the reading lists' ``added_by``
#: is set to 0, the others' rows are deleted).
USER_COLUMNS: dict[str, str] = {
    "lists": "user_id",
    "saved": "user_id",
    "imported": "user_id",
    "watches": "user_id",
    "watch_pauses": "user_id",
    "club_papers": "added_by",
}


class Tx(Protocol):
    """The statements of one transaction (``?`` placeholders; datetimes as parameters)."""

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        """Every row."""
        ...

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        """The first row, or None."""
        ...

    async def fetchval(self, sql: str, *args: Any) -> Any:
        """The first column of the first row, or None."""
        ...

    async def execute(self, sql: str, *args: Any) -> int:
        """Run one statement; returns the rows it changed."""
        ...

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per parameter row."""
        ...

    async def lock_papers(self, paper_ids: Iterable[str]) -> None:
        """Serialise writers of these shared snapshots, and wait for a running reconcile to finish
        (no-op where the database's one write lock already does both)."""
        ...


# ------------------------------------------------------------------------------------------ SQL text

SNAPSHOT_UPSERT = """
INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, in_corpus)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (paper_id) DO UPDATE SET
    title = excluded.title, authors = excluded.authors, et_al = excluded.et_al, area = excluded.area,
    abstract = excluded.abstract, url = excluded.url,
    last_seen = CASE WHEN excluded.in_corpus = 1 THEN excluded.last_seen ELSE papers.last_seen END,
    in_corpus = excluded.in_corpus
"""


def _insert_or_keep(table: str) -> str:
    """The insert of a copied row of ``table`` that keeps the row already there with its key."""
    spec = TABLES[table]
    return (
        f"INSERT INTO {table} ({', '.join(spec.columns)}) VALUES ({', '.join('?' * len(spec.columns))}) "  # noqa: S608 - names from TABLES
        f"ON CONFLICT ({', '.join(spec.key)}) DO NOTHING"
    )


_IMPORTED_INSERT = _insert_or_keep("imported")
_PRUNE_PAPER = (
    "DELETE FROM papers WHERE paper_id = ? AND NOT EXISTS (SELECT 1 FROM saved WHERE saved.paper_id = ?)"
)
_PRUNE_IMPORTED = (
    "DELETE FROM imported WHERE user_id = ? AND paper_id = ? AND NOT EXISTS "
    "(SELECT 1 FROM saved WHERE saved.user_id = ? AND saved.paper_id = ?)"
)
_PRUNE_ALL = (
    "DELETE FROM papers WHERE NOT EXISTS (SELECT 1 FROM saved WHERE saved.paper_id = papers.paper_id)"
)
_PRUNE_ALL_IMPORTED = (
    "DELETE FROM imported WHERE NOT EXISTS (SELECT 1 FROM saved "
    "WHERE saved.user_id = imported.user_id AND saved.paper_id = imported.paper_id)"
)
# The corpus snapshot wins over the user's own imported fields; columns in _item()'s order.
_ITEM_COLUMNS = """
SELECT l.name, s.paper_id,
    COALESCE(p.title, i.title, s.paper_id), COALESCE(p.authors, i.authors, '[]'),
    COALESCE(p.et_al, i.et_al, 0), COALESCE(p.area, i.area, ''), COALESCE(p.abstract, i.abstract, ''),
    CASE WHEN p.paper_id IS NULL THEN i.url ELSE p.url END,
    s.note, s.saved_at, COALESCE(p.in_corpus, 0), CASE WHEN p.paper_id IS NULL THEN 1 ELSE 0 END
FROM saved AS s JOIN lists AS l ON l.id = s.list_id
LEFT JOIN papers AS p ON p.paper_id = s.paper_id
LEFT JOIN imported AS i ON i.user_id = s.user_id AND i.paper_id = s.paper_id
"""
LIST_ITEMS = (
    _ITEM_COLUMNS
    + """
WHERE s.user_id = ? AND s.list_id = ?
ORDER BY s.saved_at DESC, s.id DESC
"""
)
#: One page of a list (paging walks the (user_id, list_id, saved_at) index backwards).
PAGE = LIST_ITEMS + "LIMIT ? OFFSET ?"
_ALL_ITEMS = (
    _ITEM_COLUMNS
    + """
WHERE s.user_id = ?
ORDER BY l.created_at, l.id, s.saved_at DESC, s.id DESC
"""
)
_LISTS = """
SELECT l.name, l.created_at,
    (SELECT count(*) FROM saved AS s WHERE s.user_id = l.user_id AND s.list_id = l.id)
FROM lists AS l WHERE l.user_id = ?
ORDER BY l.created_at, l.id
"""


# ------------------------------------------------------------------------------------------- values


def now() -> datetime:
    """The current time, as stored (microseconds, UTC)."""
    return datetime.now(UTC)


def parse_time(value: Any) -> datetime:
    """A stored time (SQLite text or a PostgreSQL datetime) as an aware UTC datetime."""
    if isinstance(value, datetime):
        return utc(value)
    return utc(datetime.fromisoformat(value))


def snapshot_values(paper: Paper) -> tuple[str, str, str, int, str, str, str | None]:
    """The stored snapshot columns of a paper (authors as a JSON array)."""
    pid = paper.id
    if not isinstance(pid, str) or not pid.strip() or len(pid) > PAPER_ID_MAX:
        raise ValueError(f"cannot save a paper with id {pid!r}")
    return (
        pid,
        clean_text(paper.title),
        json.dumps([clean_text(a) for a in paper.authors], ensure_ascii=False),
        int(bool(paper.et_al)),
        clean_text(paper.area),
        clean_text(paper.abstract),
        clean_text(paper.url) if paper.url else None,
    )


def _imported_values(user_id: int, item: ImportedItem) -> tuple[Any, ...]:
    return (
        user_id,
        item.paper_id,
        clean_text(item.title),
        json.dumps([clean_text(a) for a in item.authors], ensure_ascii=False),
        int(item.et_al),
        clean_text(item.area),
        clean_text(item.abstract),
        item.url,
    )


def _item(row: Sequence[Any]) -> SavedItem:
    """Build a :class:`SavedItem` from a row of the item queries."""
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
        saved_at=parse_time(row[9]),
        in_corpus=bool(row[10]),
        imported=bool(row[11]),
    )


def _list_info(row: Sequence[Any]) -> ListInfo:
    return ListInfo(name=row[0], count=int(row[2]), created_at=parse_time(row[1]))


# ---------------------------------------------------------------------------------------- the store


class SqlStore(Store):
    """:class:`~bot.store.base.Store` over portable SQL; drivers supply transactions."""

    def __init__(self, target: str, *, max_saved_per_user: int, max_lists_per_user: int) -> None:
        self.target = target
        self.max_saved_per_user = max_saved_per_user
        self.max_lists_per_user = max_lists_per_user
        self.note_max = NOTE_MAX
        # Ids of the corpus given to the last reconcile() of this process (None until then). A save of
        # a paper outside it (a stale Paper object) must not mark the snapshot as in the corpus. For
        # an index's paper table this is its IdSet: a look-up in the mapped ids, no string per paper.
        self._corpus_ids: Collection[str] | None = None

    @property
    def save_batches(self) -> tuple[int, int]:
        """``(transactions, saves)`` group commit has written so far (bench/store.py prints the ratio)."""
        batcher = getattr(self, "_batcher", None)
        return (0, 0) if batcher is None else (batcher.batches, batcher.saves)

    @abc.abstractmethod
    async def _run(
        self,
        op: Callable[[Tx], Awaitable[T]],
        *,
        write: bool,
        user: int | None = None,
        exclusive: bool = False,
    ) -> T:
        """Run ``op`` in one transaction (``write``: under a lock covering ``user``'s rows, or every
        snapshot when ``exclusive``); commit when it returns, roll back when it raises."""

    # ------------------------------------------------------------------------------- helpers

    @staticmethod
    async def _find_list(tx: Tx, user_id: int, name: str) -> tuple[int, str] | None:
        """``(list id, display name)`` of the user's list called ``name`` (any case), or None."""
        row = await tx.fetchrow(
            "SELECT id, name FROM lists WHERE user_id = ? AND name_key = ?", user_id, list_key(name)
        )
        return None if row is None else (int(row[0]), row[1])

    async def _require_list(self, tx: Tx, user_id: int, name: str) -> tuple[int, str]:
        found = await self._find_list(tx, user_id, name)
        if found is None:
            raise ListNotFoundError(name)
        return found

    async def _check_list_room(self, tx: Tx, user_id: int) -> None:
        """Raise :class:`ListLimitError` when the user has the most lists allowed."""
        count = int(await tx.fetchval("SELECT count(*) FROM lists WHERE user_id = ?", user_id))
        if count >= self.max_lists_per_user:
            raise ListLimitError(
                f"You already have {plural(count, 'list')}, the most allowed ({self.max_lists_per_user}); "
                "delete one first."
            )

    async def _insert_list(self, tx: Tx, user_id: int, name: str, created_at: datetime | None = None) -> int:
        """Create a list (cap checked inside the caller's write transaction); returns its id."""
        await self._check_list_room(tx, user_id)
        return int(
            await tx.fetchval(
                "INSERT INTO lists (user_id, name, name_key, created_at) VALUES (?, ?, ?, ?) RETURNING id",
                user_id,
                name,
                list_key(name),
                created_at or now(),
            )
        )

    async def _get_or_create_list(self, tx: Tx, user_id: int, name: str) -> tuple[int, str, bool]:
        found = await self._find_list(tx, user_id, name)
        if found is not None:
            return found[0], found[1], False
        return await self._insert_list(tx, user_id, name), name, True

    @staticmethod
    async def _count_saved(tx: Tx, user_id: int) -> int:
        return int(await tx.fetchval("SELECT count(*) FROM saved WHERE user_id = ?", user_id))

    @staticmethod
    async def _prune(tx: Tx, user_id: int, paper_ids: Iterable[str]) -> int:
        """Delete the snapshots of these papers no list holds any more (shared, and this user's
        imported fields); returns how many."""
        ids = sorted(set(paper_ids))
        if not ids:
            return 0
        await tx.lock_papers(ids)
        pruned = 0
        for pid in ids:
            pruned += await tx.execute(_PRUNE_PAPER, pid, pid)
            pruned += await tx.execute(_PRUNE_IMPORTED, user_id, pid, user_id, pid)
        return pruned

    def _saved_limit_error(self) -> SavedLimitError:
        return SavedLimitError(
            f"You have saved {plural(self.max_saved_per_user, 'paper')}, the most allowed; "
            "remove some before saving more."
        )

    # ---------------------------------------------------------------------------------- saving

    async def save_paper(
        self, user_id: int, paper: Paper, list_name: str | None = None, note: str | None = None
    ) -> SaveResult:
        request = self._save_request(user_id, paper, list_name, note)

        async def op(tx: Tx) -> SaveResult:
            return await self._save_one(tx, request)

        result = await self._run(op, write=True, user=request.user_id)
        _log_saved(request, paper, result)
        return result

    @staticmethod
    def _save_request(
        user_id: int, paper: Paper, list_name: str | None = None, note: str | None = None
    ) -> SaveRequest:
        """Validate a save's arguments (raising at once, before any queue or transaction)."""
        uid = check_user(user_id)
        name = DEFAULT_LIST if list_name is None else normalize_list_name(list_name)
        clean_note = None if note is None else normalize_note(note)
        return SaveRequest(uid, paper, name, list_key(name), clean_note, snapshot_values(paper))

    async def _save_one(self, tx: Tx, request: SaveRequest) -> SaveResult:
        """One save inside the caller's write transaction (under a lock covering its user)."""
        uid, paper, clean_note = request.user_id, request.paper, request.note
        list_id, display, list_created = await self._get_or_create_list(tx, uid, request.name)
        await tx.lock_papers([paper.id])
        # Read after the lock: a reconcile running meanwhile has committed (and set the ids) by now.
        in_corpus = self._corpus_ids is None or paper.id in self._corpus_ids
        moment = now()
        await tx.execute(SNAPSHOT_UPSERT, *request.snapshot, moment, moment, int(in_corpus))
        created = (
            await tx.execute(
                "INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (list_id, paper_id) DO NOTHING",
                list_id,
                paper.id,
                uid,
                clean_note or "",
                moment,
            )
            == 1
        )
        if created:
            # Counting after the insert, under the user's write lock, cannot race another saver.
            if await self._count_saved(tx, uid) > self.max_saved_per_user:
                raise self._saved_limit_error()
        elif clean_note is not None:
            await tx.execute(
                "UPDATE saved SET note = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                clean_note,
                uid,
                list_id,
                paper.id,
            )
        return SaveResult(created=created, list_name=display, list_created=list_created)

    async def unsave_paper(self, user_id: int, paper_id: str, list_name: str | None = None) -> int:
        uid = check_user(user_id)
        name = None if list_name is None else normalize_list_name(list_name)
        pid = clean_paper_id(paper_id)

        async def op(tx: Tx) -> int:
            if name is None:
                removed = await tx.execute("DELETE FROM saved WHERE user_id = ? AND paper_id = ?", uid, pid)
                display = None
            else:
                list_id, display = await self._require_list(tx, uid, name)
                removed = await tx.execute(
                    "DELETE FROM saved WHERE user_id = ? AND list_id = ? AND paper_id = ?", uid, list_id, pid
                )
            if removed == 0:
                raise NotSavedError(pid, display)
            await self._prune(tx, uid, [pid])
            return removed

        removed = await self._run(op, write=True, user=uid)
        log.debug("user %d unsaved %s from %d list(s)", uid, pid, removed)
        return removed

    async def move_paper(self, user_id: int, paper_id: str, from_list: str, to_list: str) -> None:
        uid = check_user(user_id)
        source, target = normalize_list_name(from_list), normalize_list_name(to_list)
        pid = clean_paper_id(paper_id)
        where = "WHERE user_id = ? AND list_id = ? AND paper_id = ?"

        async def op(tx: Tx) -> None:
            source_id, source_name = await self._require_list(tx, uid, source)
            row = await tx.fetchrow(f"SELECT note FROM saved {where}", uid, source_id, pid)
            if row is None:
                raise NotSavedError(pid, source_name)
            target_id, _, _ = await self._get_or_create_list(tx, uid, target)
            if target_id == source_id:
                return
            existing = await tx.fetchrow(f"SELECT note FROM saved {where}", uid, target_id, pid)
            if existing is None:
                await tx.execute(f"UPDATE saved SET list_id = ? {where}", target_id, uid, source_id, pid)
                return
            if not existing[0] and row[0]:
                await tx.execute(f"UPDATE saved SET note = ? {where}", row[0], uid, target_id, pid)
            await tx.execute(f"DELETE FROM saved {where}", uid, source_id, pid)

        await self._run(op, write=True, user=uid)
        log.debug("user %d moved %s", uid, pid)

    async def set_note(self, user_id: int, paper_id: str, note: str, list_name: str | None = None) -> None:
        uid = check_user(user_id)
        name = None if list_name is None else normalize_list_name(list_name)
        clean = normalize_note(note)
        pid = clean_paper_id(paper_id)

        async def op(tx: Tx) -> None:
            if name is None:
                changed = await tx.execute(
                    "UPDATE saved SET note = ? WHERE user_id = ? AND paper_id = ?", clean, uid, pid
                )
                display = None
            else:
                list_id, display = await self._require_list(tx, uid, name)
                changed = await tx.execute(
                    "UPDATE saved SET note = ? WHERE user_id = ? AND list_id = ? AND paper_id = ?",
                    clean,
                    uid,
                    list_id,
                    pid,
                )
            if changed == 0:
                raise NotSavedError(pid, display)

        await self._run(op, write=True, user=uid)
        log.debug("user %d set a note on %s (%d chars)", uid, pid, len(clean))

    # ----------------------------------------------------------------------------------- lists

    async def create_list(self, user_id: int, name: str) -> str:
        uid = check_user(user_id)
        display = normalize_list_name(name)

        async def op(tx: Tx) -> None:
            found = await self._find_list(tx, uid, display)
            if found is not None:
                raise ListExistsError(f"You already have a list named “{found[1]}”.")
            await self._insert_list(tx, uid, display)

        await self._run(op, write=True, user=uid)
        log.debug("user %d created list %r", uid, display)
        return display

    async def rename_list(self, user_id: int, old: str, new: str) -> None:
        uid = check_user(user_id)
        old_name, new_name = normalize_list_name(old), normalize_list_name(new)

        async def op(tx: Tx) -> None:
            list_id, _ = await self._require_list(tx, uid, old_name)
            clash = await self._find_list(tx, uid, new_name)
            if clash is not None and clash[0] != list_id:
                raise ListExistsError(f"You already have a list named “{clash[1]}”.")
            await tx.execute(
                "UPDATE lists SET name = ?, name_key = ? WHERE user_id = ? AND id = ?",
                new_name,
                list_key(new_name),
                uid,
                list_id,
            )

        await self._run(op, write=True, user=uid)
        log.debug("user %d renamed a list", uid)

    async def delete_list(self, user_id: int, name: str) -> int:
        uid = check_user(user_id)
        display = normalize_list_name(name)

        async def op(tx: Tx) -> int:
            list_id, _ = await self._require_list(tx, uid, display)
            ids = [
                r[0]
                for r in await tx.fetch(
                    "SELECT paper_id FROM saved WHERE user_id = ? AND list_id = ?", uid, list_id
                )
            ]
            removed = await tx.execute("DELETE FROM saved WHERE user_id = ? AND list_id = ?", uid, list_id)
            await tx.execute("DELETE FROM lists WHERE user_id = ? AND id = ?", uid, list_id)
            await self._prune(tx, uid, ids)
            return removed

        removed = await self._run(op, write=True, user=uid)
        log.debug("user %d deleted a list with %d items", uid, removed)
        return removed

    async def get_list(
        self, user_id: int, list_name: str | None = None, *, offset: int = 0, limit: int = 10
    ) -> SavedPage:
        uid = check_user(user_id)
        name = DEFAULT_LIST if list_name is None else normalize_list_name(list_name)
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be in 1..{MAX_PAGE}, not {limit}")
        offset = max(0, offset)

        async def op(tx: Tx) -> SavedPage:
            found = await self._find_list(tx, uid, name)
            if found is None:
                if list_key(name) == list_key(DEFAULT_LIST):
                    return SavedPage(items=(), total=0, offset=offset, list_name=DEFAULT_LIST)
                raise ListNotFoundError(name)
            list_id, display = found
            total = int(
                await tx.fetchval(
                    "SELECT count(*) FROM saved WHERE user_id = ? AND list_id = ?", uid, list_id
                )
            )
            rows = await tx.fetch(PAGE, uid, list_id, limit, offset)
            return SavedPage(
                items=tuple(_item(r) for r in rows), total=total, offset=offset, list_name=display
            )

        return await self._run(op, write=False)

    async def list_lists(self, user_id: int) -> list[ListInfo]:
        uid = check_user(user_id)

        async def op(tx: Tx) -> list[ListInfo]:
            return [_list_info(r) for r in await tx.fetch(_LISTS, uid)]

        return await self._run(op, write=False)

    async def saved_ids(self, user_id: int) -> set[str]:
        uid = check_user(user_id)

        async def op(tx: Tx) -> set[str]:
            return {
                r[0] for r in await tx.fetch("SELECT DISTINCT paper_id FROM saved WHERE user_id = ?", uid)
            }

        return await self._run(op, write=False)

    async def lists_holding(self, user_id: int, paper_id: str) -> list[str]:
        uid = check_user(user_id)
        pid = paper_id.strip() if isinstance(paper_id, str) else paper_id

        async def op(tx: Tx) -> list[str]:
            rows = await tx.fetch(
                "SELECT l.name FROM saved AS s JOIN lists AS l ON l.id = s.list_id "
                "WHERE s.user_id = ? AND s.paper_id = ? ORDER BY l.created_at, l.id",
                uid,
                pid,
            )
            return [r[0] for r in rows]

        return await self._run(op, write=False)

    async def stats(self) -> StoreStats:
        async def op(tx: Tx) -> StoreStats:
            async def count(sql: str) -> int:
                return int(await tx.fetchval(sql))

            return StoreStats(
                saved_items=await count("SELECT count(*) FROM saved"),
                users=await count("SELECT count(DISTINCT user_id) FROM lists"),
                lists=await count("SELECT count(*) FROM lists"),
                snapshots=await count(
                    "SELECT (SELECT count(*) FROM papers) + (SELECT count(*) FROM imported)"
                ),
                missing_from_corpus=await count(
                    "SELECT (SELECT count(*) FROM papers WHERE in_corpus = 0) + "
                    "(SELECT count(*) FROM imported WHERE NOT EXISTS "
                    "(SELECT 1 FROM papers WHERE papers.paper_id = imported.paper_id))"
                ),
            )

        return await self._run(op, write=False)

    # -------------------------------------------------------------------------- export / import

    async def export_items(
        self, user_id: int, list_name: str | None = None
    ) -> tuple[list[SavedItem], list[ListInfo]]:
        uid = check_user(user_id)
        name = None if list_name is None else normalize_list_name(list_name)

        async def op(tx: Tx) -> tuple[list[SavedItem], list[ListInfo]]:
            lists = [_list_info(r) for r in await tx.fetch(_LISTS, uid)]
            if name is None:
                rows = await tx.fetch(_ALL_ITEMS, uid)
            else:
                list_id, display = await self._require_list(tx, uid, name)
                lists = [info for info in lists if info.name == display]
                rows = await tx.fetch(LIST_ITEMS, uid, list_id)
            return [_item(r) for r in rows], lists

        return await self._run(op, write=False)

    async def import_items(
        self,
        user_id: int,
        lists: Sequence[ImportedList],
        list_name: str | None = None,
        *,
        corpus: CorpusLookup | None = None,
    ) -> ImportResult:
        uid = check_user(user_id)
        target = None if list_name is None else normalize_list_name(list_name)
        errors: list[str] = []
        # Group the items per destination list key, first spelling wins.
        groups: dict[str, tuple[str, datetime | None, list[ImportedItem]]] = {}
        for imported in lists:
            if target is not None:
                display, created_at = target, None
            else:
                try:
                    display = DEFAULT_LIST if imported.name is None else normalize_list_name(imported.name)
                except InvalidListNameError as exc:
                    errors.append(f"list “{imported.name}”: {exc} ({len(imported.items)} items skipped)")
                    continue
                created_at = utc(imported.created_at) if imported.created_at else None
            entry = groups.setdefault(list_key(display), (display, created_at, []))
            entry[2].extend(imported.items)
        moment = now()

        async def op(tx: Tx) -> tuple[int, int]:
            existing_lists = {
                r[2]: (int(r[0]), r[1])
                for r in await tx.fetch("SELECT id, name, name_key FROM lists WHERE user_id = ?", uid)
            }
            existing_pairs = {
                (int(r[0]), r[1])
                for r in await tx.fetch("SELECT list_id, paper_id FROM saved WHERE user_id = ?", uid)
            }
            new_keys = [key for key in groups if key not in existing_lists]
            if len(existing_lists) + len(new_keys) > self.max_lists_per_user:
                raise ListLimitError(
                    f"This import needs {plural(len(new_keys), 'new list')} but you can have at most "
                    f"{self.max_lists_per_user}; nothing was imported."
                )
            list_ids = {key: existing_lists[key][0] for key in groups if key in existing_lists}
            for key in new_keys:
                display, created_at, _ = groups[key]
                list_ids[key] = await self._insert_list(tx, uid, display, created_at)

            rows: list[tuple[Any, ...]] = []
            items: dict[str, ImportedItem] = {}
            skipped = 0
            for key, (_, _, group) in groups.items():
                for it in group:
                    pair = (list_ids[key], it.paper_id)
                    if pair in existing_pairs:
                        skipped += 1
                        continue
                    existing_pairs.add(pair)
                    saved_at = min(utc(it.saved_at), moment) if it.saved_at else moment
                    rows.append((list_ids[key], it.paper_id, uid, it.note, saved_at))
                    items.setdefault(it.paper_id, it)
            if await self._count_saved(tx, uid) + len(rows) > self.max_saved_per_user:
                raise SavedLimitError(
                    f"This import would bring you past {plural(self.max_saved_per_user, 'saved paper')}; "
                    "nothing was imported."
                )
            ids = sorted(items)
            await tx.lock_papers(ids)
            known = await self._known_snapshots(tx, ids)
            from_corpus: list[tuple[Any, ...]] = []
            private: list[tuple[Any, ...]] = []
            for pid in ids:
                if pid in known:
                    continue  # the corpus's snapshot is shown; the file's fields are not needed
                paper = corpus(pid) if corpus is not None else None
                if paper is not None and paper.id == pid:
                    from_corpus.append((*snapshot_values(paper), moment, moment, 1))
                else:
                    private.append(_imported_values(uid, items[pid]))
            await tx.executemany(SNAPSHOT_UPSERT, from_corpus)
            await tx.executemany(_IMPORTED_INSERT, private)
            await tx.executemany(
                "INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) VALUES (?, ?, ?, ?, ?)", rows
            )
            return len(rows), skipped

        added, skipped = await self._run(op, write=True, user=uid)
        log.info("user %d imported %d items (%d duplicates, %d errors)", uid, added, skipped, len(errors))
        return ImportResult(added=added, skipped=skipped, errors=tuple(errors))

    @staticmethod
    async def _known_snapshots(tx: Tx, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` have a shared (corpus) snapshot."""
        known: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            known |= {
                r[0]
                for r in await tx.fetch(f"SELECT paper_id FROM papers WHERE paper_id IN ({marks})", *chunk)
            }
        return known

    # ----------------------------------------------------------------------------- maintenance

    # ------------------------------------------------------------------------------------- club

    async def club_add(
        self, guild_id: int, paper: Paper, user_id: int, note: str = "", *, limit: int = MAX_CLUB_PAPERS
    ) -> bool:
        gid, uid = check_user(guild_id), check_user(user_id)
        text = normalize_note(note)
        values = snapshot_values(paper)

        async def op(tx: Tx) -> bool:
            exists = await tx.fetchval(
                "SELECT count(*) FROM club_papers WHERE guild_id = ? AND paper_id = ?", gid, values[0]
            )
            if int(exists):
                if note:
                    await tx.execute(
                        "UPDATE club_papers SET note = ? WHERE guild_id = ? AND paper_id = ?",
                        text,
                        gid,
                        values[0],
                    )
                return False
            count = int(await tx.fetchval("SELECT count(*) FROM club_papers WHERE guild_id = ?", gid))
            if count >= limit:
                raise ClubLimitError(
                    f"This server's reading list holds {plural(count, 'paper')}, the most allowed; "
                    "remove one with /club remove first."
                )
            await tx.execute(
                "INSERT INTO club_papers (guild_id, paper_id, title, authors, et_al, area, abstract, url, "
                "note, added_by, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                gid,
                *values,
                text,
                uid,
                now(),
            )
            return True

        return await self._run(op, write=True, user=gid)

    @staticmethod
    def _club_entry(row: Sequence[Any]) -> ClubEntry:
        return ClubEntry(
            paper_id=row[0],
            title=row[1],
            authors=tuple(json.loads(row[2])),
            et_al=bool(row[3]),
            area=row[4],
            abstract=row[5],
            url=row[6],
            note=row[7],
            added_by=int(row[8]),
            added_at=parse_time(row[9]),
        )

    async def club_remove(self, guild_id: int, paper_id: str) -> ClubEntry | None:
        gid = check_user(guild_id)

        async def op(tx: Tx) -> ClubEntry | None:
            row = await tx.fetchrow(
                f"SELECT {_CLUB_COLUMNS} FROM club_papers WHERE guild_id = ? AND paper_id = ?", gid, paper_id
            )
            if row is None:
                return None
            await tx.execute("DELETE FROM club_papers WHERE guild_id = ? AND paper_id = ?", gid, paper_id)
            return self._club_entry(row)

        return await self._run(op, write=True, user=gid)

    async def club_list(self, guild_id: int) -> list[ClubEntry]:
        gid = check_user(guild_id)

        async def op(tx: Tx) -> list[ClubEntry]:
            rows = await tx.fetch(
                f"SELECT {_CLUB_COLUMNS} FROM club_papers WHERE guild_id = ? ORDER BY added_at, paper_id", gid
            )
            return [self._club_entry(r) for r in rows]

        return await self._run(op, write=False)

    # ---------------------------------------------------------------------------------- watches

    @staticmethod
    def _watch(row: Sequence[Any]) -> WatchInfo:
        return WatchInfo(
            id=int(row[0]),
            user_id=int(row[1]),
            query=row[2],
            area=row[3],
            author=row[4],
            created_at=parse_time(row[5]),
        )

    async def add_watch(
        self, user_id: int, query: str, area: str = "", author: str = "", *, limit: int = MAX_WATCHES_PER_USER
    ) -> WatchInfo:
        uid = check_user(user_id)
        query, area, author = " ".join(query.split()), " ".join(area.split()), " ".join(author.split())
        if not query or len(query) > WATCH_QUERY_MAX:
            raise StoreError(f"A watch query takes 1 to {WATCH_QUERY_MAX} characters.")

        async def op(tx: Tx) -> WatchInfo:
            count = int(await tx.fetchval("SELECT count(*) FROM watches WHERE user_id = ?", uid))
            if count >= limit:
                raise WatchLimitError(
                    f"You already have {plural(count, 'watch', 'watches')}, the most allowed; "
                    "remove one with /watch remove first."
                )
            row = await tx.fetchrow(
                "INSERT INTO watches (user_id, query, area, author, created_at) VALUES (?, ?, ?, ?, ?) "
                f"RETURNING {_WATCH_COLUMNS}",
                uid,
                query,
                area,
                author,
                now(),
            )
            return self._watch(row)

        return await self._run(op, write=True, user=uid)

    async def list_watches(self, user_id: int) -> list[WatchInfo]:
        uid = check_user(user_id)

        async def op(tx: Tx) -> list[WatchInfo]:
            rows = await tx.fetch(
                f"SELECT {_WATCH_COLUMNS} FROM watches WHERE user_id = ? ORDER BY id",
                uid,
            )
            return [self._watch(r) for r in rows]

        return await self._run(op, write=False)

    async def remove_watch(self, user_id: int, watch_id: int) -> WatchInfo:
        uid = check_user(user_id)

        async def op(tx: Tx) -> WatchInfo:
            row = await tx.fetchrow(
                f"SELECT {_WATCH_COLUMNS} FROM watches WHERE user_id = ? AND id = ?",
                uid,
                int(watch_id),
            )
            if row is None:
                raise WatchNotFoundError(
                    f"You have no watch number {watch_id}; /watch list shows yours with their numbers."
                )
            await tx.execute("DELETE FROM watches WHERE user_id = ? AND id = ?", uid, int(watch_id))
            return self._watch(row)

        return await self._run(op, write=True, user=uid)

    async def active_watches(self) -> list[WatchInfo]:
        async def op(tx: Tx) -> list[WatchInfo]:
            rows = await tx.fetch(
                "SELECT w.id, w.user_id, w.query, w.area, w.author, w.created_at FROM watches w "
                "WHERE NOT EXISTS (SELECT 1 FROM watch_pauses p WHERE p.user_id = w.user_id) "
                "ORDER BY w.user_id, w.id"
            )
            return [self._watch(r) for r in rows]

        return await self._run(op, write=False)

    async def pause_watches(self, user_id: int) -> None:
        uid = check_user(user_id)

        async def op(tx: Tx) -> None:
            await tx.execute("DELETE FROM watch_pauses WHERE user_id = ?", uid)
            await tx.execute(
                "INSERT INTO watch_pauses (user_id, paused_at, told) VALUES (?, ?, 0)", uid, now()
            )

        await self._run(op, write=True, user=uid)

    async def resume_watches(self, user_id: int) -> bool:
        uid = check_user(user_id)

        async def op(tx: Tx) -> bool:
            return await tx.execute("DELETE FROM watch_pauses WHERE user_id = ?", uid) > 0

        return await self._run(op, write=True, user=uid)

    async def untold_pauses(self) -> set[int]:
        async def op(tx: Tx) -> set[int]:
            return {int(r[0]) for r in await tx.fetch("SELECT user_id FROM watch_pauses WHERE told = 0")}

        return await self._run(op, write=False)

    async def mark_pause_told(self, user_id: int) -> None:
        uid = check_user(user_id)

        async def op(tx: Tx) -> None:
            await tx.execute("UPDATE watch_pauses SET told = 1 WHERE user_id = ?", uid)

        await self._run(op, write=True, user=uid)

    async def user_footprint(self, user_id: int) -> UserFootprint:
        uid = check_user(user_id)

        async def op(tx: Tx) -> UserFootprint:
            counts = {
                table: int(await tx.fetchval(f"SELECT count(*) FROM {table} WHERE {column} = ?", uid))  # noqa: S608 - names from USER_COLUMNS
                for table, column in USER_COLUMNS.items()
            }
            return UserFootprint(
                lists=counts["lists"],
                saved_items=counts["saved"],
                imported=counts["imported"],
                watches=counts["watches"],
                watch_pauses=counts["watch_pauses"],
                club_entries=counts["club_papers"],
            )

        return await self._run(op, write=False)

    async def forget_user(self, user_id: int) -> ForgetResult:
        uid = check_user(user_id)

        async def op(tx: Tx) -> ForgetResult:
            ids = [r[0] for r in await tx.fetch("SELECT DISTINCT paper_id FROM saved WHERE user_id = ?", uid)]
            saved = await tx.execute("DELETE FROM saved WHERE user_id = ?", uid)
            lists = await tx.execute("DELETE FROM lists WHERE user_id = ?", uid)
            snapshots = await tx.execute("DELETE FROM imported WHERE user_id = ?", uid)
            snapshots += await self._prune(tx, uid, ids)
            watches = await tx.execute("DELETE FROM watches WHERE user_id = ?", uid)
            watches += await tx.execute("DELETE FROM watch_pauses WHERE user_id = ?", uid)
            # The server's reading list belongs to the server: it keeps the papers (and their notes),
            # no longer naming who added them.
            club = await tx.execute("UPDATE club_papers SET added_by = 0 WHERE added_by = ?", uid)
            return ForgetResult(
                saved_items=saved, lists=lists, snapshots=snapshots, watches=watches, club_entries=club
            )

        result = await self._run(op, write=True, user=uid)
        log.info(
            "forgot user %d: %d items, %d lists, %d snapshots, %d watch rows, %d club entries anonymised",
            uid,
            result.saved_items,
            result.lists,
            result.snapshots,
            result.watches,
            result.club_entries,
        )
        return result

    async def reconcile(self, papers: Iterable[Paper]) -> ReconcileResult:
        """Align the snapshots with a freshly (re)built corpus (see :meth:`Store.reconcile`).

        ``papers`` is read once, in a worker thread: walking a 100k-paper corpus is tens of
        milliseconds of pure Python, which must not stall the event loop. Only the snapshot rows
        (the papers someone saved) are compared and updated; a paper known only from imports that
        is in this corpus gets its corpus snapshot, which every user then sees.
        """
        result = await self._reconcile(papers)
        assert result is not None  # noqa: S101 - no ``first`` step: it always runs
        return result

    async def _reconcile(
        self, papers: Iterable[Paper], first: Callable[[Tx], Awaitable[bool]] | None = None
    ) -> ReconcileResult | None:
        """The reconcile, in one exclusive transaction that runs ``first(tx)`` before it: when that
        answers False, the snapshots are left alone and only this process's corpus ids are set
        (None is returned)."""
        moment = now()
        stale: list[Collection[str] | None] = [None]

        async def op(tx: Tx) -> _ReconcilePlan | None:
            if first is not None and not await first(tx):
                ids = await asyncio.to_thread(_corpus_id_set, papers)
                stale[0], self._corpus_ids = self._corpus_ids, ids
                return None
            await tx.execute(_PRUNE_ALL)
            await tx.execute(_PRUNE_ALL_IMPORTED)
            rows = await tx.fetch(
                "SELECT paper_id, title, authors, et_al, area, abstract, url, in_corpus FROM papers"
            )
            unknown = [
                r[0]
                for r in await tx.fetch(
                    "SELECT DISTINCT s.paper_id FROM saved AS s "
                    "WHERE NOT EXISTS (SELECT 1 FROM papers AS p WHERE p.paper_id = s.paper_id)"
                )
            ]
            plan = await asyncio.to_thread(_plan_reconcile, papers, rows, unknown, moment)
            await tx.executemany("UPDATE papers SET in_corpus = 0 WHERE paper_id = ?", plan.gone_rows)
            await tx.executemany(
                "UPDATE papers SET title = ?, authors = ?, et_al = ?, area = ?, abstract = ?, url = ?, "
                "last_seen = ?, in_corpus = 1 WHERE paper_id = ?",
                plan.changed_rows,
            )
            await tx.executemany(
                "UPDATE papers SET last_seen = ?, in_corpus = 1 WHERE paper_id = ?", plan.seen_rows
            )
            await tx.executemany(SNAPSHOT_UPSERT, plan.new_rows)
            # Set inside the transaction, so no save of this process runs between the commit and this.
            stale[0], self._corpus_ids = self._corpus_ids, plan.corpus_ids
            return plan

        plan = await self._run(op, write=True, exclusive=True)
        # The previous id set may be the last owner of 100k id strings: free them off the loop too.
        await asyncio.to_thread(_empty_piecewise, stale[0])
        if plan is None:
            return None
        result = plan.result
        log.info(
            "reconciled %d corpus papers: %d saved papers gone, %d returned, %d refreshed",
            len(plan.corpus_ids),
            len(result.gone),
            len(result.returned),
            result.refreshed,
        )
        return result

    # ------------------------------------------------------------------------- the shared index

    async def index_generation(self) -> IndexGeneration | None:
        async def op(tx: Tx) -> IndexGeneration | None:
            row = await tx.fetchrow(f"SELECT {_GENERATION_COLUMNS} FROM index_generation WHERE id = 1")
            return _generation(row) if row is not None else None

        return await self._run(op, write=False)

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
        """Record a new generation and reconcile the snapshots with ``papers``, in one transaction."""
        published: list[IndexGeneration] = []

        async def first(tx: Tx) -> bool:
            current = await tx.fetchval("SELECT generation FROM index_generation WHERE id = 1")
            generation = int(current or 0) + 1
            count, moment = len(papers), now()
            values = (generation, corpus_path, params, cache_file, fingerprint, count, built_by, moment)
            values += (generation,)  # reconciled: this very transaction reconciles it
            await tx.execute(
                f"INSERT INTO index_generation (id, {_GENERATION_COLUMNS}) "
                "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, "
                "corpus_path = excluded.corpus_path, params = excluded.params, "
                "cache_file = excluded.cache_file, fingerprint = excluded.fingerprint, "
                "papers = excluded.papers, built_by = excluded.built_by, "
                "published_at = excluded.published_at, reconciled = excluded.reconciled",
                *values,
            )
            await self._announce_generation(tx, generation)
            published.append(_generation(values))
            return True

        result = await self._reconcile(papers, first)
        assert result is not None  # noqa: S101 - ``first`` always answers True
        return published[0], result

    async def reconcile_generation(self, papers: Iterable[Paper], generation: int) -> ReconcileResult | None:
        """Reconcile with ``papers`` (the index of ``generation``) unless that generation already was
        reconciled (then only this process's corpus ids are set, and None is returned)."""

        async def first(tx: Tx) -> bool:
            done = await tx.fetchval("SELECT reconciled FROM index_generation WHERE id = 1")
            if done is not None and int(done) >= generation:
                return False
            await tx.execute(
                "UPDATE index_generation SET reconciled = ? WHERE id = 1 AND reconciled < ?",
                generation,
                generation,
            )
            return True

        return await self._reconcile(papers, first)

    async def _announce_generation(self, tx: Tx, generation: int) -> None:
        """Tell the other processes, where the backend can (PostgreSQL: NOTIFY, sent at commit)."""

    # ---------------------------------------------------------------------------------- copies

    async def dump(self) -> dict[str, list[tuple[object, ...]]]:
        async def op(tx: Tx) -> dict[str, list[tuple[object, ...]]]:
            out: dict[str, list[tuple[object, ...]]] = {}
            for name, table in TABLES.items():
                rows = await tx.fetch(f"SELECT {', '.join(table.columns)} FROM {name}")  # noqa: S608 - names from TABLES
                times = [c in TIME_COLUMNS for c in table.columns]
                key = [table.columns.index(c) for c in table.key]
                # Sorted here, not by ORDER BY: the backends' collations order text differently.
                neutral = [
                    tuple(parse_time(v) if t else v for t, v in zip(times, row, strict=True)) for row in rows
                ]
                out[name] = sorted(neutral, key=lambda r: tuple(r[i] for i in key))
            return out

        return await self._run(op, write=False)

    async def copy_from(self, source: Store) -> CopyCounts:
        """Merge ``source`` into this store, matching each row by what identifies it to people and
        keeping the row already here: lists by (user, name), saved items by (list, paper), imported
        records by (user, paper), a watch pause by user, club entries by (server, paper); a snapshot
        is replaced by a newer one (``last_seen``). A watch keeps its number, which its user types to
        remove it: a watch here with that number is the same watch when it is the same user's same
        query and filters, and a conflict otherwise."""
        data = await source.dump()

        async def op(tx: Tx) -> CopyCounts:
            # Watches first: a conflict refuses the copy before the large tables are written.
            written = {"watches": await self._copy_watches(tx, data["watches"])}
            list_map: dict[int, int] = {}
            written["lists"] = 0
            for old_id, user_id, name, name_key, created_at in data["lists"]:
                found = await tx.fetchval(
                    "SELECT id FROM lists WHERE user_id = ? AND name_key = ?", user_id, name_key
                )
                if found is None:
                    found = await tx.fetchval(
                        "INSERT INTO lists (user_id, name, name_key, created_at) VALUES (?, ?, ?, ?) "
                        "RETURNING id",
                        user_id,
                        name,
                        name_key,
                        created_at,
                    )
                    written["lists"] += 1
                list_map[int(old_id)] = int(found)
            written["papers"] = 0
            for row in data["papers"]:
                written["papers"] += await tx.execute(
                    "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, "
                    "last_seen, in_corpus) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (paper_id) DO UPDATE SET title = excluded.title, "
                    "authors = excluded.authors, et_al = excluded.et_al, area = excluded.area, "
                    "abstract = excluded.abstract, "
                    "url = excluded.url, last_seen = excluded.last_seen, in_corpus = excluded.in_corpus, "
                    "first_seen = CASE WHEN excluded.first_seen < papers.first_seen "
                    "THEN excluded.first_seen ELSE papers.first_seen END "
                    "WHERE excluded.last_seen > papers.last_seen",
                    *row,
                )
            written["saved"] = 0
            for _, list_id, paper_id, user_id, note, saved_at in data["saved"]:  # in id order: page order
                written["saved"] += await tx.execute(
                    "INSERT INTO saved (list_id, paper_id, user_id, note, saved_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (list_id, paper_id) DO NOTHING",
                    list_map[int(list_id)],
                    paper_id,
                    user_id,
                    note,
                    saved_at,
                )
            for name in ("imported", "watch_pauses", "club_papers"):
                written[name] = 0
                for row in data[name]:
                    written[name] += await tx.execute(_insert_or_keep(name), *row)
            # The copied snapshots were never reconciled with the index these processes serve: the
            # next process to start (or pick the generation up) reconciles again.
            await tx.execute("UPDATE index_generation SET reconciled = 0 WHERE id = 1")
            return CopyCounts(
                tuple(
                    CopiedTable(name, table.rows, len(data[name]), written[name])
                    for name, table in TABLES.items()
                )
            )

        return await self._run(op, write=True, exclusive=True)

    async def _copy_watches(self, tx: Tx, rows: Sequence[tuple[object, ...]]) -> int:
        """Insert the source's watches with their numbers; returns how many were written.

        Raises:
            CopyConflictError: Another watch here has one of those numbers (the caller rolls back).
        """
        written = 0
        taken: list[int] = []
        for row in rows:
            if await tx.execute(_insert_or_keep("watches"), *row):
                written += 1
                continue
            # Not written: the number is taken here (the insert, not a read before it, decides, so a
            # watch added meanwhile by a running bot is seen too). The same watch is already copied.
            here = await tx.fetchrow("SELECT user_id, query, area, author FROM watches WHERE id = ?", row[0])
            if here is None or tuple(here) != tuple(row[1:5]):
                taken.append(int(row[0]))  # type: ignore[call-overload]
        if taken:
            shown = ", ".join(str(n) for n in taken[:5])
            if len(taken) > 5:
                shown += f" and {len(taken) - 5} more"
            one = len(taken) == 1
            which = ("another watch under the number " if one else "other watches under the numbers ") + shown
            them = "it" if one else "those watches"
            raise CopyConflictError(
                f"the target already has {which}, which a copy keeps (users remove a watch by its "
                f"number); copy into a database without {them}",
                watch_ids=tuple(taken),
            )
        if written:
            await self._follow_ids(tx, "watches")
        return written

    async def _follow_ids(self, tx: Tx, table: str) -> None:
        """Rows of ``table`` were inserted with their own ``id``: the next id the database generates
        must come after them (SQLite's rowid already does; PostgreSQL's identity sequence does not)."""


#: Papers walked (or ids freed) by a reconcile thread between two ``time.sleep(0)``: a pure-Python loop
#: keeps the GIL for the whole 5 ms switch interval unless it hands it over, and the event loop waits.
_RECONCILE_CHUNK = 5000
#: Snapshots compared between two ``time.sleep(0)`` (each costs a few µs).
_SNAPSHOT_CHUNK = 500


@dataclass(frozen=True, slots=True)
class _ReconcilePlan:
    """The updates :meth:`SqlStore.reconcile` applies, computed off the event loop."""

    result: ReconcileResult
    corpus_ids: Collection[str]
    gone_rows: list[tuple[str]]
    changed_rows: list[tuple[Any, ...]]
    seen_rows: list[tuple[datetime, str]]
    new_rows: list[tuple[Any, ...]]


def _plan_reconcile(
    papers: Iterable[Paper], rows: Iterable[Sequence[Any]], unknown: Sequence[str], moment: datetime
) -> _ReconcilePlan:
    """Compare the snapshot ``rows`` with the corpus (run in a worker thread).

    ``unknown``: saved paper ids with no corpus snapshot (known only from imports). Only the papers
    that have (or need) a snapshot are made. An index's paper table is asked for those ids alone (a
    look-up each in its mapped ids) and its :meth:`~retrieval.catalogue.PaperTable.id_set` becomes
    the corpus ids; any other iterable of papers is walked once, keeping a set of its ids.
    """
    snapshots = {row[0]: row for row in rows}
    wanted = set(unknown)
    ids: Collection[str]
    saved: dict[str, Paper] = {}
    find = getattr(papers, "find", None)
    if callable(find) and callable(getattr(papers, "id_set", None)):
        table: Any = papers
        for n, pid in enumerate([*snapshots, *sorted(wanted - snapshots.keys())], 1):
            if (pos := find(pid)) is not None:
                saved[pid] = table[pos]
            if n % _SNAPSHOT_CHUNK == 0:
                time.sleep(0)  # hand the GIL to the event loop if it is waiting for it
        ids = table.id_set()
    else:
        walked: set[str] = set()
        chunk: list[str] = []
        for paper in papers:
            chunk.append(paper.id)
            if paper.id in snapshots or paper.id in wanted:
                saved[paper.id] = paper
            if len(chunk) == _RECONCILE_CHUNK:
                walked.update(chunk)
                chunk.clear()
                time.sleep(0)
        walked.update(chunk)
        ids = walked
    gone: list[str] = []
    returned: list[str] = []
    changed: list[tuple[Any, ...]] = []
    seen: list[tuple[datetime, str]] = []
    for n, (pid, row) in enumerate(snapshots.items(), 1):
        if n % _SNAPSHOT_CHUNK == 0:
            time.sleep(0)
        paper = saved.get(pid)
        if paper is None:
            if row[7]:
                gone.append(pid)
            continue
        values = snapshot_values(paper)
        if tuple(row[1:7]) != values[1:]:
            changed.append((*values[1:], moment, pid))
        else:
            seen.append((moment, pid))
        if not row[7]:
            returned.append(pid)
    new_rows = []
    for pid in sorted(wanted):
        paper = saved.get(pid)
        if paper is not None:
            new_rows.append((*snapshot_values(paper), moment, moment, 1))
            returned.append(pid)
    gone.sort()
    returned.sort()
    return _ReconcilePlan(
        result=ReconcileResult(gone=gone, returned=returned, refreshed=len(changed)),
        corpus_ids=ids,
        gone_rows=[(pid,) for pid in gone],
        changed_rows=changed,
        seen_rows=seen,
        new_rows=new_rows,
    )


def _empty_piecewise(ids: Collection[str] | None) -> None:
    """Empty a large set a chunk at a time (in a worker thread), letting the event loop in between
    (an index's IdSet holds nothing to free)."""
    while isinstance(ids, set) and ids:
        for _ in range(min(_RECONCILE_CHUNK, len(ids))):
            ids.pop()
        time.sleep(0)


_GENERATION_COLUMNS = (
    "generation, corpus_path, params, cache_file, fingerprint, papers, built_by, published_at, reconciled"
)


def _generation(row: Sequence[Any]) -> IndexGeneration:
    generation, corpus_path, params, cache_file, fingerprint, papers, built_by, published_at, reconciled = row
    return IndexGeneration(
        generation=int(generation),
        corpus_path=str(corpus_path),
        params=str(params),
        cache_file=str(cache_file),
        fingerprint=str(fingerprint),
        papers=int(papers),
        built_by=str(built_by),
        published_at=parse_time(published_at),
        reconciled=int(reconciled),
    )


def _corpus_id_set(papers: Iterable[Paper]) -> Collection[str]:
    """The ids of a corpus (in a worker thread): an index's paper table answers from its mapped ids
    (:meth:`~retrieval.catalogue.PaperTable.id_set`, no string per paper held), anything else is
    walked into a set."""
    id_set = getattr(papers, "id_set", None)
    if callable(id_set):
        return id_set()
    ids = getattr(papers, "ids", None)
    return set(ids()) if callable(ids) else {paper.id for paper in papers}


def _log_saved(request: SaveRequest, paper: Paper, result: SaveResult) -> None:
    """The debug line of every save, whichever driver wrote it."""
    log.debug(
        "user %d saved %s in list %r (created=%s)",
        request.user_id,
        paper.id,
        result.list_name,
        result.created,
    )
