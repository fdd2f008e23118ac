"""Store.copy_from on both backends: every table of user data moves (lists, saved items, snapshots,
imports, watches with their numbers, watch pauses, the servers' reading lists); SQLite -> target ->
SQLite comes back equal; a second copy writes nothing; rows already in the target are kept; a target
that gives other watches the source's numbers is refused with nothing written. The tables copied and
the tables left behind are held to both backends' schemas."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bot import export
from bot.store import CopyConflictError, Store, open_store
from bot.store import sql as store_sql
from retrieval.models import Paper

ALICE, BOB, CAROL, DAVE = 111_111_111_111_111_111, 222_222_222_222_222_222, 3, 444_444_444_444_444_444
GUILD, OTHER_GUILD = 1_300_000_000_000_000_001, 1_300_000_000_000_000_002


def paper(i: int, **changes: object) -> Paper:
    fields: dict[str, object] = {
        "id": f"c{i:04d}",
        "title": f"Paper {i}",
        "authors": ("Ada Lovelace", "Émilie du Châtelet"),
        "et_al": i % 2 == 0,
        "area": "Theory",
        "abstract": f"Abstract {i} with $x^2$.",
        "url": f"https://example.org/{i}" if i % 3 else None,
    }
    fields.update(changes)
    return Paper(**fields)  # type: ignore[arg-type]


async def fill(store: Store) -> None:
    """A database as a running bot leaves it, with a row in every table of user data: lists (one
    deleted, so the list ids have a gap), notes, snapshots of papers that left the corpus, an import,
    watches whose numbers have a gap (one removed) and filters, a paused user told about it and one
    not yet told, two servers' reading lists with notes and an entry of a member who used /forgetme,
    and a published index generation (this deployment's own)."""
    for n in range(12):
        user, name = ((ALICE, "reading"), (BOB, "Theory 2"), (CAROL, "日本語"))[n % 3]
        await store.save_paper(user, paper(n), name, note=f"note {n}")
    await store.save_paper(ALICE, paper(1), "Theory 2")  # one paper in two lists
    await store.create_list(ALICE, "gone")
    await store.delete_list(ALICE, "gone")
    await store.create_list(BOB, "empty")
    await export.import_file(store, CAROL, json.dumps([{"id": "only-imported", "title": "Mine"}]))
    await store.add_watch(ALICE, "sparse autoencoders", "Theory")
    removed = await store.add_watch(ALICE, "reward models")
    await store.add_watch(BOB, "diffusion", author="Lovelace")
    await store.add_watch(CAROL, "日本語 の 論文")
    await store.remove_watch(ALICE, removed.id)
    await store.add_watch(ALICE, '"exact phrase" -survey')
    await store.pause_watches(BOB)
    await store.pause_watches(CAROL)
    await store.mark_pause_told(CAROL)
    await store.club_add(GUILD, paper(1), ALICE, "week 1")
    await store.club_add(GUILD, paper(11), BOB)
    await store.club_add(OTHER_GUILD, paper(3), DAVE, "a departed member's pick")
    await store.forget_user(DAVE)
    corpus = [paper(n) for n in range(10)]  # papers 10 and 11 leave the corpus
    await store.publish_index_generation(
        corpus,
        corpus_path="/srv/paperbot/corpus",
        params="plus",
        cache_file="/srv/paperbot/cache/1.pbindex",
        fingerprint="f1",
        built_by="source-host:1",
    )


def comparable(dump: dict[str, list[tuple[object, ...]]]) -> dict[str, list[tuple[object, ...]]]:
    """A full dump, with the ids of lists and saved items (seen by no one; a copy numbers them anew)
    replaced by what they stand for: a list is its user and name, a saved item names its list. Saved
    items keep their order (it breaks ties between equal ``saved_at``). Every other table is as
    dumped: a watch's number is what its user types to remove it."""
    lists = {row[0]: (row[1], row[3]) for row in dump["lists"]}
    out = dict(dump)
    out["lists"] = sorted(row[1:] for row in dump["lists"])  # type: ignore[type-var]
    out["saved"] = [(lists[row[1]], *row[2:]) for row in dump["saved"]]
    return out


async def seen(store: Store) -> tuple:
    """What people see of the copied rows: watches and their numbers, who is paused and who was
    told, each server's reading list."""
    watches = [await store.list_watches(uid) for uid in (ALICE, BOB, CAROL)]
    active = [(w.user_id, w.id) for w in await store.active_watches()]
    clubs = [await store.club_list(guild) for guild in (GUILD, OTHER_GUILD)]
    return watches, active, await store.untold_pauses(), clubs


async def test_round_trip_through_the_target_keeps_every_table(tmp_path: Path, store_target) -> None:
    """SQLite -> the target (SQLite, PostgreSQL) -> a fresh SQLite file: every row comes back."""
    async with await open_store(tmp_path / "source.db") as source:
        await fill(source)
        original = await source.dump()
        assert set(original) == set(store_sql.TABLES) and all(original.values())  # every table has rows
        async with await open_store(store_target) as target:
            counts = await target.copy_from(source)
            assert comparable(await target.dump()) == comparable(original)
            assert [(t.table, t.in_source, t.written) for t in counts.tables] == [
                (name, len(rows), len(rows)) for name, rows in original.items()
            ]
            assert counts["watches"].rows == "watches" and counts["club_papers"].written == 3
            assert await seen(target) == await seen(source)
            assert [w.id for w in await target.list_watches(ALICE)] == [1, 5]  # numbers kept, gap and all
            assert await target.untold_pauses() == {BOB}
            assert await target.index_generation() is None  # the source deployment's index stays there

            async with await open_store(tmp_path / "back.db") as back:
                counts = await back.copy_from(target)
                assert [t.written for t in counts.tables] == [len(rows) for rows in original.values()]
                assert comparable(await back.dump()) == comparable(original)
                assert await seen(back) == await seen(source)

            # New watches on the target are numbered after the copied ones (PostgreSQL's identity
            # sequence was moved past them), and the copied ones still work.
            assert (await target.add_watch(ALICE, "after the move")).id == 6
            assert (await target.remove_watch(ALICE, 5)).query == '"exact phrase" -survey'
            assert await target.resume_watches(BOB)
            assert {w.user_id for w in await target.active_watches()} == {ALICE, BOB}


async def test_a_second_copy_writes_nothing(tmp_path: Path, store_target) -> None:
    async with await open_store(tmp_path / "source.db") as source, await open_store(store_target) as target:
        await fill(source)
        await target.copy_from(source)
        before = await target.dump()
        again = await target.copy_from(source)
        assert [(t.in_source, t.written) for t in again.tables] == [(len(r), 0) for r in before.values()]
        assert await target.dump() == before


async def test_rows_already_in_the_target_are_kept_as_lists_are(tmp_path: Path, store_target) -> None:
    """A row the target already holds under the same key stays as it is (as a saved item's note
    does): the same club entry keeps the target's note and adder, the same user's pause keeps the
    target's, and the same watch (same user, number, query and filters) is not copied again. Every
    other row of the source arrives."""
    async with await open_store(tmp_path / "source.db") as source, await open_store(store_target) as target:
        await fill(source)
        await target.save_paper(ALICE, paper(0), "Reading", note="the target's note")
        await target.club_add(GUILD, paper(1), CAROL, "the target's week")
        await target.add_watch(ALICE, "sparse autoencoders", "Theory")  # number 1, as in the source
        await target.pause_watches(BOB)
        await target.mark_pause_told(BOB)

        counts = await target.copy_from(source)
        assert counts["lists"].written == counts["lists"].in_source - 1  # Alice's "reading" was there
        assert counts["saved"].written == counts["saved"].in_source - 1
        assert (counts["watches"].written, counts["club_papers"].written) == (3, 2)
        assert counts["watch_pauses"].written == 1  # Carol's; Bob's pause was there

        notes = {i.paper_id: i.note for i in (await target.get_list(ALICE, "reading")).items}
        assert notes == {paper(0).id: "the target's note", **{paper(n).id: f"note {n}" for n in (3, 6, 9)}}
        assert [(e.paper_id, e.note, e.added_by) for e in await target.club_list(GUILD)] == [
            (paper(11).id, "", BOB),  # oldest first: the target's entry was added after the source's fill
            (paper(1).id, "the target's week", CAROL),
        ]
        assert await target.untold_pauses() == set()  # Bob was told (the target's row), Carol too
        assert [(w.id, w.query) for w in await target.list_watches(ALICE)] == [
            (1, "sparse autoencoders"),
            (5, '"exact phrase" -survey'),
        ]
        dump, original = await target.dump(), await source.dump()
        for name, table in store_sql.TABLES.items():
            if name in {"lists", "saved"}:
                continue  # by id: numbered anew (checked through the lists above and below)
            key = [table.columns.index(c) for c in table.key]
            assert {tuple(r[i] for i in key) for r in original[name]} <= {
                tuple(r[i] for i in key) for r in dump[name]
            }, name
        for uid in (ALICE, BOB, CAROL):
            assert await target.saved_ids(uid) == await source.saved_ids(uid)


async def test_a_target_giving_other_watches_the_sources_numbers_is_refused(
    tmp_path: Path, store_target
) -> None:
    """A watch keeps its number (users remove one by it): when the target holds another watch under
    one of the source's numbers (another user's, or another query of the same user) the copy cannot
    keep it, and refuses: nothing at all is written. The same watch under its own number is fine."""
    async with await open_store(tmp_path / "source.db") as source, await open_store(store_target) as target:
        await fill(source)  # watches 1 (Alice), 3 (Bob), 4 (Carol), 5 (Alice)
        assert [w.id for w in await source.active_watches()] == [1, 5]
        await target.add_watch(DAVE, "someone else's watch")  # 1: another user's
        await target.add_watch(ALICE, "another query")  # 2: not in the source
        await target.add_watch(BOB, "diffusion", author="Lovelace")  # 3: the same watch as the source's
        await target.add_watch(CAROL, "日本語 の 論文", area="Theory")  # 4: same query, other filters
        await target.save_paper(BOB, paper(99), "target list")
        generation = await target.publish_index_generation(
            [paper(99)],
            corpus_path="/srv/target/corpus",
            params="plus",
            cache_file="/srv/target/cache/1.pbindex",
            fingerprint="t1",
            built_by="target-host:1",
        )
        before = await target.dump()

        with pytest.raises(CopyConflictError) as refused:
            await target.copy_from(source)
        assert refused.value.watch_ids == (1, 4)
        assert "\n" not in str(refused.value) and "under the numbers 1, 4," in str(refused.value)
        assert await target.dump() == before
        assert await target.index_generation() == generation[0]  # not even marked unreconciled


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
    async with await open_store(store_target):
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
