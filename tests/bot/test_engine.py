"""Engine: reads on the loop, reindex off the loop with an atomic swap, refusal and failure paths."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

import bot.engine as engine_module
from bot.errors import ReindexFailed, ReindexInProgress
from retrieval.errors import CorpusError
from tests.bot.conftest import CORPUS


async def test_reindex_swaps_atomically_and_old_index_keeps_serving(harness):
    engine = harness.bot.engine
    old = engine.index
    before = old.search("reinforcement learning", 5)
    calls = []
    main_thread = threading.get_ident()

    def progress(stage, done, total):
        calls.append((stage, done, total, threading.get_ident()))

    report = await engine.reindex(progress=progress)
    assert engine.index is not old
    assert report.papers == len(engine.index) == 40
    assert report.unchanged == 40 and not report.added and not report.removed
    # a search that still holds the old object finishes on it, with the same results
    assert [h.paper.id for h in old.search("reinforcement learning", 5).hits] == [
        h.paper.id for h in before.hits
    ]
    assert all(thread == main_thread for *_, thread in calls)  # progress delivered on the loop


async def test_second_reindex_is_refused_while_one_runs(harness, monkeypatch):
    engine = harness.bot.engine
    release = threading.Event()
    real_open = engine_module.open_index

    def slow_open(*args, **kwargs):
        release.wait(10)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(engine_module, "open_index", slow_open)
    first = asyncio.create_task(engine.reindex())
    await asyncio.sleep(0.05)
    assert engine.reindexing
    with pytest.raises(ReindexInProgress):
        await engine.reindex()
    # searches keep working during the build
    assert engine.search("learning", 3).hits
    release.set()
    await first
    assert not engine.reindexing


async def test_failed_reindex_keeps_the_old_index(harness, monkeypatch):
    engine = harness.bot.engine
    old = engine.index

    def broken(*args, **kwargs):
        raise CorpusError("no corpus at /nowhere")

    monkeypatch.setattr(engine_module, "open_index", broken)
    with pytest.raises(ReindexFailed, match="previous index is still serving: no corpus"):
        await engine.reindex("/nowhere")
    assert engine.index is old and not engine.reindexing


async def test_reindex_keeps_the_reconcile_result(harness, tmp_path):
    engine = harness.bot.engine
    assert engine.last_reconcile is None  # nothing reindexed yet
    leaving = engine.index.papers[-1]
    await harness.bot.store.save_paper(1, leaving, "reading")
    smaller = tmp_path / "corpus.jsonl"
    rows = [
        {"id": p.id, "title": p.title, "authors": list(p.authors), "abstract": p.abstract, "area": p.area}
        for p in engine.index.papers[:-1]
    ]
    smaller.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    await engine.reindex(smaller)
    assert engine.last_reconcile is not None
    assert engine.last_reconcile.gone == [leaving.id] and engine.last_reconcile.returned == []
    await engine.reindex(CORPUS)
    assert engine.last_reconcile.gone == [] and engine.last_reconcile.returned == [leaving.id]


async def test_reindex_reconciles_the_store(harness, monkeypatch):
    """The reconcile commits with the publication of the new index generation (one transaction)."""
    engine = harness.bot.engine
    seen = []
    real = harness.bot.store.publish_index_generation
    before = engine.share.generation

    async def spy(papers, **fields):
        seen.append(len(tuple(papers)))
        return await real(papers, **fields)

    monkeypatch.setattr(harness.bot.store, "publish_index_generation", spy)
    await engine.reindex()
    assert seen == [40]
    assert engine.share.generation == before + 1
    row = await harness.bot.store.index_generation()
    assert (row.generation, row.reconciled) == (before + 1, before + 1)
    assert row.fingerprint == engine.index.fingerprint


async def test_a_failed_reconcile_does_not_undo_or_fail_the_swap(harness, monkeypatch, caplog):
    from bot.store import DatabaseBusyError

    engine = harness.bot.engine
    old = engine.index

    async def busy(papers, **fields):
        raise DatabaseBusyError("the database is busy")

    monkeypatch.setattr(harness.bot.store, "publish_index_generation", busy)
    report = await engine.reindex()
    assert report.papers == 40
    assert engine.index is not old and engine.last_reconcile is None
    assert "reconciling saved lists after the reindex" in caplog.text


async def test_require_unknown_paper(harness):
    from retrieval.errors import UnknownPaperError

    with pytest.raises(UnknownPaperError):
        harness.bot.engine.require("nope")
    assert harness.bot.engine.areas and harness.bot.engine.areas[0][1] >= 1


@pytest.mark.skipif(
    not (engine_module.Path(__file__).resolve().parents[2] / "retrieval" / "corpus.py").exists(),
    reason="the worker process needs the real retrieval.corpus",
)
async def test_reindex_in_a_subprocess_gives_the_same_index(harness):
    engine = harness.bot.engine
    engine.subprocess_min_bytes = 0  # force the child-process path on the small corpus
    before = [h.paper.id for h in engine.search("reinforcement learning", 5).hits]
    stages = []
    report = await engine.reindex(progress=lambda stage, done, total: stages.append(stage))
    assert report.extra.get("worker") == "subprocess"
    assert report.papers == 40 and report.unchanged == 40
    assert [h.paper.id for h in engine.search("reinforcement learning", 5).hits] == before
    assert stages


async def test_subprocess_failure_keeps_the_old_index(harness, tmp_path):
    engine = harness.bot.engine
    engine.subprocess_min_bytes = 0
    old = engine.index
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.txt").write_text("not a corpus", encoding="utf-8")
    with pytest.raises(ReindexFailed):
        await engine.reindex(empty)
    assert engine.index is old


def test_dismantle_empties_big_containers_piecewise():
    class Fake:
        pass

    fake = Fake()
    fake.papers = tuple(object() for _ in range(5000))
    fake.vocab = {str(i): i for i in range(5000)}
    fake.small = [1, 2]
    engine_module._dismantle(fake, step=1000)
    assert vars(fake) == {}
