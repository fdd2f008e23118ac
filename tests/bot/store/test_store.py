"""Behaviour of bot.store.Store on real SQLite files: lists, saves, caps, reconcile, export/import,
isolation between users, migrations and the refusal of damaged or newer databases."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import export
from bot.store import (
    DEFAULT_LIST,
    LIST_NAME_MAX,
    NOTE_MAX,
    DatabaseCorruptError,
    DatabaseError,
    ImportFormatError,
    InvalidListNameError,
    ListExistsError,
    ListLimitError,
    ListNotFoundError,
    NoteTooLongError,
    NotSavedError,
    SavedLimitError,
    Store,
    StoreError,
    normalize_list_name,
    open_store,
)
from bot.store import sql as store_sql
from bot.store.records import clean_text
from bot.store.sqlite import MIGRATIONS, SCHEMA_VERSION
from retrieval.models import Paper
from tests.support.store import integrity_check

ALICE, BOB = 111_111_111_111_111_111, 222_222_222_222_222_222


def paper(i: int | str, **changes: object) -> Paper:
    pid = i if isinstance(i, str) else f"p{i:04d}"
    fields: dict[str, object] = {
        "id": pid,
        "title": f"Paper {pid}",
        "authors": ("Ada Lovelace", "Alan Turing"),
        "et_al": False,
        "area": "Theory · Learning",
        "abstract": f"Abstract of {pid} with $x^2$ math.",
        "url": f"https://example.org/{pid}",
    }
    fields.update(changes)
    return Paper(**fields)  # type: ignore[arg-type]


@pytest.fixture
async def store(store_target):
    """One store per backend (SQLite file, PostgreSQL database): the behaviour must be the same."""
    s = await open_store(store_target)
    yield s
    await s.close()


def ids(page) -> list[str]:
    return [item.paper_id for item in page.items]


def strip_exported_at(text: str) -> dict:
    doc = json.loads(text)
    doc.pop("exported_at")
    return doc


# ------------------------------------------------------------------------------------ opening


async def test_open_creates_folder_wal_schema(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "saved.db"
    async with await open_store(path) as s:
        assert s.path == path
        assert path.exists()
        assert await integrity_check(s) == "ok"
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        raw.close()


async def test_close_is_idempotent_and_blocks_later_calls(store_target) -> None:
    s = await open_store(store_target)
    await s.close()
    await s.close()
    with pytest.raises(DatabaseError, match="closed"):
        await s.get_list(ALICE)


async def test_close_waits_for_running_operations(tmp_path: Path) -> None:
    s = await open_store(tmp_path / "s.db")
    saves = [asyncio.create_task(s.save_paper(ALICE, paper(i))) for i in range(20)]
    await asyncio.sleep(0)
    await s.close()
    results = await asyncio.gather(*saves, return_exceptions=True)
    done = [r for r in results if not isinstance(r, BaseException)]
    assert all(isinstance(r, DatabaseError) for r in results if isinstance(r, BaseException))
    async with await open_store(tmp_path / "s.db") as again:
        assert (await again.get_list(ALICE, limit=100)).total == len(done)


# ------------------------------------------------------------------------------------- saving


async def test_save_is_idempotent_and_keeps_first_saved_at(store: Store) -> None:
    first = await store.save_paper(ALICE, paper(1), note="read me")
    assert first.created and first.list_created and first.list_name == DEFAULT_LIST
    page = await store.get_list(ALICE)
    again = await store.save_paper(ALICE, paper(1))
    assert not again.created and not again.list_created
    page2 = await store.get_list(ALICE)
    assert page2.total == 1
    assert page2.items[0].note == "read me"  # None keeps the note
    assert page2.items[0].saved_at == page.items[0].saved_at
    await store.save_paper(ALICE, paper(1), note="  new note  ")
    assert (await store.get_list(ALICE)).items[0].note == "new note"
    await store.save_paper(ALICE, paper(1), note="")
    assert (await store.get_list(ALICE)).items[0].note == ""


async def test_saved_item_fields_and_snapshot_refresh(store: Store) -> None:
    await store.save_paper(ALICE, paper(1, et_al=True, url=None))
    item = (await store.get_list(ALICE)).items[0]
    assert item.list_name == DEFAULT_LIST
    assert item.title == "Paper p0001"
    assert item.authors == ("Ada Lovelace", "Alan Turing")
    assert item.et_al is True and item.url is None and item.in_corpus is True
    assert item.saved_at.tzinfo is not None and item.saved_at.utcoffset().total_seconds() == 0
    await store.save_paper(ALICE, paper(1, title="Retitled"), "other")
    for list_name in (None, "other"):
        assert (await store.get_list(ALICE, list_name)).items[0].title == "Retitled"


async def test_paging_newest_first(store: Store) -> None:
    for i in range(25):
        await store.save_paper(ALICE, paper(i))
    first = await store.get_list(ALICE, offset=0, limit=10)
    assert first.total == 25 and first.offset == 0 and len(first) == 10
    assert ids(first) == [f"p{i:04d}" for i in range(24, 14, -1)]
    last = await store.get_list(ALICE, offset=20, limit=10)
    assert ids(last) == [f"p{i:04d}" for i in range(4, -1, -1)]
    beyond = await store.get_list(ALICE, offset=100)
    assert beyond.items == () and beyond.total == 25
    assert ids(await store.get_list(ALICE, offset=-5, limit=1)) == ["p0024"]
    with pytest.raises(ValueError):
        await store.get_list(ALICE, limit=0)


async def test_default_list_reads_empty_but_named_list_must_exist(store: Store) -> None:
    page = await store.get_list(ALICE)
    assert page.total == 0 and page.list_name == DEFAULT_LIST
    assert (await store.get_list(ALICE, DEFAULT_LIST.upper())).total == 0
    with pytest.raises(ListNotFoundError, match="nope"):
        await store.get_list(ALICE, "nope")
    assert await store.list_lists(ALICE) == []


async def test_paging_uses_the_index(tmp_path: Path) -> None:
    async with await open_store(tmp_path / "s.db") as store:
        pass
    raw = sqlite3.connect(store.path)
    try:
        plan = " ".join(
            str(r) for r in raw.execute("EXPLAIN QUERY PLAN " + store_sql.PAGE, (1, 1, 10, 0))
        )
    finally:
        raw.close()
    assert "saved_by_user_list_time" in plan
    assert "TEMP B-TREE" not in plan


# ---------------------------------------------------------------------------------- list names


async def test_list_names_case_insensitive_display_as_first_written(store: Store) -> None:
    assert await store.create_list(ALICE, "  Deep   Learning ") == "Deep Learning"
    result = await store.save_paper(ALICE, paper(1), "deep learning")
    assert result.list_name == "Deep Learning" and not result.list_created
    with pytest.raises(ListExistsError):
        await store.create_list(ALICE, "DEEP LEARNING")
    assert [info.name for info in await store.list_lists(ALICE)] == ["Deep Learning"]
    assert (await store.get_list(ALICE, "DEEP learning")).list_name == "Deep Learning"


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "a" * (LIST_NAME_MAX + 1),
        "semi;colon",
        "emoji 📚",
        "tab\tname",
        "new\nline",
        "---",
        "_",
        "a/b",
    ],
)
async def test_invalid_list_names(store: Store, name: str) -> None:
    with pytest.raises(InvalidListNameError) as info:
        await store.create_list(ALICE, name)
    assert isinstance(info.value, StoreError) and str(info.value)
    with pytest.raises(InvalidListNameError):
        await store.save_paper(ALICE, paper(1), name)
    assert await store.list_lists(ALICE) == []


@pytest.mark.parametrize("name", ["a", "x" * LIST_NAME_MAX, "to-read_2", "论文 阅读", "Éléments", "café"])
async def test_valid_list_names(store: Store, name: str) -> None:
    assert await store.create_list(ALICE, name) == normalize_list_name(name)


async def test_list_cap(store_target) -> None:
    async with await open_store(store_target, max_lists_per_user=3) as s:
        for name in ("a", "b", "c"):
            await s.create_list(ALICE, name)
        with pytest.raises(ListLimitError, match="3"):
            await s.create_list(ALICE, "d")
        with pytest.raises(ListLimitError):
            await s.save_paper(ALICE, paper(1))  # the default list would be a 4th
        assert await s.saved_ids(ALICE) == set()
        assert (await s.stats()).snapshots == 0  # the failed save left nothing behind
        await s.save_paper(BOB, paper(1))  # caps are per user
        await s.save_paper(ALICE, paper(1), "a")


async def test_rename_list(store: Store) -> None:
    await store.save_paper(ALICE, paper(1), "ml")
    await store.create_list(ALICE, "nlp")
    await store.rename_list(ALICE, "ml", "ML")  # only the case changes
    assert [i.name for i in await store.list_lists(ALICE)] == ["ML", "nlp"]
    with pytest.raises(ListExistsError):
        await store.rename_list(ALICE, "ml", "NLP")
    await store.rename_list(ALICE, "ML", "Machine learning")
    assert ids(await store.get_list(ALICE, "machine LEARNING")) == ["p0001"]
    with pytest.raises(ListNotFoundError):
        await store.rename_list(ALICE, "ml", "x")
    with pytest.raises(InvalidListNameError):
        await store.rename_list(ALICE, "nlp", "bad!")


async def test_delete_list_returns_items_and_prunes_snapshots(store: Store) -> None:
    for i in range(3):
        await store.save_paper(ALICE, paper(i), "tmp")
    await store.save_paper(ALICE, paper(0))
    assert await store.delete_list(ALICE, "TMP") == 3
    stats = await store.stats()
    assert stats.saved_items == 1 and stats.snapshots == 1  # p0000 still saved in the default list
    with pytest.raises(ListNotFoundError):
        await store.delete_list(ALICE, "tmp")
    assert await store.delete_list(ALICE, DEFAULT_LIST) == 1
    assert (await store.save_paper(ALICE, paper(5))).list_created  # the default list comes back


# -------------------------------------------------------------------------------- caps & notes


async def test_saved_cap(store_target) -> None:
    async with await open_store(store_target, max_saved_per_user=3) as s:
        for i in range(3):
            await s.save_paper(ALICE, paper(i))
        with pytest.raises(SavedLimitError, match="3"):
            await s.save_paper(ALICE, paper(3))
        with pytest.raises(SavedLimitError):
            await s.save_paper(ALICE, paper(0), "another list")  # a row in another list counts too
        assert not await s.list_lists(ALICE) or [i.name for i in await s.list_lists(ALICE)] == [DEFAULT_LIST]
        result = await s.save_paper(ALICE, paper(2), note="still fine")  # re-saving is not a new item
        assert not result.created
        assert (await s.stats()).snapshots == 3
        await s.unsave_paper(ALICE, "p0000")
        await s.save_paper(ALICE, paper(3))


async def test_note_limits(store: Store) -> None:
    await store.save_paper(ALICE, paper(1), note="x" * NOTE_MAX)
    with pytest.raises(NoteTooLongError, match=str(NOTE_MAX)):
        await store.save_paper(ALICE, paper(2), note="x" * (NOTE_MAX + 1))
    assert await store.saved_ids(ALICE) == {"p0001"}
    await store.save_paper(ALICE, paper(3), note="  " + "y" * NOTE_MAX + "\n")  # trimmed first
    with pytest.raises(NoteTooLongError):
        await store.set_note(ALICE, "p0001", "z" * (NOTE_MAX + 1))


async def test_set_note_one_list_or_all(store: Store) -> None:
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(1), "other")
    await store.set_note(ALICE, "p0001", "only here", "other")
    assert (await store.get_list(ALICE)).items[0].note == ""
    assert (await store.get_list(ALICE, "other")).items[0].note == "only here"
    await store.set_note(ALICE, " p0001 ", "everywhere")
    assert (await store.get_list(ALICE)).items[0].note == "everywhere"
    assert (await store.get_list(ALICE, "other")).items[0].note == "everywhere"
    with pytest.raises(NotSavedError):
        await store.set_note(ALICE, "p9999", "x")
    with pytest.raises(ListNotFoundError):
        await store.set_note(ALICE, "p0001", "x", "missing")


# ---------------------------------------------------------------------------------- unsave/move


async def test_unsave_one_list_or_all(store: Store) -> None:
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(1), "b")
    await store.save_paper(ALICE, paper(1), "c")
    assert await store.unsave_paper(ALICE, "p0001", "b") == 1
    with pytest.raises(NotSavedError, match="b"):
        await store.unsave_paper(ALICE, "p0001", "b")
    with pytest.raises(ListNotFoundError):
        await store.unsave_paper(ALICE, "p0001", "zzz")
    assert await store.unsave_paper(ALICE, "p0001") == 2
    with pytest.raises(NotSavedError):
        await store.unsave_paper(ALICE, "p0001")
    with pytest.raises(NotSavedError):
        await store.unsave_paper(ALICE, "   ")
    assert (await store.stats()).snapshots == 0  # orphan snapshot pruned


async def test_move_paper(store: Store) -> None:
    await store.save_paper(ALICE, paper(1), note="n1")
    before = (await store.get_list(ALICE)).items[0]
    await store.move_paper(ALICE, "p0001", DEFAULT_LIST, "Later")
    assert (await store.get_list(ALICE)).total == 0
    moved = (await store.get_list(ALICE, "later")).items[0]
    assert moved.note == "n1" and moved.saved_at == before.saved_at and moved.list_name == "Later"
    # Moving onto a copy that has no note: one row remains and takes the note.
    await store.save_paper(ALICE, paper(1), "final")
    await store.move_paper(ALICE, "p0001", "later", "final")
    assert [(i.name, i.count) for i in await store.list_lists(ALICE)] == [
        (DEFAULT_LIST, 0),
        ("Later", 0),
        ("final", 1),
    ]
    assert (await store.get_list(ALICE, "final")).items[0].note == "n1"
    await store.move_paper(ALICE, "p0001", "final", "FINAL")  # same list: nothing happens
    assert (await store.get_list(ALICE, "final")).total == 1
    with pytest.raises(NotSavedError):
        await store.move_paper(ALICE, "p0001", "later", "final")
    with pytest.raises(ListNotFoundError):
        await store.move_paper(ALICE, "p0001", "ghost", "final")


async def test_saved_ids_lists_and_stats(store: Store) -> None:
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(2), "b")
    await store.save_paper(ALICE, paper(1), "b")
    await store.save_paper(BOB, paper(3))
    assert await store.saved_ids(ALICE) == {"p0001", "p0002"}
    assert await store.lists_holding(ALICE, " p0001 ") == [DEFAULT_LIST, "b"]
    assert await store.lists_holding(BOB, "p0001") == []
    infos = await store.list_lists(ALICE)
    assert [(i.name, i.count) for i in infos] == [(DEFAULT_LIST, 1), ("b", 2)]
    assert infos[0].created_at <= infos[1].created_at
    stats = await store.stats()
    assert (stats.saved_items, stats.users, stats.lists, stats.snapshots, stats.missing_from_corpus) == (
        4,
        2,
        3,
        3,
        0,
    )


# ---------------------------------------------------------------------------------- reconcile


async def test_reconcile_keeps_missing_papers_and_brings_them_back(store: Store) -> None:
    corpus = [paper(i) for i in range(5)]
    await store.save_paper(ALICE, corpus[1])
    await store.save_paper(ALICE, corpus[1], "b")
    await store.save_paper(BOB, corpus[2], note="bob's")
    first = await store.reconcile(corpus)
    assert (first.gone, first.returned, first.refreshed) == ([], [], 0)

    result = await store.reconcile([corpus[0], corpus[2], corpus[3]])
    assert result.gone == ["p0001"] and result.returned == [] and result.refreshed == 0
    assert str(result) == "1 gone, 0 returned, 0 refreshed"
    for list_name in (None, "b"):
        item = (await store.get_list(ALICE, list_name)).items[0]
        assert item.paper_id == "p0001" and not item.in_corpus and item.title == "Paper p0001"
    assert (await store.stats()).missing_from_corpus == 1
    assert (await store.reconcile([corpus[0], corpus[2]])).gone == []  # already marked

    changed = paper(1, title="New title", authors=("Grace Hopper",))
    back = await store.reconcile([changed, corpus[2]])
    assert back.returned == ["p0001"] and back.refreshed == 1 and back.gone == []
    item = (await store.get_list(ALICE)).items[0]
    assert item.in_corpus and item.title == "New title" and item.authors == ("Grace Hopper",)
    assert (await store.get_list(BOB)).items[0].note == "bob's"


async def test_reconcile_tracks_first_and_last_seen(store: Store) -> None:
    await store.save_paper(ALICE, paper(1))
    await store.reconcile([paper(1)])
    await store.reconcile([])
    [row] = (await store.dump())["papers"]
    first, last, flag = row[7], row[8], row[9]
    assert first <= last and flag == 0


async def test_save_after_reconcile_respects_corpus(store: Store) -> None:
    await store.reconcile([paper(1)])
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(2))  # a stale Paper object of a paper no longer indexed
    flags = {i.paper_id: i.in_corpus for i in (await store.get_list(ALICE)).items}
    assert flags == {"p0001": True, "p0002": False}


async def test_reconcile_with_an_index_keeps_its_mapped_ids_and_follows_a_reindex(store: Store) -> None:
    """An index's paper table is reconciled by id look-ups: the store keeps the table's IdSet (no
    set of every id), and membership follows each reindex exactly (case included)."""
    from retrieval.catalogue import IdSet
    from retrieval.index import build_index

    first = build_index([paper(i) for i in range(5)])
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(2), "b")
    await store.save_paper(BOB, paper(3), note="bob's")
    result = await store.reconcile(first.papers)
    assert (result.gone, result.returned, result.refreshed) == ([], [], 0)
    held = store._corpus_ids  # type: ignore[attr-defined]
    assert isinstance(held, IdSet) and len(held) == 5
    assert "p0001" in held and "P0001" not in held and "p0009" not in held and 1 not in held

    second = build_index([paper(0), paper(2, title="Renamed"), paper(3), paper("P0001"), paper(5)])
    result = await store.reconcile(second.papers)
    assert (result.gone, result.returned, result.refreshed) == (["p0001"], [], 1)
    await store.save_paper(ALICE, paper(1))  # a stale Paper object: not in the new corpus
    await store.save_paper(ALICE, paper(5))
    flags = {i.paper_id: i.in_corpus for i in (await store.get_list(ALICE)).items}
    assert flags == {"p0001": False, "p0005": True}
    assert (await store.get_list(ALICE, "b")).items[0].title == "Renamed"
    assert (await store.get_list(BOB)).items[0].note == "bob's"

    back = await store.reconcile(first.papers)
    assert (back.gone, back.returned, back.refreshed) == (["p0005"], ["p0001"], 1)
    flags = {i.paper_id: i.in_corpus for i in (await store.get_list(ALICE)).items}
    assert flags == {"p0001": True, "p0005": False}


def test_reconcile_plan_of_an_index_equals_the_plan_of_its_papers() -> None:
    """The look-up path (an index's paper table) and the walk (any iterable of papers) plan the same
    updates: gone, returned, changed and unchanged snapshots, and import-only ids found or not."""
    import datetime as dt

    from retrieval.index import build_index

    index = build_index([paper(i) for i in range(40)] + [paper("Mixed-Case.1")])
    rows = [
        (*store_sql.snapshot_values(paper(3)), 1),  # unchanged
        (*store_sql.snapshot_values(paper(4, title="Old")), 1),  # changed
        (*store_sql.snapshot_values(paper(5)), 0),  # returned
        (*store_sql.snapshot_values(paper(77)), 1),  # gone
        (*store_sql.snapshot_values(paper(78)), 0),  # still gone
        (*store_sql.snapshot_values(paper("mixed-case.1")), 1),  # another id than Mixed-Case.1
    ]
    unknown = ["p0010", "p0099", "Mixed-Case.1"]
    moment = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    looked_up = store_sql._plan_reconcile(index.papers, rows, unknown, moment)
    walked = store_sql._plan_reconcile(list(index.papers), rows, unknown, moment)
    assert looked_up.result == walked.result
    assert looked_up.result.gone == ["mixed-case.1", "p0077"]
    assert looked_up.result.returned == ["Mixed-Case.1", "p0005", "p0010"]
    assert (looked_up.gone_rows, looked_up.changed_rows, looked_up.seen_rows, looked_up.new_rows) == (
        walked.gone_rows, walked.changed_rows, walked.seen_rows, walked.new_rows,
    )  # fmt: skip
    assert isinstance(walked.corpus_ids, set)
    assert set(looked_up.corpus_ids) == walked.corpus_ids == {p.id for p in index.papers}


async def test_reconcile_walks_the_corpus_off_the_event_loop(store: Store, monkeypatch) -> None:
    """The corpus (100k papers in production) is iterated in a worker thread, never on the loop, and
    only the snapshots of saved papers are compared with it."""
    loop_thread = threading.get_ident()
    walked: list[int] = []
    compared: list[str] = []

    class Corpus:
        def __init__(self, papers: list[Paper]) -> None:
            self.papers = papers

        def __iter__(self):
            walked.append(threading.get_ident())
            return iter(self.papers)

    real_values = store_sql.snapshot_values

    def spy(p: Paper):
        compared.append(p.id)
        return real_values(p)

    await store.save_paper(ALICE, paper(3))
    await store.save_paper(BOB, paper(700))
    monkeypatch.setattr(store_sql, "snapshot_values", spy)
    result = await store.reconcile(Corpus([paper(i) for i in range(500)]))
    assert walked and loop_thread not in walked
    assert compared == ["p0003"]  # p0700 left the corpus; the other 499 papers have no snapshot
    assert result.gone == ["p0700"] and result.returned == [] and result.refreshed == 0
    await store.save_paper(ALICE, paper(9))
    await store.save_paper(ALICE, paper(900))  # a stale Paper object: not in the reconciled corpus
    flags = {i.paper_id: i.in_corpus for i in (await store.get_list(ALICE)).items}
    assert flags == {"p0003": True, "p0009": True, "p0900": False}
    # The replaced id set is emptied in a thread (its strings freed piecewise, not on the loop).
    previous = store._corpus_ids
    await store.reconcile([paper(1)])
    assert previous == set() and store._corpus_ids == {"p0001"}


# ---------------------------------------------------------------------------------- export / import


async def test_export_formats(store: Store) -> None:
    await store.save_paper(ALICE, paper(1, authors=("Prajwal Koirala",)), note="note 50% & more")
    await store.save_paper(ALICE, paper(2), "ml")
    bib = await export.export_text(store, ALICE, "bib", DEFAULT_LIST)
    assert bib.count("@misc{") == 1 and "koirala_p0001" in bib and r"50\% \& more" in bib
    md = await export.export_text(store, ALICE, "markdown")
    assert "## reading (1)" in md and "## ml (1)" in md and "`p0002`" in md
    doc = json.loads(await export.export_text(store, ALICE, "JSON"))
    assert [lst["name"] for lst in doc["lists"]] == [DEFAULT_LIST, "ml"]
    with pytest.raises(StoreError, match="format"):
        await export.export_text(store, ALICE, "pdf")
    with pytest.raises(ListNotFoundError):
        await export.export_text(store, ALICE, "md", "missing")


async def test_json_round_trip_after_forget(store: Store) -> None:
    for i in range(12):
        await store.save_paper(
            ALICE, paper(i, et_al=i % 2 == 0), ["a", "B list", None][i % 3], note=f"note {i}"
        )
    await store.save_paper(ALICE, paper(0), "b list")  # one paper in two lists
    await store.create_list(ALICE, "empty one")
    corpus = {p.id: p for p in (paper(i) for i in range(1, 12))}
    await store.reconcile(corpus.values())  # p0000 leaves the corpus

    async def snapshot() -> tuple:
        lists = await store.list_lists(ALICE)
        pages = [await store.get_list(ALICE, info.name, limit=100) for info in lists]
        return lists, [[dataclasses.replace(i, imported=False) for i in p.items] for p in pages]

    before = await snapshot()
    exported = await export.export_text(store, ALICE, "json")
    forgot = await store.forget_user(ALICE)
    assert (forgot.saved_items, forgot.lists) == (13, 4) and forgot.total >= 17
    assert await store.list_lists(ALICE) == []
    result = await export.import_file(store, ALICE, exported, corpus=corpus.get)
    assert (result.added, result.skipped, result.errors) == (13, 0, ())
    assert await snapshot() == before
    # Only the paper that left the corpus (and so has no snapshot left) is shown from the file.
    items = (await store.export_items(ALICE))[0]
    assert {i.paper_id for i in items if i.imported} == {"p0000"}
    again = await export.import_file(store, ALICE, exported.encode("utf-8"))
    assert (again.added, again.skipped) == (0, 13)
    assert await snapshot() == before


async def test_import_into_named_list_and_bare_array(store: Store) -> None:
    await store.save_paper(BOB, paper(1, title="Corpus title"))
    data = json.dumps(
        [
            {"id": "p0001", "title": "Forged title", "note": "mine"},
            {"id": "p0002", "title": "Second", "authors": ["X Y"], "saved_at": "2020-01-01T00:00:00"},
            {"id": "p0002", "title": "Duplicate in file"},
            {"title": "no id"},
            {"id": "bad id", "title": "t"},
            {"id": "p0003", "title": "t", "note": "n" * (NOTE_MAX + 1)},
            "not an object",
        ]
    )
    result = await export.import_file(store, ALICE, data, "Imported")
    assert result.added == 2 and result.skipped == 1 and len(result.errors) == 4
    assert all(err.startswith("item ") for err in result.errors)
    page = await store.get_list(ALICE, "imported")
    assert ids(page) == ["p0001", "p0002"]
    assert page.items[0].title == "Corpus title"  # an existing snapshot is never overwritten by a file
    assert page.items[1].saved_at.year == 2020 and page.items[1].authors == ("X Y",)
    assert (await store.get_list(BOB)).items[0].title == "Corpus title"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "something else", "lists": []}', "not a paperbot export"),
        ('{"format": "paperbot.saved", "version": 99, "lists": []}', "newer paperbot"),
        ('{"format": "paperbot.saved", "version": 1}', "lists"),
        ("42", "not a paperbot export"),
        ("[" * 100_000, "JSON|deeply"),
    ],
)
async def test_import_rejects_bad_documents(store: Store, data: str, match: str) -> None:
    with pytest.raises(ImportFormatError, match=match):
        await export.import_file(store, ALICE, data)
    assert await store.list_lists(ALICE) == []


async def test_import_caps_are_all_or_nothing(store_target) -> None:
    async with await open_store(store_target, max_saved_per_user=5, max_lists_per_user=2) as s:
        items = [{"id": f"q{i}", "title": f"T{i}"} for i in range(6)]
        with pytest.raises(SavedLimitError, match="nothing was imported"):
            await export.import_file(s, ALICE, json.dumps(items))
        three_lists = {"lists": [{"name": n, "items": items[:1]} for n in ("a", "b", "c")]}
        with pytest.raises(ListLimitError):
            await export.import_file(s, ALICE, json.dumps(three_lists))
        assert await s.list_lists(ALICE) == [] and (await s.stats()).snapshots == 0
        bad_name = {"lists": [{"name": "bad/name", "items": items[:2]}, {"name": "ok", "items": items[2:4]}]}
        result = await export.import_file(s, ALICE, json.dumps(bad_name))
        assert result.added == 2 and len(result.errors) == 1 and "bad/name" in result.errors[0]
        await s.create_list(ALICE, "second")  # now at the cap of 2: one new list is one too many
        one_list = {"lists": [{"name": "third", "items": items[4:5]}]}
        with pytest.raises(ListLimitError) as info:
            await export.import_file(s, ALICE, json.dumps(one_list))
        assert "This import needs 1 new list but you can have at most 2" in str(info.value)


async def test_forget_user_counts_and_spares_others(store: Store) -> None:
    await store.save_paper(ALICE, paper(1))
    await store.save_paper(ALICE, paper(2), "x")
    await store.save_paper(BOB, paper(2))
    result = await store.forget_user(ALICE)
    assert (result.saved_items, result.lists, result.snapshots) == (2, 2, 1)
    assert await store.saved_ids(ALICE) == set()
    assert await store.saved_ids(BOB) == {"p0002"}
    assert (await store.forget_user(ALICE)).total == 0


async def test_forget_user_reaches_every_row_that_names_the_user(store: Store) -> None:
    """/forgetme (issue 30 item 1): every table that can name a user is reached: lists, saved papers,
    imported fields, watches, the watch pause, and the server reading lists' "added by" (kept for the
    server, no longer naming the user). Bob's rows are untouched."""
    guild = 1300000000000000001
    await store.save_paper(ALICE, paper(1), note="mine")
    await store.save_paper(BOB, paper(1))
    gone = json.dumps([{"id": "gone1", "title": "Not in the corpus", "abstract": "An imported paper."}])
    assert (await export.import_file(store, ALICE, gone, "imports")).added == 1
    await store.add_watch(ALICE, "diffusion")
    await store.pause_watches(ALICE)
    await store.add_watch(BOB, "theory")
    await store.club_add(guild, paper(2), ALICE, "week 1")
    await store.club_add(guild, paper(3), BOB)

    before = await store.user_footprint(ALICE)
    assert (before.lists, before.saved_items, before.imported) == (2, 2, 1)
    assert (before.watches, before.watch_pauses, before.club_entries) == (1, 1, 1)
    assert before.total == 8

    result = await store.forget_user(ALICE)
    assert (result.saved_items, result.lists, result.watches, result.club_entries) == (2, 2, 2, 1)
    rows = await store.dump()
    assert not [(table, row) for table, found in rows.items() for row in found if ALICE in row]
    assert (await store.user_footprint(ALICE)).total == 0
    assert [(e.paper_id, e.added_by, e.note) for e in await store.club_list(guild)] == [
        (paper(2).id, 0, "week 1"),  # the server keeps its list; the paper no longer names Alice
        (paper(3).id, BOB, ""),
    ]
    assert await store.saved_ids(BOB) == {"p0001"}
    assert [w.query for w in await store.list_watches(BOB)] == ["theory"]
    # Every column that names a user is one forget_user reaches (a new one must be added there).
    people = {"user_id", "added_by"}
    named = {(t, c) for t, table in store_sql.TABLES.items() for c in table.columns if c in people}
    assert named == set(store_sql.USER_COLUMNS.items())


async def test_forget_user_who_only_added_to_a_club_list(store: Store) -> None:
    """A member with no list and no watch who added a paper to a server's reading list still has a
    row that names them: /forgetme must find it."""
    guild = 1300000000000000001
    await store.club_add(guild, paper(1), ALICE)
    footprint = await store.user_footprint(ALICE)
    assert (footprint.total, footprint.club_entries, footprint.lists) == (1, 1, 0)
    result = await store.forget_user(ALICE)
    assert (result.total, result.club_entries) == (0, 1)  # nothing deleted, one entry anonymised
    assert [e.added_by for e in await store.club_list(guild)] == [0]
    assert (await store.user_footprint(ALICE)).total == 0


async def test_users_are_isolated(store: Store) -> None:
    await store.save_paper(ALICE, paper(1), note="alice private")
    await store.save_paper(ALICE, paper(2), "Secret")
    await store.create_list(ALICE, "empty")
    before = strip_exported_at(await export.export_text(store, ALICE, "json"))
    lists_before = await store.list_lists(ALICE)

    # Bob sends Alice's list names and paper ids to every method.
    assert (await store.get_list(BOB)).total == 0
    for call in (
        store.get_list(BOB, "Secret"),
        store.unsave_paper(BOB, "p0001"),
        store.unsave_paper(BOB, "p0002", "Secret"),
        store.set_note(BOB, "p0001", "pwned"),
        store.set_note(BOB, "p0002", "pwned", "secret"),
        store.move_paper(BOB, "p0002", "Secret", "mine"),
        store.move_paper(BOB, "p0001", DEFAULT_LIST, "mine"),
        store.rename_list(BOB, "Secret", "mine"),
        store.delete_list(BOB, "Secret"),
        store.delete_list(BOB, "empty"),
        export.export_text(store, BOB, "json", "Secret"),
    ):
        with pytest.raises((NotSavedError, ListNotFoundError)):
            await call
    assert await store.saved_ids(BOB) == set()
    assert json.loads(await export.export_text(store, BOB, "json"))["lists"] == []
    assert "p0001" not in await export.export_text(store, BOB, "md")
    assert await store.list_lists(BOB) == []
    # Bob's own lists with Alice's names are his own rows; his notes and deletions stay his.
    await store.create_list(BOB, "secret")
    await store.save_paper(BOB, paper(2), "secret", note="bob note")
    await store.set_note(BOB, "p0002", "changed")
    await export.import_file(store, BOB, json.dumps(before))
    await store.delete_list(BOB, "secret")
    assert (await store.forget_user(BOB)).saved_items >= 1

    assert strip_exported_at(await export.export_text(store, ALICE, "json")) == before
    assert await store.list_lists(ALICE) == lists_before


# ---------------------------------------------------------------------------------- migrations

# Rows as a paperbot at schema version N wrote them (keys: N). Every earlier version needs an entry,
# so adding a migration forces adding a fixture for the version it upgrades from.
LEGACY_DATA: dict[int, list[str]] = {
    0: [],
    1: [
        "INSERT INTO lists (id, user_id, name, name_key, created_at) "
        "VALUES (7, 42, 'To Read', 'to read', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen) "
        "VALUES ('old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO saved (list_id, paper_id, user_id, saved_at) "
        "VALUES (7, 'old1', 42, '2024-01-02T00:00:00.000000+00:00')",
    ],
    # v2: notes and in-corpus flags; saved rows reference a shared snapshot (v3 drops that key).
    2: [
        "INSERT INTO lists (id, user_id, name, name_key, created_at) "
        "VALUES (7, 42, 'To Read', 'to read', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, "
        "in_corpus) VALUES ('old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00', 1)",
        "INSERT INTO saved (list_id, paper_id, user_id, saved_at, note) "
        "VALUES (7, 'old1', 42, '2024-01-02T00:00:00.000000+00:00', '')",
    ],
    # v3: private imports, saved rows with their own id (v4 adds watches).
    3: [
        "INSERT INTO lists (id, user_id, name, name_key, created_at) "
        "VALUES (7, 42, 'To Read', 'to read', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, "
        "in_corpus) VALUES ('old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00', 1)",
        "INSERT INTO saved (id, list_id, paper_id, user_id, saved_at, note) "
        "VALUES (1, 7, 'old1', 42, '2024-01-02T00:00:00.000000+00:00', '')",
    ],
    # v4: watches (v5 adds the servers' reading lists).
    4: [
        "INSERT INTO lists (id, user_id, name, name_key, created_at) "
        "VALUES (7, 42, 'To Read', 'to read', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, "
        "in_corpus) VALUES ('old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00', 1)",
        "INSERT INTO saved (id, list_id, paper_id, user_id, saved_at, note) "
        "VALUES (1, 7, 'old1', 42, '2024-01-02T00:00:00.000000+00:00', '')",
        "INSERT INTO watches (user_id, query, area, author, created_at) "
        "VALUES (42, 'reward models', '', '', '2024-01-03T00:00:00.000000+00:00')",
    ],
    # v5: the servers' reading lists (v6 adds the shared index generation).
    5: [
        "INSERT INTO lists (id, user_id, name, name_key, created_at) "
        "VALUES (7, 42, 'To Read', 'to read', '2024-01-01T00:00:00.000000+00:00')",
        "INSERT INTO papers (paper_id, title, authors, et_al, area, abstract, url, first_seen, last_seen, "
        "in_corpus) VALUES ('old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00', 1)",
        "INSERT INTO saved (id, list_id, paper_id, user_id, saved_at, note) "
        "VALUES (1, 7, 'old1', 42, '2024-01-02T00:00:00.000000+00:00', '')",
        "INSERT INTO club_papers (guild_id, paper_id, title, authors, et_al, area, abstract, url, note, "
        "added_by, added_at) VALUES (9, 'old1', 'Old paper', '[\"A B\"]', 1, 'Area', 'Abstract', NULL, "
        "'', 42, '2024-01-04T00:00:00.000000+00:00')",
    ],
}


def build_legacy(path: Path, version: int) -> None:
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        for step in MIGRATIONS[:version]:
            for statement in step.statements:
                raw.execute(statement)
        raw.execute(f"PRAGMA user_version = {version}")
        for statement in LEGACY_DATA[version]:
            raw.execute(statement)
    finally:
        raw.close()


def test_every_earlier_version_has_a_fixture() -> None:
    assert set(LEGACY_DATA) == set(range(SCHEMA_VERSION))


async def test_open_zero_byte_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    async with await open_store(path) as s:
        await s.save_paper(ALICE, paper(1))
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
async def test_migrate_from_earlier_version(tmp_path: Path, version: int) -> None:
    path = tmp_path / f"v{version}.db"
    build_legacy(path, version)
    async with await open_store(path) as s:
        assert await integrity_check(s) == "ok"
        if LEGACY_DATA[version]:
            page = await s.get_list(42, "to read")
            assert page.list_name == "To Read" and page.total == 1
            item = page.items[0]
            assert (item.paper_id, item.title, item.authors, item.et_al) == (
                "old1",
                "Old paper",
                ("A B",),
                True,
            )
            assert item.note == "" and item.in_corpus
            await s.set_note(42, "old1", "annotated after the upgrade")
        await s.save_paper(42, paper(1), "to read")
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        raw.close()
    async with await open_store(path) as s:  # reopening an up-to-date file changes nothing
        assert (await s.get_list(42, "To Read")).total == (2 if LEGACY_DATA[version] else 1)


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    async with await open_store(path) as s:
        await s.save_paper(ALICE, paper(1))
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    before = path.read_bytes()
    with pytest.raises(
        DatabaseError, match=rf"newer paperbot \(schema {SCHEMA_VERSION + 1} > {SCHEMA_VERSION}\)"
    ):
        await open_store(path)
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------------- damaged files


async def test_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    before = path.read_bytes()
    with pytest.raises(DatabaseCorruptError) as info:
        await open_store(path)
    assert str(path) in str(info.value) and info.value.path == path
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


async def test_corrupted_pages_are_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "saved.db"
    async with await open_store(path) as s:
        for i in range(300):
            await s.save_paper(ALICE + i % 7, paper(i, abstract="long abstract " * 40), note=f"n{i}")
    data = bytearray(path.read_bytes())
    assert len(data) > 20 * 4096
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 3 * 4096] = bytes((i * 37 + 11) % 256 for i in range(3 * 4096))
    path.write_bytes(bytes(data))
    with pytest.raises(DatabaseCorruptError) as info:
        await open_store(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == bytes(data)


async def test_garbage_after_a_valid_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "half.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    before = path.read_bytes()
    with pytest.raises(DatabaseCorruptError):
        await open_store(path)
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------------- property tests


def test_arbitrary_list_names_and_notes(tmp_path: Path) -> None:
    """Any text is either accepted (and then behaves) or refused with the documented StoreError."""
    loop = asyncio.new_event_loop()
    s = loop.run_until_complete(open_store(tmp_path / "prop.db", max_lists_per_user=10_000))
    counter = iter(range(1, 10**9))
    names = st.one_of(
        st.text(max_size=40),
        st.text(alphabet=st.sampled_from("aB1 -_é论\t!"), max_size=40),
        st.from_regex(r"[A-Za-z0-9 _-]{0,40}", fullmatch=True),
    )
    notes = st.one_of(
        st.text(max_size=NOTE_MAX + 20),
        st.integers(NOTE_MAX - 3, NOTE_MAX + 3).map(lambda n: " " + "n" * n + "\n"),
    )

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(name=names, note=notes)
    def check(name: str, note: str) -> None:
        uid = next(counter)

        async def body() -> None:
            try:
                display = await s.create_list(uid, name)
            except InvalidListNameError as exc:
                assert str(exc)
                assert await s.list_lists(uid) == []
            else:
                assert 1 <= len(display) <= LIST_NAME_MAX and display == display.strip()
                assert [i.name for i in await s.list_lists(uid)] == [display]
                assert (await s.get_list(uid, name)).list_name == display
                with pytest.raises(ListExistsError):
                    await s.create_list(uid, name)
                if name.isascii():
                    with pytest.raises(ListExistsError):
                        await s.create_list(uid, name.swapcase())
            try:
                await s.save_paper(uid, paper(1), note=note)
            except NoteTooLongError as exc:
                assert len(clean_text(note).strip()) > NOTE_MAX and str(exc)
                assert await s.saved_ids(uid) == set()
            else:
                # (NUL characters are dropped: PostgreSQL text cannot hold them.)
                assert len(clean_text(note).strip()) <= NOTE_MAX
                assert (await s.get_list(uid)).items[0].note == clean_text(note).strip()

        loop.run_until_complete(body())

    try:
        check()
    finally:
        loop.run_until_complete(s.close())
        loop.close()


# ------------------------------------------------------------------------- imports stay private

CRAFTED = {
    "id": "p0042",
    "title": "FAKE — click [here](https://evil.example)",
    "authors": ["**Mallory**"],
    "area": "||spoiler||",
    "abstract": "# Heading\n> quote [x](https://evil.example)",
    "url": "https://evil.example",
}


async def test_one_users_import_never_changes_what_another_user_sees(store: Store) -> None:
    """Alice imports a crafted record for a corpus paper nobody saved; Bob then imports a legitimate
    file holding the same paper. Bob sees the corpus's paper (or his own file), never Alice's fields."""
    corpus = {p.id: p for p in (paper(i) for i in range(50))}
    await store.reconcile(corpus.values())
    await export.import_file(store, ALICE, json.dumps([CRAFTED]))
    legit = {"id": "p0042", "title": "Paper p0042", "url": "https://example.org/p0042"}
    await export.import_file(store, BOB, json.dumps([legit]), corpus=corpus.get)
    [bob_item] = (await store.export_items(BOB))[0]
    assert (bob_item.title, bob_item.url, bob_item.imported) == (
        "Paper p0042", "https://example.org/p0042", False
    )
    # Once the corpus snapshot exists, it is what every importer sees, whatever their file says.
    await store.forget_user(BOB)
    await export.import_file(store, BOB, json.dumps([{**legit, "title": "Bob's title"}]))
    [bob_item] = (await store.export_items(BOB))[0]
    assert bob_item.title == "Paper p0042" and not bob_item.imported
    # A paper that left the corpus for good: still Alice's fields never reach Bob.
    await store.reconcile([])
    await store.forget_user(BOB)
    await export.import_file(store, BOB, json.dumps([legit]))
    [bob_item] = (await store.export_items(BOB))[0]
    assert "FAKE" not in bob_item.title and "evil" not in (bob_item.url or "")
    # And a corpus save by Bob (which refreshes the shared snapshot) is unaffected by Alice too.
    await store.save_paper(BOB, corpus["p0042"], "other")
    assert all("FAKE" not in i.title for i in (await store.export_items(BOB))[0])


async def test_imported_text_is_escaped_and_urls_must_be_http(store: Store) -> None:
    records = [
        CRAFTED,
        {"id": "x1", "title": "Plain", "url": "javascript:alert(1)"},
        {"id": "x2", "title": "Bare", "url": "evil.example/path"},
        {"id": "x3", "title": "Fine", "url": "http://example.org/a"},
    ]
    result = await export.import_file(store, ALICE, json.dumps(records))
    assert result.added == 4
    assert sum("not an http(s) link" in e for e in result.errors) == 2
    items = {i.paper_id: i for i in (await store.export_items(ALICE))[0]}
    crafted = items["p0042"]
    assert crafted.title == "FAKE — click \\[here\\](https://evil.example)"
    assert crafted.authors == ("\\*\\*Mallory\\*\\*",) and crafted.area == "\\|\\|spoiler\\|\\|"
    assert crafted.abstract.startswith("\\# Heading\n\\> quote \\[x\\]")
    assert crafted.imported and not crafted.in_corpus
    assert (items["x1"].url, items["x2"].url, items["x3"].url) == (None, None, "http://example.org/a")
    # Escaping is idempotent: exporting and importing again does not pile up backslashes.
    exported = await export.export_text(store, ALICE, "json")
    await store.forget_user(ALICE)
    await export.import_file(store, ALICE, exported)
    again = {i.paper_id: i for i in (await store.export_items(ALICE))[0]}
    assert again["p0042"].title == crafted.title and again["p0042"].abstract == crafted.abstract


# -- watches ----------------------------------------------------------------------------------------


async def test_watches_add_list_remove_cap_pause_and_forget(store_target) -> None:
    from bot.store import WatchLimitError, WatchNotFoundError

    async with await open_store(store_target) as s:
        first = await s.add_watch(ALICE, "  sparse   autoencoders ", "Theory", "", limit=2)
        assert first.query == "sparse autoencoders" and first.area == "Theory" and first.user_id == ALICE
        await s.add_watch(ALICE, "reward models", limit=2)
        with pytest.raises(WatchLimitError, match="2 watches, the most allowed"):
            await s.add_watch(ALICE, "third", limit=2)
        other = await s.add_watch(BOB, "diffusion")
        assert [w.query for w in await s.list_watches(ALICE)] == ["sparse autoencoders", "reward models"]
        with pytest.raises(WatchNotFoundError):
            await s.remove_watch(ALICE, other.id)  # Bob's: not Alice's to remove
        assert (await s.remove_watch(ALICE, first.id)).query == "sparse autoencoders"
        await s.pause_watches(BOB)
        assert {w.user_id for w in await s.active_watches()} == {ALICE}
        assert await s.untold_pauses() == {BOB}
        await s.mark_pause_told(BOB)
        assert await s.untold_pauses() == set()
        assert await s.resume_watches(BOB) and not await s.resume_watches(BOB)
        assert {w.user_id for w in await s.active_watches()} == {ALICE, BOB}
        await s.pause_watches(ALICE)
        forgotten = await s.forget_user(ALICE)
        assert forgotten.watches == 2  # one watch and the pause
        assert await s.list_watches(ALICE) == [] and await s.untold_pauses() == set()
        assert [w.query for w in await s.list_watches(BOB)] == ["diffusion"]


async def test_club_add_note_remove_cap_and_forget(store_target) -> None:
    from bot.store import ClubLimitError

    guild, other_guild = 1300000000000000001, 1300000000000000002
    async with await open_store(store_target) as s:
        assert await s.club_add(guild, paper(1), ALICE, "week 1", limit=2)
        assert not await s.club_add(guild, paper(1), BOB, "week 2", limit=2)  # already there: note only
        assert await s.club_add(guild, paper(2), BOB, limit=2)
        with pytest.raises(ClubLimitError, match="holds 2 papers, the most allowed"):
            await s.club_add(guild, paper(3), ALICE, limit=2)
        assert await s.club_add(other_guild, paper(3), ALICE)
        entries = await s.club_list(guild)
        assert [(e.paper_id, e.note, e.added_by) for e in entries] == [
            (paper(1).id, "week 2", ALICE),
            (paper(2).id, "", BOB),
        ]
        assert entries[0].title == paper(1).title and entries[0].added_at.tzinfo is not None
        assert (await s.club_remove(guild, paper(2).id)).added_by == BOB
        assert await s.club_remove(guild, paper(2).id) is None
        await s.forget_user(ALICE)
        assert [e.added_by for e in await s.club_list(guild)] == [0]  # kept, anonymous
        assert [e.paper_id for e in await s.club_list(other_guild)] == [paper(3).id]
