"""bot/services/admin.py: reindex plans and outcomes, and the status numbers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import discord
import pytest

from bot.errors import ReindexInProgress
from tests.bot.conftest import CORPUS
from tests.bot.services.conftest import ALICE


def test_a_plan_names_the_configured_corpus_or_the_given_path(services, tmp_path):
    admin = services.admin
    default = admin.plan_reindex()
    assert default.corpus == str(CORPUS) and default.configured
    given = admin.plan_reindex(f"  {tmp_path}/x ")
    assert given.corpus == str(tmp_path / "x") and not given.configured
    home = admin.plan_reindex("~/corpus")
    assert home.corpus == str(Path("~/corpus").expanduser())
    long = admin.plan_reindex("/" + "x" * 500)
    assert len(long.shown) <= 200 and long.shown.endswith("…")


async def test_a_second_reindex_is_refused_while_one_runs(services, monkeypatch):
    engine = services.context.engine
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow(path=None, progress=None):
        async with engine._lock:
            started.set()
            await release.wait()
        return engine.report

    monkeypatch.setattr(engine, "reindex", slow)
    running = asyncio.create_task(services.admin.reindex(services.admin.plan_reindex()))
    # Wait for the reindex to hold the engine's lock (a fixed sleep lost that race under CPU load).
    await asyncio.wait_for(started.wait(), timeout=10)
    with pytest.raises(ReindexInProgress):
        services.admin.plan_reindex()
    release.set()
    await running


async def test_a_failed_reindex_keeps_the_old_index_and_says_so(services, tmp_path):
    papers = len(services.context.engine)
    outcome = await services.admin.reindex(services.admin.plan_reindex(str(tmp_path / "missing")))
    assert outcome.report is None
    assert outcome.error.startswith("❌ Reindex failed, the previous index is still serving:")
    assert outcome.error.endswith(f"Still serving {papers} papers from `{CORPUS}`.")
    assert len(services.context.engine) == papers


async def test_a_reindex_reports_the_diff_and_the_saved_papers_that_left(services, tmp_path, corpus_ids):
    first_file = sorted(CORPUS.iterdir())[0]
    (tmp_path / first_file.name).write_bytes(first_file.read_bytes())
    text = first_file.read_text(encoding="utf-8")
    engine = services.context.engine
    leaving = next(p.id for p in engine.index.papers if p.abstract[:200] not in text)
    await services.library.save(ALICE, leaving)
    seen: list[str] = []
    outcome = await services.admin.reindex(
        services.admin.plan_reindex(str(tmp_path)), progress=lambda stage, done, total: seen.append(stage)
    )
    assert outcome.error is None and leaving in outcome.report.removed
    assert seen  # the build reported its stages
    assert outcome.reconcile.gone == [leaving]
    assert (outcome.before.missing_from_corpus, outcome.after.missing_from_corpus) == (0, 1)
    assert len(engine) == outcome.report.papers < len(corpus_ids)


async def test_a_reindex_names_removed_papers_without_keeping_the_old_index(
    services, tmp_path, corpus_ids, monkeypatch
):
    # The old index must be free to be taken apart in a thread (a 100k index freed on the loop stalls it
    # ~100 ms): the report reads the removed papers' titles from the engine, not from a held reference.
    import bot.engine

    first_file = sorted(CORPUS.iterdir())[0]
    (tmp_path / first_file.name).write_bytes(first_file.read_bytes())
    text = first_file.read_text(encoding="utf-8")
    engine = services.context.engine
    leaving = next(p for p in engine.index.papers if p.abstract[:200] not in text)
    await services.library.save(ALICE, leaving.id)
    dismantled: list[object] = []
    monkeypatch.setattr(bot.engine, "_dismantle", lambda index, step=2000: dismantled.append(1))
    outcome = await services.admin.reindex(services.admin.plan_reindex(str(tmp_path)))
    assert outcome.error is None and leaving.id in outcome.reconcile.gone
    assert dismantled == [1]
    assert outcome.titles[leaving.id] == leaving.title


async def test_the_old_index_is_taken_apart_even_when_the_build_thread_is_slow_to_let_go(
    services, tmp_path, monkeypatch
):
    # Under load the executor's thread can still hold the build's arguments (the old index among
    # them) when the reindex resumes; the old index must be freed in pieces all the same.
    import bot.engine
    from tests.bot.test_threads import SlowToForget

    asyncio.get_running_loop().set_default_executor(SlowToForget())
    first_file = sorted(CORPUS.iterdir())[0]
    (tmp_path / first_file.name).write_bytes(first_file.read_bytes())
    dismantled: list[object] = []
    monkeypatch.setattr(bot.engine, "_dismantle", lambda index, step=2000: dismantled.append(1))
    outcome = await services.admin.reindex(services.admin.plan_reindex(str(tmp_path)))
    assert outcome.error is None
    assert dismantled == [1]


async def test_stats_are_the_engines_and_the_stores(services, corpus_ids):
    await services.library.save(ALICE, corpus_ids[0])
    stats = await services.admin.stats()
    engine = services.context.engine
    assert (stats.papers, stats.areas, stats.files) == (len(engine), len(engine.areas), 2)
    assert stats.store.saved_items == 1 and stats.store.users == 1
    assert stats.corpus_path == str(CORPUS) and not stats.reindexing
    assert stats.discord_version == discord.__version__ and "MB" in stats.memory
    assert 0 <= stats.uptime < 600 and 0 <= stats.index_age < 600
