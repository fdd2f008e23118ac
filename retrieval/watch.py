"""Watches: which of the papers a reindex added match a saved query.

A watch is a query in the query language plus the optional area/author filters of /search. After a
reindex, :func:`new_matches` ranks, among the papers that reindex added, those the query finds, with
exactly /search's rule and scores (the same parser, filters and ranking; only the candidates are
narrowed to the added papers), so the "+N more" a DM mentions is what the /search it suggests shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from retrieval.models import Paper
from retrieval.query import parse_query
from retrieval.search import _filter_mask, rank

if TYPE_CHECKING:
    from retrieval.index import Index

__all__ = ["WatchMatches", "check_watch", "new_matches"]


@dataclass(frozen=True, slots=True)
class WatchMatches:
    """The best ``papers`` among the added ones that match a watch, and how many matched in all."""

    papers: tuple[Paper, ...]
    total: int


def check_watch(query: str) -> None:
    """Raise QueryError/EmptyQueryError when ``query`` could never run (checked when a watch is added)."""
    parse_query(query)


def new_matches(
    index: Index,
    query: str,
    added: Iterable[str],
    k: int = 10,
    *,
    area: str | None = None,
    author: str | None = None,
) -> WatchMatches:
    """The ``k`` best papers among ``added`` (ids) that ``query`` (with the filters) finds.

    Raises:
        QueryError: The query is malformed (a watch saved before a parser change, say).
    """
    parsed = parse_query(query)
    positions = [p for p in (index.position(pid) for pid in added) if p is not None]
    if not positions or k < 1:
        return WatchMatches((), 0)
    among = np.zeros(len(index), dtype=np.bool_)
    among[positions] = True
    mask = _filter_mask(index.core, index.catalogue, parsed, area, author)
    if mask is not None:
        among &= mask
    docs, _, total = rank(index.core, parsed.terms, k, among, [w.tokens for w in parsed.words])
    return WatchMatches(tuple(index.papers[int(d)] for d in docs.tolist()), int(total))
