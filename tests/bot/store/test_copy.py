"""The tables a copy moves (bot.store.sql.TABLES) and the tables it leaves behind, held to both
backends' schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.store import Store
from bot.store import sql as store_sql


async def _live_schema(target: str | Path) -> dict[str, dict[str, str]]:
    """Every table of the migrated database at ``target``, with its columns and their types."""
    if isinstance(target, Path):
        raw = sqlite3.connect(target)
        try:
            names = [
                r[0]
                for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not r[0].startswith("sqlite_")
            ]
            return {n: {r[1]: r[2].lower() for r in raw.execute(f"PRAGMA table_info({n})")} for n in names}
        finally:
            raw.close()
    import asyncpg

    conn = await asyncpg.connect(target)
    try:
        rows = await conn.fetch(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema()"
        )
    finally:
        await conn.close()
    schema: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        schema.setdefault(table, {})[column] = kind
    return schema


async def test_every_table_is_copied_or_named_as_left_behind(store_target) -> None:
    """Every table the migrations make (on each backend) is either copied, with exactly its columns,
    or named in NOT_COPIED with the reason; the columns a dump reads as times are the columns that
    hold times. A new table or column fails here until the copy moves it or says why not."""
    async with await Store.open(store_target):
        pass
    schema = await _live_schema(store_target)
    assert set(store_sql.TABLES) <= set(schema)
    assert set(schema) - set(store_sql.TABLES) <= set(store_sql.NOT_COPIED)
    assert "index_generation" in schema and "index_generation" not in store_sql.TABLES
    for name, table in store_sql.TABLES.items():
        assert set(table.columns) == set(schema[name]), name
        assert set(table.key) <= set(table.columns), name
        if isinstance(store_target, str):  # PostgreSQL says which columns hold times
            times = {c for c, kind in schema[name].items() if kind == "timestamp with time zone"}
            assert times == set(table.columns) & store_sql.TIME_COLUMNS, name
