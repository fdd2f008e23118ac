"""Group commit (bot/store/batch.py): saves of different users made together share one transaction,
yet each caller is told its own outcome exactly as if it had saved alone; a failure of one save never
fails the others, a cancelled caller that is still waiting is never written, and a batch that loses
the server tells its callers "the database is unavailable" while the batcher carries on."""

from __future__ import annotations

import asyncio

import pytest

from bot.store import (
    DEFAULT_LIST,
    DatabaseUnavailableError,
    ListLimitError,
    SavedLimitError,
    SaveResult,
    Store,
    open_store,
)
from bot.store.batch import SaveBatcher, SaveRequest
from retrieval.models import Paper
from tests.support.store import integrity_check


def paper(i: int) -> Paper:
    return Paper(f"b{i:05d}", f"Paper {i}", ("Ada Lovelace",), False, "Area", f"Abstract {i}.")


def batches_written(store: Store) -> int | None:
    batcher = getattr(store, "_batcher", None)
    return None if batcher is None else batcher.batches


async def test_one_failing_save_in_a_batch_does_not_fail_the_others(store_target) -> None:
    async with await open_store(store_target, max_saved_per_user=3, max_lists_per_user=2) as store:
        for i in range(3):
            await store.save_paper(1, paper(i))  # user 1 is at the cap
        await store.save_paper(2, paper(10))
        await store.create_list(2, "second")  # user 2 has the most lists
        await store.save_paper(3, paper(20), note="old")
        before = batches_written(store)
        calls = [
            store.save_paper(1, paper(3)),  # the cap: fails
            store.save_paper(2, paper(11), "third"),  # a third list: fails
            store.save_paper(3, paper(20), note="new"),  # already there: the note changes
            store.save_paper(4, paper(30), "fresh"),  # a new list
            *(store.save_paper(u, paper(100 + u)) for u in range(5, 25)),
        ]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert isinstance(results[0], SavedLimitError) and "3 papers" in str(results[0])
        assert isinstance(results[1], ListLimitError)
        assert results[2] == SaveResult(created=False, list_name=DEFAULT_LIST, list_created=False)
        assert results[3] == SaveResult(created=True, list_name="fresh", list_created=True)
        assert all(r == SaveResult(True, DEFAULT_LIST, True) for r in results[4:])
        if before is not None:  # this driver group-commits: the 24 saves took a few transactions
            assert batches_written(store) - before < 12
        # Nothing of the failed saves was written: no row, no list, no snapshot.
        assert await store.saved_ids(1) == {paper(i).id for i in range(3)}
        assert [i.name for i in await store.list_lists(2)] == [DEFAULT_LIST, "second"]
        assert (await store.get_list(3, DEFAULT_LIST)).items[0].note == "new"
        for u in range(5, 25):
            assert await store.saved_ids(u) == {paper(100 + u).id}
        stats = await store.stats()
        assert (stats.saved_items, stats.snapshots) == (3 + 1 + 1 + 1 + 20, 3 + 1 + 1 + 1 + 20)


async def test_saves_of_one_user_made_together_keep_their_order(store_target) -> None:
    async with await open_store(store_target) as store:
        results = await asyncio.gather(
            store.save_paper(5, paper(1), note="first"),
            store.save_paper(5, paper(1), note="second"),
            store.save_paper(5, paper(2)),
            *(store.save_paper(u, paper(1), note=f"u{u}") for u in range(6, 16)),
        )
        assert [r.created for r in results[:3]] == [True, False, True]
        page = await store.get_list(5, DEFAULT_LIST)
        assert [(i.paper_id, i.note) for i in page.items] == [(paper(2).id, ""), (paper(1).id, "second")]
        for u in range(6, 16):
            assert (await store.get_list(u, DEFAULT_LIST)).items[0].note == f"u{u}"


async def test_a_caller_cancelled_while_waiting_is_never_written(store_target) -> None:
    async with await open_store(store_target) as store:
        await store.save_paper(1, paper(0))  # opened and warm
        first = [asyncio.create_task(store.save_paper(u, paper(u))) for u in range(1, 11)]
        for _ in range(3):  # the first saves are being written (a transaction takes several I/O waits)
            await asyncio.sleep(0)
        second = [asyncio.create_task(store.save_paper(u, paper(100 + u))) for u in range(1, 11)]
        await asyncio.sleep(0)  # queued behind their users' first saves
        for task in second[::2]:
            task.cancel()
        await asyncio.gather(*first)
        outcomes = await asyncio.gather(*second, return_exceptions=True)
        assert all(isinstance(o, asyncio.CancelledError) for o in outcomes[::2])
        assert all(isinstance(o, SaveResult) and o.created for o in outcomes[1::2])
        for u in range(1, 11):
            kept = {paper(u).id} | ({paper(0).id} if u == 1 else set())
            if u % 2 == 0:
                kept.add(paper(100 + u).id)
            assert await store.saved_ids(u) == kept
        assert await integrity_check(store) == "ok"


@pytest.mark.postgres
async def test_a_batch_that_loses_the_server_tells_each_caller_and_the_next_batch_works(
    postgres_url, pg_server
) -> None:
    if pg_server.cluster is None:
        pytest.skip("needs the throwaway cluster these tests start (an external server is not stopped)")
    import asyncpg

    async with await open_store(postgres_url) as store:
        await store.save_paper(1, paper(0))
        holder = await asyncpg.connect(postgres_url)
        try:
            await holder.execute("SELECT pg_advisory_lock(3::bigint)")  # user 3's lock: the batch waits
            saves = [asyncio.create_task(store.save_paper(u, paper(u))) for u in range(1, 8)]
            for _ in range(200):
                waiting = await holder.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND wait_event = 'advisory' AND pid <> pg_backend_pid()"
                )
                if waiting:
                    break
                await asyncio.sleep(0.02)
            assert waiting == 1  # one transaction holds the whole batch
            await asyncio.to_thread(pg_server.cluster.stop)
        finally:
            await holder.close()
        try:
            outcomes = await asyncio.gather(*saves, return_exceptions=True)
        finally:
            await asyncio.to_thread(pg_server.cluster.start)
        assert all(isinstance(o, DatabaseUnavailableError) for o in outcomes), outcomes
        assert {str(o) for o in outcomes} == {"The database is unavailable, try again in a moment."}
        assert len({id(o) for o in outcomes}) == len(outcomes)  # each caller its own error
        # The batcher carries on: the next saves (the same users) are written.
        again = await asyncio.gather(*(store.save_paper(u, paper(u)) for u in range(1, 8)))
        assert all(r.created for r in again)
        for u in range(1, 8):
            assert paper(u).id in await store.saved_ids(u)


# ------------------------------------------------------------------ the batcher without a database


def request(user_id: int, i: int) -> SaveRequest:
    return SaveRequest(user_id, paper(i), DEFAULT_LIST, DEFAULT_LIST, None, ())


async def test_a_lone_caller_saving_one_after_another_is_never_stranded() -> None:
    """Each save starts a batch at once, also right after the previous batch's worker stopped."""
    sizes: list[int] = []

    async def run(batch):
        sizes.append(len(batch))
        await asyncio.sleep(0)
        return [SaveResult(True, DEFAULT_LIST, False) for _ in batch]

    batcher = SaveBatcher(run, workers=2)
    for i in range(50):
        result = await asyncio.wait_for(batcher.save(request(1, i)), timeout=5)
        assert result.created
    assert sizes == [1] * 50


async def test_a_batch_wide_error_goes_to_each_caller_of_that_batch_only() -> None:
    calls = 0
    running = 0
    most = 0

    async def run(batch):
        nonlocal calls, running, most
        calls += 1
        number = calls
        running += 1
        most = max(most, running)
        try:
            await asyncio.sleep(0.01)
            if number == 1:
                raise ConnectionResetError("lost")
            return [SaveResult(True, DEFAULT_LIST, False) for _ in batch]
        finally:
            running -= 1

    batcher = SaveBatcher(run, workers=2, max_batch=8)
    first = [asyncio.create_task(batcher.save(request(u, u))) for u in range(8)]
    await asyncio.sleep(0)
    later = [asyncio.create_task(batcher.save(request(u, 100 + u))) for u in range(20)]
    failed = await asyncio.gather(*first, return_exceptions=True)
    assert all(isinstance(e, ConnectionResetError) for e in failed), failed
    assert len({id(e) for e in failed}) == 8
    assert all(r.created for r in await asyncio.gather(*later))
    assert most <= 2  # never more batches at once than workers
    await batcher.close()
    with pytest.raises(Exception, match="closed"):
        await batcher.save(request(1, 1))
