"""bot/services/search.py: result pages, the no-hit explanation, autocomplete data."""

from __future__ import annotations

import pytest

from retrieval.errors import QueryError
from tests.bot.services.conftest import ALICE


async def test_a_page_is_the_engines_slice_with_ranks_and_page_count(services):
    engine = services.context.engine
    full = engine.search("learning", 100)
    page = await services.search.page(ALICE, "learning", page=1, per_page=3)
    assert [h.paper.id for h in page.hits] == [h.paper.id for h in full.hits[3:6]]
    assert [h.rank for h in page.hits] == [4, 5, 6]
    assert (page.total, page.page, page.pages) == (full.total, 1, -(-full.total // 3))
    assert page.title == "Search" and page.subject == "learning" and page.notice is None


async def test_the_default_page_size_comes_from_the_settings(services):
    page = await services.search.page(ALICE, "learning")
    assert len(page.hits) == services.context.settings.page_size == 5


async def test_a_page_past_the_end_is_the_last_page(services):
    first = await services.search.page(ALICE, "learning", per_page=4)
    late = await services.search.page(ALICE, "learning", page=first.pages + 5, per_page=4)
    assert late.page == first.pages - 1 and late.hits
    assert late.hits[-1].rank == first.total


async def test_saved_papers_are_marked_for_their_owner_only(services):
    page = await services.search.page(ALICE, "reward models", per_page=3)
    chosen = page.hits[1].paper.id
    await services.library.quick_save(ALICE, chosen)
    assert (await services.search.page(ALICE, "reward models", per_page=3)).saved_ids == {chosen}
    assert (await services.search.page(1500000000000000002, "reward models", per_page=3)).saved_ids == set()


async def test_filters_narrow_the_results(services):
    engine = services.context.engine
    area = engine.areas[0][0]
    page = await services.search.page(ALICE, "learning", area=area, per_page=10)
    assert page.total and all(area.casefold() in h.paper.area.casefold() for h in page.hits)
    assert page.area == area


async def test_no_hits_say_which_filter_removed_everything(services):
    unknown = await services.search.page(ALICE, "learning", area="Quantum Basket Weaving")
    assert unknown.total == 0 and not unknown.hits
    assert unknown.notice.startswith("There is no area “Quantum Basket Weaving”.")
    by_author = await services.search.page(ALICE, "learning", author="Zzyzx Nobody")
    assert by_author.notice.startswith("No paper by an author matching “Zzyzx Nobody” matches “learning”.")
    nothing = await services.search.page(ALICE, "xylophone zeppelin")
    assert nothing.notice == (
        "No paper matches “xylophone zeppelin”. "
        'Try fewer or different words; "quotes" match a phrase and -word excludes a word.'
    )


async def test_a_malformed_query_raises_query_error(services):
    with pytest.raises(QueryError):
        await services.search.page(ALICE, '"unclosed')


def test_autocomplete_data(services):
    engine = services.context.engine
    area = engine.areas[0][0]
    assert services.search.areas(area[:4])[0].casefold().startswith(area[:4].casefold())
    pid = engine.index.papers[0].id
    assert services.search.paper_ids(pid[:3])[0][0].startswith(pid[:3])
    assert len(services.search.areas("")) <= 25
