"""/recommend: papers most like those in one of the user's lists (default: all of them).

The ranking is :func:`retrieval.recommend.recommend` (a profile of the saved papers queried through the
BM25 index; bench/recommend.py chose it). It runs in a worker thread (CPU work never runs on the event
loop) over the serving index, with one vector cache per index. The user's saved papers are never
recommended; each recommendation names the saved paper it is most like ("because you saved …").
Pages are slices of one ranked pool of ``recommend_pool`` papers, like /similar.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from bot import render
from bot.render import code
from bot.services.base import Context
from bot.services.library import HOW_TO_SAVE, find_list, list_label
from bot.services.search import ResultPage, page_count
from bot.store import MAX_PAGE
from retrieval.models import Hit
from retrieval.recommend import ProfileCache, Recommendation, recommend


@dataclass(frozen=True)
class Pool:
    """One ranked pool of recommendations for a user's list (or all lists)."""

    recommendations: tuple[Recommendation, ...]
    list_name: str | None
    saved: int


class RecommendService:
    """Recommendations from the user's saved papers."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._cache: ProfileCache | None = None
        self._lock = threading.Lock()

    def _profile_cache(self) -> ProfileCache:
        """The vector cache of the serving index (a reindex swaps the index: a fresh cache)."""
        index = self.ctx.engine.index
        with self._lock:
            if self._cache is None or self._cache.index is not index:
                self._cache = ProfileCache(index)
            return self._cache

    async def _saved_in_order(self, user_id: int, list_name: str | None) -> tuple[list[str], str | None]:
        """The ids of the list (or of every list), oldest save first, and the list's display name.

        Raises:
            ListNotFoundError (a StoreError): ``list_name`` is not one of the user's lists.
        """
        store = self.ctx.store
        lists = await store.list_lists(user_id)
        if list_name is not None:
            found = find_list(lists, list_name)
            names = [found.name] if found is not None else [list_name]
        else:
            names = [info.name for info in lists if info.count]
        items = []
        for name in names:
            page = await store.get_list(user_id, name, limit=MAX_PAGE)
            items.extend(page.items)
        items.sort(key=lambda item: item.saved_at)
        shown = names[0] if list_name is not None else None
        return list(dict.fromkeys(item.paper_id for item in items)), shown

    async def pool(self, user_id: int, list_name: str | None = None) -> Pool:
        """The ranked pool for ``list_name`` (None: all the user's lists)."""
        ordered, shown = await self._saved_in_order(user_id, list_name)
        if not ordered:
            return Pool((), shown, 0)
        exclude = await self.ctx.store.saved_ids(user_id)
        cache = self._profile_cache()
        recs = await asyncio.to_thread(
            recommend,
            cache.index,
            ordered,
            self.ctx.settings.recommend_pool,
            exclude=exclude,
            cache=cache,
        )
        return Pool(tuple(recs), shown, len(ordered))

    def render(self, pool: Pool, *, page: int = 0, per_page: int | None = None) -> ResultPage:
        """Page ``page`` of an already ranked pool."""
        size = per_page or self.ctx.settings.page_size
        recs = pool.recommendations
        pages = page_count(len(recs), size)
        index = max(0, min(page, pages - 1))
        chunk = recs[index * size : (index + 1) * size]
        subject = f"from your list {list_label(pool.list_name)}" if pool.list_name else "from all your lists"
        notice = None
        if not pool.saved:
            where = f"Your list {list_label(pool.list_name)} is empty" if pool.list_name else (
                "You have no saved papers yet"
            )
            notice = f"{where}: /recommend suggests papers like the ones you save. {HOW_TO_SAVE}"
        elif not recs:
            notice = "No other paper shares enough words with your saved papers to recommend one yet."
        reasons = {}
        for rec in chunk:
            source = self.ctx.engine.get(rec.because)
            title = source.title if source is not None and source.title else rec.because
            reasons[rec.paper.id] = f"*{render.title(title, 150)}* ({code(rec.because)})"
        return ResultPage(
            title="Recommended",
            subject=subject,
            quoted=False,  # "from your list “theory”" already quotes what needs quoting
            hits=tuple(
                Hit(paper=rec.paper, score=rec.score, rank=rec.rank, matched_terms=(), snippet=None)
                for rec in chunk
            ),
            total=len(recs),
            page=index,
            pages=pages,
            notice=notice,
            reasons=reasons,
        )
