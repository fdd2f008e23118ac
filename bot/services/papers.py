"""/paper (one paper in full) and /similar (papers closest to one, paged like a search)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.render import code
from bot.services.base import Context
from bot.services.search import ResultPage, page_count
from retrieval.models import Paper

#: Similar papers ranked per request; pages are slices of them.
SIMILAR_POOL = 25


@dataclass(frozen=True)
class PaperPage:
    """A paper to show in full, and whether the user has saved it."""

    paper: Paper
    saved: bool


class PaperService:
    """Reading one paper, and finding the papers like it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def paper(self, user_id: int, paper_id: str) -> PaperPage:
        """The paper ``paper_id`` (raises UnknownPaperError) with the user's saved mark."""
        paper = self.ctx.paper(paper_id)
        return PaperPage(paper=paper, saved=paper.id in await self.ctx.store.saved_ids(user_id))

    async def similar(
        self, user_id: int, paper_id: str, *, page: int = 0, per_page: int | None = None
    ) -> ResultPage:
        """Page ``page`` of the papers most like ``paper_id`` (itself excluded); raises UnknownPaperError.

        ``notice`` says so when no other paper shares enough words with it.
        """
        paper = self.ctx.paper(paper_id)
        hits = self.ctx.engine.similar(paper.id, SIMILAR_POOL)
        size = per_page or self.ctx.settings.page_size
        pages = page_count(len(hits), size)
        index = max(0, min(page, pages - 1))
        chunk = tuple(hits[index * size : (index + 1) * size])
        saved = await self.ctx.store.saved_ids(user_id) if chunk else set()
        return ResultPage(
            title="Similar to",
            subject=paper.title or paper.id,
            hits=chunk,
            total=len(hits),
            page=index,
            pages=pages,
            saved_ids=frozenset(hit.paper.id for hit in chunk if hit.paper.id in saved),
            notice=(
                None
                if hits
                else f"No other paper shares enough words with {code(paper.id)} to count as similar."
            ),
        )
