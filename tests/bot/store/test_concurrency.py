"""Concurrency and durability of bot.store.Store on real files: many tasks on one store, two stores
on one file, saves racing reconciles, and a writer process killed with SIGKILL mid-stream."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.settings import PROJECT_ROOT
from bot.store import (
    DEFAULT_LIST,
    DatabaseBusyError,
    ListExistsError,
    SavedLimitError,
    Store,
    open_store,
    sql,
)
from bot.store import sqlite as store_sqlite
from retrieval.models import Paper
from tests.support.store import integrity_check

CHILD = Path(__file__).with_name("_store_child.py")


def paper(i: int, **changes: object) -> Paper:
    fields: dict[str, object] = {
        "id": f"c{i:05d}",
        "title": f"Paper {i}",
        "authors": ("Ada Lovelace",),
        "et_al": False,
        "area": "Area",
        "abstract": f"Abstract {i}.",
    }
    fields.update(changes)
    return Paper(**fields)  # type: ignore[arg-type]


async def all_rows(store: Store, user_ids: range | list[int]) -> set[tuple[int, str, str]]:
    rows: set[tuple[int, str, str]] = set()
    for uid in user_ids:
        for info in await store.list_lists(uid):
            page = await store.get_list(uid, info.name, limit=1000)
            assert page.total == info.count == len(page.items)
            rows |= {(uid, item.list_name, item.paper_id) for item in page.items}
    return rows


async def test_200_concurrent_saves_from_50_users_one_store(store_target) -> None:
    users = range(1, 51)
    expected: set[tuple[int, str, str]] = set()
    calls = []
    for n in range(200):
        uid = users[n % 50]
        list_name = DEFAULT_LIST if n % 3 else "second"
        expected.add((uid, list_name, paper(n).id))
        calls.append((uid, paper(n), None if n % 3 else "second"))
    async with await open_store(store_target) as store:
        results = await asyncio.gather(*(store.save_paper(u, p, lst, note=f"n{p.id}") for u, p, lst in calls))
        assert all(r.created for r in results)
        # The same 200 again, concurrently: idempotent, nothing duplicated.
        again = await asyncio.gather(*(store.save_paper(u, p, lst) for u, p, lst in calls))
        assert not any(r.created for r in again)
        assert await all_rows(store, users) == expected
        stats = await store.stats()
        assert (stats.saved_items, stats.users, stats.snapshots) == (200, 50, 200)
        assert await integrity_check(store) == "ok"


async def test_two_stores_on_one_file_save_concurrently(store_target) -> None:
    path = store_target
    first, second = await asyncio.gather(open_store(path), open_store(path))
    try:
        jobs = []
        for n in range(300):
            target = first if n % 2 else second
            jobs.append(target.save_paper(1 + n % 10, paper(n)))
        # Reads through both stores at the same time as the writes (WAL: readers do not block).
        jobs += [first.list_lists(1), second.saved_ids(2), first.stats()]
        await asyncio.gather(*jobs)
        expected = {(1 + n % 10, DEFAULT_LIST, paper(n).id) for n in range(300)}
        assert await all_rows(first, range(1, 11)) == expected
        assert await all_rows(second, range(1, 11)) == expected
    finally:
        await first.close()
        await second.close()


async def test_cap_holds_under_concurrency(store_target) -> None:
    async with await open_store(store_target, max_saved_per_user=10) as store:
        results = await asyncio.gather(
            *(store.save_paper(7, paper(n)) for n in range(25)), return_exceptions=True
        )
        assert sum(1 for r in results if isinstance(r, SavedLimitError)) == 15
        assert len(await store.saved_ids(7)) == 10


async def test_concurrent_create_of_one_name_creates_one_list(store_target) -> None:
    async with await open_store(store_target) as store:
        names = ["Shared", "shared", "SHARED", " shared "] * 5
        results = await asyncio.gather(*(store.create_list(3, n) for n in names), return_exceptions=True)
        assert sum(1 for r in results if isinstance(r, str)) == 1
        assert all(isinstance(r, ListExistsError) for r in results if not isinstance(r, str))
        assert len(await store.list_lists(3)) == 1


async def test_saves_interleaved_with_reconcile(store_target, monkeypatch) -> None:
    """Corpus versions drop and re-add papers while users keep saving: nothing is lost and the
    in-corpus flags end up matching the corpus of the reconcile that ran last."""
    # After its commit a reconcile frees the old corpus ids in a worker thread: make that take a
    # while now and then, so that reconciles return in another order than they committed in.
    empty, delays = sql._empty_piecewise, iter([0.03, 0, 0.02, 0, 0.01, 0] * 2)

    def slow_empty(ids):  # noqa: ANN001, ANN202
        time.sleep(next(delays, 0))
        return empty(ids)

    monkeypatch.setattr(sql, "_empty_piecewise", slow_empty)
    papers = [paper(n) for n in range(60)]
    order: list[str] = []

    class Corpus(list):
        """A corpus that notes when a reconcile reads it: that happens once, inside the reconcile's
        exclusive transaction, so ``order`` is the order the reconciles committed in. (Noting it when
        ``reconcile`` returns is not: the task of an earlier commit may resume after a later one's.)"""

        def __init__(self, name: str, items: list[Paper]) -> None:
            super().__init__(items)
            self.name = name

        def __iter__(self):  # noqa: ANN204
            order.append(self.name)
            return super().__iter__()

    corpora = {
        "full": Corpus("full", papers),
        "odd gone": Corpus("odd gone", [p for n, p in enumerate(papers) if n % 2 == 0]),
        "tail gone": Corpus("tail gone", papers[:30]),
        "retitled": Corpus("retitled", [paper(n, title=f"New {n}") for n in range(60)]),
    }

    async def reconcile(name: str) -> None:
        await store.reconcile(corpora[name])

    async with await open_store(store_target) as store:
        await store.reconcile(papers)
        assert order == []  # (a plain list: not noted)
        jobs = []
        for n, p in enumerate(papers):
            jobs.append(store.save_paper(1 + n % 5, p))
            jobs.append(store.save_paper(99, p, "everything"))
            if n % 10 == 5:
                jobs.append(
                    reconcile(["odd gone", "tail gone", "full", "retitled", "odd gone", "tail gone"][n // 10])
                )
        await asyncio.gather(*jobs)

        rows = await all_rows(store, [1, 2, 3, 4, 5, 99])
        expected = {(1 + n % 5, DEFAULT_LIST, p.id) for n, p in enumerate(papers)}
        expected |= {(99, "everything", p.id) for p in papers}
        assert rows == expected  # nothing lost

        last = {p.id for p in list.__iter__(corpora[order[-1]])}  # (read without noting it)
        page = await store.get_list(99, "everything", limit=100)
        assert {i.paper_id for i in page.items if i.in_corpus} == last
        assert (await store.stats()).missing_from_corpus == 60 - len(last)

        final = await store.reconcile(corpora["retitled"])
        page = await store.get_list(99, "everything", limit=100)
        assert all(i.in_corpus and i.title.startswith("New ") for i in page.items)
        assert sorted(final.returned) == sorted(p.id for p in papers if p.id not in last)


def test_two_processes_on_one_database_save_exactly(store_target) -> None:
    """Two processes, 50 users each (the same users), saving at once into one database: every row
    arrives once, nothing more."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    children = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(store_target), str(start), "200"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for start in (0, 1_000_000)
    ]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        assert out.splitlines()[0] == "ready" and len(out.splitlines()) == 201

    async def check() -> None:
        async with await open_store(store_target) as store:
            stats = await store.stats()
            assert (stats.saved_items, stats.snapshots) == (400, 400)
            for uid in range(1000, 1007):
                expected = {f"k{i:07d}" for start in (0, 1_000_000) for i in range(start, start + 200)
                            if 1000 + i % 7 == uid}
                assert await store.saved_ids(uid) == expected

    asyncio.run(check())


def expected_ack(i: int) -> bytes:
    """The line the child writes once paper ``i`` is saved (see _store_child.make)."""
    return f"{1000 + i % 7} k{i:07d}".encode()


def read_acks(out: bytes, first: int) -> list[tuple[int, str]]:
    """The saves a streaming child acknowledged, from all it wrote to stdout before it died.

    Every complete line after ``ready`` is an acknowledgement and must be exactly the next paper's
    (first, first + 1, ...: the child saves one at a time), so a malformed or lost line fails here
    rather than shrinking what is checked. A last line without its newline is not an acknowledgement
    (the kill cut the write; the child writes each line whole, so it should not happen), but it must
    be the start of the next paper's line."""
    *lines, tail = out.split(b"\n")
    assert lines and lines[0] == b"ready", out[:200]
    acks: list[tuple[int, str]] = []
    for i, line in enumerate(lines[1:], start=first):
        assert line == expected_ack(i), f"acknowledgement {i - first + 1}: {line!r} for {expected_ack(i)!r}"
        acks.append((1000 + i % 7, f"k{i:07d}"))
    assert expected_ack(first + len(acks)).startswith(tail), f"not the start of an acknowledgement: {tail!r}"
    return acks


def kill_mid_stream(target: Path | str, rounds: int, env: dict[str, str]) -> list[tuple[int, str]]:
    """Start the streaming child ``rounds`` times on ``target``, SIGKILL it after 150, 200, ... saves
    (at whatever it is doing then), and return every save it acknowledged, read to the last byte."""
    reported: list[tuple[int, str]] = []
    for round_number in range(rounds):  # each round resumes on the same database
        first = round_number * 100_000
        child = subprocess.Popen(
            [sys.executable, str(CHILD), str(target), str(first)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,  # raw bytes: nothing read from the pipe stays in a buffer communicate() skips
            env=env,
        )
        assert child.stdout is not None
        out = bytearray()
        try:
            while out.count(b"\n") < 1 + 150 + 50 * round_number:
                chunk = os.read(child.stdout.fileno(), 65536)
                assert chunk, f"child stopped early: {bytes(out[-200:])!r}"
                out += chunk
        finally:
            os.kill(child.pid, signal.SIGKILL)
            # What it wrote before the kill is still in the pipe: those saves were committed too.
            rest, err = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, err.decode(errors="replace")
        acks = read_acks(bytes(out + rest), first)
        assert len(acks) >= 150 + 50 * round_number
        reported += acks
    return reported


def assert_all_saved(target: Path | str, reported: list[tuple[int, str]]) -> None:
    if isinstance(target, Path):
        raw = sqlite3.connect(target)
        try:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            raw.close()

    async def check() -> None:
        async with await open_store(target) as store:
            assert await integrity_check(store) == "ok"
            by_user: dict[int, set[str]] = {}
            for uid, pid in reported:
                by_user.setdefault(uid, set()).add(pid)
            for uid, pids in by_user.items():
                missing = pids - await store.saved_ids(uid)
                assert not missing, f"user {uid}: {len(missing)} acknowledged saves lost: {sorted(missing)}"

    asyncio.run(check())


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_mid_stream_loses_no_committed_save(store_target) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    reported = kill_mid_stream(store_target, 3, env)  # killed three times, resuming on the same file
    assert len(reported) >= 600
    assert_all_saved(store_target, reported)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_the_sigkill_check_fails_when_an_acknowledged_save_is_missing(tmp_path: Path) -> None:
    """The check above can fail: a child that reports every 40th paper without saving it is caught,
    also with stdout unbuffered (where ``print`` would write a line in pieces)."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PYTHONUNBUFFERED": "1"}
    env["STORE_CHILD_FAKE_EVERY"] = "40"
    reported = kill_mid_stream(tmp_path / "s.db", 1, env)
    with pytest.raises(AssertionError, match="acknowledged saves lost"):
        assert_all_saved(tmp_path / "s.db", reported)


def test_a_line_cut_by_the_kill_is_no_acknowledgement_but_a_bad_or_lost_line_fails() -> None:
    assert read_acks(b"ready\n1000 k0000000\n1001 k0000001\n", 0) == [(1000, "k0000000"), (1001, "k0000001")]
    assert read_acks(b"ready\n1000 k0000000\n1001 k00", 0) == [(1000, "k0000000")]  # cut by the kill
    assert read_acks(b"ready\n1005 k0100000\n1006", 100_000) == [(1005, "k0100000")]
    for bad in (
        b"ready\n1000 k0000000\n1001\n",  # a complete line with one field (the old IndexError)
        b"ready\n1000 k0000000\n1002 k0000002\n",  # an acknowledgement lost between the two
        b"ready\n1000 k0000000\nTraceback",  # not the start of the next acknowledgement
        b"1000 k0000000\n",  # no ready line
    ):
        with pytest.raises(AssertionError):
            read_acks(bad, 0)


async def test_cancelled_operations_leave_the_store_usable(store_target) -> None:
    """Cancel saves at every possible await point: later calls work and no stray transaction stays."""
    async with await open_store(store_target) as store:
        for steps in range(15):
            task = asyncio.create_task(store.save_paper(5, paper(steps), note="x"))
            for _ in range(steps):
                await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            result = await store.save_paper(5, paper(1000 + steps))
            assert result.created
        assert {paper(1000 + s).id for s in range(15)} <= await store.saved_ids(5)
        assert await integrity_check(store) == "ok"


async def test_busy_timeout_waits_for_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with await open_store(path) as store:
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock...
            asyncio.get_running_loop().call_later(0.3, other.execute, "COMMIT")  # ...for 0.3 s
            assert (await store.save_paper(1, paper(1))).created
        finally:
            other.close()


async def test_busy_for_too_long_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_sqlite, "BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "s.db"
    async with await open_store(path) as store:
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(DatabaseBusyError, match="busy"):
                await store.save_paper(1, paper(1))
            other.execute("COMMIT")
        finally:
            other.close()
        assert (await store.save_paper(1, paper(1))).created  # and the store recovered


async def test_openers_racing_on_a_fresh_file_all_succeed(tmp_path: Path) -> None:
    """Several stores opening one brand-new file at once: each switch to WAL can meet another opener
    (SQLite answers that with SQLITE_BUSY without waiting); every open must still succeed."""
    for round_number in range(40):
        path = tmp_path / f"fresh{round_number}.db"
        stores = await asyncio.gather(*(open_store(path) for _ in range(4)))
        try:
            await asyncio.gather(*(s.save_paper(1, paper(n)) for n, s in enumerate(stores)))
            assert len(await stores[0].saved_ids(1)) == 4
        finally:
            await asyncio.gather(*(s.close() for s in stores))
