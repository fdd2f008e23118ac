"""What the store tests check a database with after they hammered it."""

from __future__ import annotations

from bot.store import SQLiteStore, Store


async def integrity_check(store: Store) -> str:
    """``"ok"``, or the problems the database finds in itself: SQLite's full ``PRAGMA integrity_check``;
    on PostgreSQL, which guards its own pages, the rows the schema cannot (saved rows of no list of
    their user)."""
    if isinstance(store, SQLiteStore):
        sql = "PRAGMA integrity_check"
    else:
        sql = (
            "SELECT CASE WHEN count(*) = 0 THEN 'ok' ELSE count(*) || ' saved rows belong to no list of "
            "their user' END FROM saved AS s WHERE NOT EXISTS "
            "(SELECT 1 FROM lists AS l WHERE l.id = s.list_id AND l.user_id = s.user_id)"
        )

    async def op(tx):  # noqa: ANN001, ANN202 - a driver's transaction
        return "\n".join(str(row[0]) for row in await tx.fetch(sql))

    return await store._run(op, write=False)  # type: ignore[attr-defined]
