"""bot/services/papers.py: one paper in full, and similar papers paged like a search."""

from __future__ import annotations

import pytest

from retrieval.errors import UnknownPaperError
from tests.bot.services.conftest import ALICE


async def test_paper_page_carries_the_saved_mark(services, corpus_ids):
    pid = corpus_ids[0]
    assert (await services.papers.paper(ALICE, f"  {pid} ")).saved is False
    await services.library.save(ALICE, pid)
    page = await services.papers.paper(ALICE, pid)
    assert page.paper.id == pid and page.saved is True


async def test_unknown_paper_raises(services):
    with pytest.raises(UnknownPaperError):
        await services.papers.paper(ALICE, "nope1234")
    with pytest.raises(UnknownPaperError):
        await services.papers.similar(ALICE, "nope1234")


async def test_similar_pages_exclude_the_paper_itself(services, corpus_ids):
    pid = corpus_ids[0]
    engine = services.context.engine
    pool = engine.similar(pid, 25)
    first = await services.papers.similar(ALICE, pid, per_page=4)
    second = await services.papers.similar(ALICE, pid, page=1, per_page=4)
    assert first.title == "Similar to" and first.total == len(pool)
    assert [h.paper.id for h in first.hits + second.hits] == [h.paper.id for h in pool[:8]]
    assert pid not in {h.paper.id for h in pool}
    assert first.subject == engine.get(pid).title.replace("**", "")


async def test_no_similar_paper_is_a_notice(services, corpus_ids, monkeypatch):
    monkeypatch.setattr(services.context.engine, "similar", lambda paper_id, k: [])
    page = await services.papers.similar(ALICE, corpus_ids[0])
    assert page.total == 0 and page.pages == 1
    assert page.notice == f"No other paper shares enough words with `{corpus_ids[0]}` to count as similar."
