"""/search: one page of ranked papers for a query (and filters), or why there is none.

Also the autocomplete data the search options offer (areas; paper ids with titles), answered from
the serving index in memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from bot.limits import MAX_CHOICES
from bot.render import truncate
from bot.services.base import Context
from retrieval.corpus import area_key
from retrieval.models import Hit

QUERY_TIPS = 'Try fewer or different words; "quotes" match a phrase and -word excludes a word.'
#: Most suggestions an autocomplete answer holds (Discord's limit).
#: An area is suggested for an unknown one only when a word of it (this long or more) is this close
#: (difflib ratio) to a typed word: "Theroy" suggests Theory, "Quantum Basket Weaving" nothing.
NEAR_MIN_WORD = 3
NEAR_WORD_RATIO = 0.8


@dataclass(frozen=True)
class ResultPage:
    """One page of ranked papers (a /search or a /similar page).

    Attributes:
        title: What kind of page: ``"Search"``, ``"Similar to"`` or ``"Recommended"``.
        subject: The query, or the title of the paper the results are similar to (shown in quotes), or
            where recommendations come from (``quoted=False``: "from your list “theory”", shown as is).
        hits: This page's hits, ranks counted over all pages.
        total: Hits over all pages.
        page: This page (0-based; clamped to the last page when asked for one past it).
        pages: How many pages there are (at least 1).
        area, author: The filters applied (``None`` when not).
        saved_ids: Which of this page's papers the user has saved.
        notice: When ``total == 0``: the sentence that says why and what to try.
        reasons: Per paper id of this page, why it is shown (markdown; /recommend's "because you
            saved …").
    """

    title: str
    subject: str
    hits: tuple[Hit, ...]
    total: int
    page: int
    pages: int
    area: str | None = None
    author: str | None = None
    saved_ids: frozenset[str] = frozenset()
    notice: str | None = None
    reasons: dict[str, str] = field(default_factory=dict)
    quoted: bool = True


def page_count(total: int, per_page: int) -> int:
    """Pages needed for ``total`` results (at least one)."""
    return max(1, math.ceil(total / per_page))


class SearchService:
    """Ranked pages for a query, with the user's saved papers marked."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def page(
        self,
        user_id: int,
        query: str,
        *,
        page: int = 0,
        per_page: int | None = None,
        area: str | None = None,
        author: str | None = None,
    ) -> ResultPage:
        """Page ``page`` of ``query``'s results; raises QueryError for a malformed query.

        When the index changed under a pager (a reindex) and the page no longer exists, the last one
        is returned instead.
        """
        engine = self.ctx.engine
        size = per_page or self.ctx.settings.page_size
        index = max(page, 0)
        results = engine.search(query, size, offset=index * size, area=area, author=author)
        if not results.hits and index > 0 and results.total:
            index = page_count(results.total, size) - 1
            results = engine.search(query, size, offset=index * size, area=area, author=author)
        saved = await self.ctx.store.saved_ids(user_id) if results.hits else set()
        return ResultPage(
            title="Search",
            subject=query,
            hits=tuple(results.hits),
            total=results.total,
            page=index,
            pages=page_count(results.total, size),
            area=area,
            author=author,
            saved_ids=frozenset(hit.paper.id for hit in results.hits if hit.paper.id in saved),
            notice=self.explain_no_hits(query, area, author) if results.total == 0 else None,
        )

    def near_areas(self, typed: str, n: int = 3) -> list[str]:
        """Area names near ``typed`` in spelling: some word of each is a close match for a typed word
        (``Theroy`` → *Theory · Game Theory*); ``Quantum Basket Weaving`` has none."""
        words = [w for w in area_key(typed).split() if len(w) >= NEAR_MIN_WORD]
        if not words:
            return []
        scored: list[tuple[float, float, str]] = []
        for name in self.ctx.engine.nearest_areas(typed, n * 4):
            own = [w for w in area_key(name).split() if len(w) >= NEAR_MIN_WORD]
            best = max((SequenceMatcher(None, w, x).ratio() for w in words for x in own), default=0.0)
            if best >= NEAR_WORD_RATIO:
                whole = SequenceMatcher(None, area_key(typed), area_key(name)).ratio()
                scored.append((-best, -whole, name))
        return [name for _, _, name in sorted(scored)[:n]]

    def areas_matching(self, query: str, author: str | None, n: int = 3) -> list[str]:
        """The areas of the best papers ``query`` finds without an area filter."""
        found: list[str] = []
        for hit in self.ctx.engine.search(query, 20, author=author).hits:
            if hit.paper.area and hit.paper.area not in found:
                found.append(hit.paper.area)
        return found[:n]

    def explain_no_hits(self, query: str, area: str | None, author: str | None) -> str:
        """Say which filter removed everything, and what to try instead."""
        engine = self.ctx.engine
        shown = truncate(" ".join(query.split()), 100)
        if area:
            known = {name.casefold() for name in engine.complete_areas(area, 25)}
            if area.casefold() not in known and not engine.complete_areas(area, 1):
                nearest = ", ".join(f"*{a}*" for a in self.near_areas(area))
                if not nearest:  # nothing near: no far-fetched names
                    return f"There is no area “{area}”. Start typing in the area option to pick one."
                return f"There is no area “{area}”. Did you mean {nearest}?"
            elsewhere = self.areas_matching(query, author)
            if elsewhere:
                listed = ", ".join(f"*{a}*" for a in elsewhere)
                return (
                    f"No paper in area *{area}* matches “{shown}”; papers in {listed} do. "
                    "Drop the area or pick one of those."
                )
        if author and engine.search(query, 1, area=area).total:
            return (
                f"No paper by an author matching “{author}” matches “{shown}”. "
                "Check the spelling or drop the author."
            )
        return f"No paper matches “{shown}”. {QUERY_TIPS}"

    def areas(self, typed: str, limit: int = MAX_CHOICES) -> list[str]:
        """Areas of the corpus starting with (then containing) what was typed."""
        return self.ctx.engine.complete_areas(typed, limit)

    def paper_ids(self, typed: str, limit: int = MAX_CHOICES) -> list[tuple[str, str]]:
        """``(id, title)`` of papers whose id starts with what was typed, then titles with its words."""
        return self.ctx.engine.complete_ids(typed, limit)
