"""WatchService with plain arguments: add/list/remove, alerts for the papers a reindex added, pauses."""

from __future__ import annotations

import pytest

from bot.services.watch import PAUSED_NOTICE, PER_WATCH
from retrieval.errors import QueryError
from tests.bot.services.conftest import ALICE, BOB


async def test_add_checks_the_query_like_search(services):
    with pytest.raises(QueryError):
        await services.watch.add(ALICE, "-reward")
    notice = await services.watch.add(ALICE, "  reward   models ", area="Alignment")
    assert "Watching “reward models” · area: Alignment" in notice.text
    assert "**1.** “reward models” · area: Alignment" in (await services.watch.list(ALICE)).text


async def test_alerts_list_only_added_papers_at_most_per_watch(services, corpus_ids):
    watch = services.watch
    await watch.add(ALICE, "learning")
    await watch.add(BOB, "zzzqqq")
    added = corpus_ids[:30]
    (dm,) = await watch.alerts(added)
    assert dm.user_id == ALICE
    (alert,) = dm.alerts
    assert {p.id for p in alert.matches.papers} <= set(added) and len(alert.matches.papers) <= PER_WATCH
    assert alert.more == alert.matches.total - len(alert.matches.papers)
    assert await watch.alerts([]) == []


async def test_a_pause_is_told_once_and_any_watch_command_resumes(services, corpus_ids):
    watch = services.watch
    await watch.add(ALICE, "learning")
    await watch.paused(ALICE)
    assert await watch.alerts(corpus_ids) == []
    assert await watch.pending_notice(ALICE) == PAUSED_NOTICE
    assert await watch.pending_notice(ALICE) is None
    assert "on again" in (await watch.list(ALICE)).text
    assert len(await watch.alerts(corpus_ids)) == 1
