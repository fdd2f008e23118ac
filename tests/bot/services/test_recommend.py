"""RecommendService with plain arguments: pools, pages, notices, the reindex swap."""

from __future__ import annotations

import pytest

from bot.store import StoreError
from tests.bot.services.conftest import ALICE, BOB


async def test_a_pool_ranks_from_every_list_and_pages_from_memory(services, corpus_ids):
    library, rec = services.library, services.recommend
    await library.save(ALICE, corpus_ids[0])
    await library.save(ALICE, corpus_ids[1], "theory")
    pool = await rec.pool(ALICE)
    assert pool.saved == 2 and pool.list_name is None
    ids = [r.paper.id for r in pool.recommendations]
    assert ids and corpus_ids[0] not in ids and corpus_ids[1] not in ids
    assert len(ids) <= services.context.settings.recommend_pool
    first, second = rec.render(pool, page=0, per_page=3), rec.render(pool, page=1, per_page=3)
    assert [h.paper.id for h in first.hits] == ids[:3] and [h.paper.id for h in second.hits] == ids[3:6]
    assert first.pages == -(-len(ids) // 3) and first.title == "Recommended"
    assert set(first.reasons) == {h.paper.id for h in first.hits}
    last = rec.render(pool, page=999, per_page=3)
    assert last.page == last.pages - 1  # clamped, like /search


async def test_one_list_only_and_other_users_lists_never_count(services, corpus_ids):
    library, rec = services.library, services.recommend
    await library.save(ALICE, corpus_ids[0], "theory")
    await library.save(BOB, corpus_ids[5])
    pool = await rec.pool(ALICE, "THEORY")
    assert pool.list_name == "theory" and pool.saved == 1
    assert all(r.because == corpus_ids[0] for r in pool.recommendations)
    with pytest.raises(StoreError):
        await rec.pool(ALICE, "no such list")


async def test_notices_for_nothing_saved(services):
    page = services.recommend.render(await services.recommend.pool(ALICE))
    assert page.notice.startswith("You have no saved papers yet") and not page.hits


async def test_a_reindex_gives_a_fresh_vector_cache(services, corpus_ids):
    rec = services.recommend
    await services.library.save(ALICE, corpus_ids[0])
    await rec.pool(ALICE)
    before = rec._profile_cache()
    assert len(before) == 1
    await services.context.engine.reindex()
    assert rec._profile_cache() is not before and rec._profile_cache().index is services.context.engine.index
