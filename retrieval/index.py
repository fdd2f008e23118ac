"""The BM25 index: built once (with rank-bm25's statistics), served from precomputed CSR arrays.

Layout (all numpy, immutable after build, shared read-only between threads):

* ``vocab``: term -> term id, ids in order of first appearance in the corpus (rank-bm25's order).
* postings, CSR by term: ``indptr[t]:indptr[t+1]`` slices ``post_docs`` (int32, ascending doc ids)
  and ``post_impact`` (float64, that term's BM25 contribution to that doc, computed with exactly
  rank-bm25's floating-point expression, so summing them in query order reproduces ``get_scores``
  bit for bit).
* ``baseline[t]``: the contribution of term ``t`` to a doc that does NOT contain it (``idf * delta``
  for BM25Plus, 0 otherwise).
* phrase positions: think of one stream holding, per doc, the phrase tokens of the title, a gap,
  those of the abstract, a gap (``doc_start`` = where each doc begins). Only the sorted positions of
  each term in it are kept (CSR ``pos_indptr``/``positions``); a quoted phrase is verified by
  intersecting shifted position lists, without re-tokenizing and without storing the stream itself.

A query costs one gather/scatter per query term over that term's postings plus a few O(N) numpy
passes (mask, select); Python work is done only for the k hits returned.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import math
import os
import tempfile
import threading
import time
import zipfile
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Any

import numpy as np
import numpy.typing as npt
import rank_bm25

from retrieval.errors import CorpusError
from retrieval.models import AREA_SEPARATOR, Answer, Hit, IngestReport, Paper, SearchResults, SkippedBlock
from retrieval.tokenize import TOKENIZER_VERSION, analyze_document, analyze_word, surface_words

__all__ = [
    "BM25Params",
    "CACHE_FORMAT",
    "Index",
    "Progress",
    "build_index",
    "cache_path_for",
    "corpus_fingerprint",
    "open_index",
    "paper_tokens",
]

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

#: Version of the on-disk cache layout; part of the fingerprint.
CACHE_FORMAT = "paperbot-index-4"
#: Corpora up to this many papers get their statistics from a real rank-bm25 model; above it, the
#: identical statistics are computed here (rank-bm25 keeps a dict per document: ~5 GB at 1M papers).
RANK_BM25_MAX_DOCS = 50_000
_VARIANTS = ("okapi", "l", "plus")
_DEFAULT_DELTA = {"okapi": 0.0, "l": 0.5, "plus": 1.0}  # rank-bm25's BM25L / BM25Plus defaults


@dataclass(frozen=True, slots=True)
class BM25Params:
    """Ranking parameters, as rank-bm25 names them.

    Attributes:
        variant: ``"okapi"`` (BM25Okapi), ``"l"`` (BM25L) or ``"plus"`` (BM25Plus).
        k1: Term-frequency saturation.
        b: Length normalisation.
        epsilon: BM25Okapi's idf floor, as a fraction of the average idf.
        delta: BM25L / BM25Plus lower bound; ``None`` means rank-bm25's default (0.5 for L, 1 for Plus).
    """

    variant: str = "okapi"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.variant not in _VARIANTS:
            raise ValueError(f"BM25 variant must be one of {', '.join(_VARIANTS)}, not {self.variant!r}")
        for name in ("k1", "b", "epsilon"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"BM25 {name} must be a finite number, not {value!r}")
        if self.k1 < 0:
            raise ValueError(f"BM25 k1 must be >= 0, not {self.k1}")
        if not 0 <= self.b <= 1:
            raise ValueError(f"BM25 b must be between 0 and 1, not {self.b}")
        if self.delta is not None and (not math.isfinite(self.delta) or self.delta < 0):
            raise ValueError(f"BM25 delta must be a finite number >= 0, not {self.delta}")

    @property
    def effective_delta(self) -> float:
        """``delta``, or rank-bm25's default for the variant (unused by Okapi)."""
        return _DEFAULT_DELTA[self.variant] if self.delta is None else float(self.delta)

    def key(self) -> str:
        """A stable text form (cache file names and fingerprints)."""
        if self.variant == "okapi":
            return f"okapi-k{self.k1!r}-b{self.b!r}-e{self.epsilon!r}"
        return f"{self.variant}-k{self.k1!r}-b{self.b!r}-d{self.effective_delta!r}"

    def rank_bm25_model(self, corpus: list[list[str]]) -> rank_bm25.BM25:
        """Build the rank-bm25 model of this variant (never with ``tokenizer=``: it leaks a pool)."""
        if self.variant == "okapi":
            return rank_bm25.BM25Okapi(corpus, k1=self.k1, b=self.b, epsilon=self.epsilon)
        if self.variant == "l":
            return rank_bm25.BM25L(corpus, k1=self.k1, b=self.b, delta=self.effective_delta)
        return rank_bm25.BM25Plus(corpus, k1=self.k1, b=self.b, delta=self.effective_delta)


def paper_tokens(paper: Paper) -> list[str]:
    """The index tokens of a paper (title then abstract): what rank-bm25 is given for it."""
    return analyze_document(paper.title)[0] + analyze_document(paper.abstract)[0]


# --------------------------------------------------------------------------------------------------
# Statistics and impacts


def _idf_like_rank_bm25(params: BM25Params, df: Sequence[int], n_docs: int) -> list[float]:
    """Per-term idf exactly as rank-bm25's ``_calc_idf`` computes it (same math.log, same summation
    order: term ids are in rank-bm25's dict insertion order), for corpora too big for its model.

    See ``BM25Okapi._calc_idf``, ``BM25L._calc_idf`` and ``BM25Plus._calc_idf`` in rank_bm25.py.
    """
    log_ = math.log
    if params.variant == "l":
        return [log_(n_docs + 1) - log_(f + 0.5) for f in df]
    if params.variant == "plus":
        return [log_((n_docs + 1) / f) for f in df]
    idf: list[float] = []
    idf_sum = 0.0
    negative: list[int] = []
    for i, f in enumerate(df):
        value = log_(n_docs - f + 0.5) - log_(f + 0.5)
        idf.append(value)
        idf_sum += value
        if value < 0:
            negative.append(i)
    if idf:
        eps = params.epsilon * (idf_sum / len(idf))
        for i in negative:
            idf[i] = eps
    return idf


def _impacts(
    params: BM25Params, tf: npt.NDArray[np.int64], dl: npt.NDArray[np.int64], idf: FloatArray, avgdl: float
) -> FloatArray:
    """Per-posting BM25 contributions, with rank-bm25's exact operation order (bit-identical).

    BM25Okapi.get_scores:  idf * (f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl)))
    BM25L.get_scores:      ctd = f / (1 - b + b * dl / avgdl);
                           idf * f * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
    BM25Plus.get_scores:   idf * (delta + (f * (k1 + 1)) / (k1 * (1 - b + b * dl / avgdl) + f))
    (rank_bm25.py, rank-bm25 0.2.2). ``idf`` here is already expanded per posting.
    """
    k1, b = params.k1, params.b
    if params.variant == "okapi":
        return idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))
    delta = params.effective_delta
    if params.variant == "l":
        ctd = tf / (1 - b + b * dl / avgdl)
        return idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
    return idf * (delta + (tf * (k1 + 1)) / (k1 * (1 - b + b * dl / avgdl) + tf))


def _baselines(params: BM25Params, idf: FloatArray) -> FloatArray:
    """What each term adds to a doc WITHOUT it: BM25Plus ``idf * (delta + 0/x)``; 0 for Okapi and
    BM25L (whose expression is multiplied by the term frequency)."""
    if params.variant == "plus":
        return idf * (params.effective_delta + 0.0)
    return np.zeros_like(idf)


# --------------------------------------------------------------------------------------------------
# The index


class Index:
    """An immutable, thread-safe BM25 index over a tuple of papers.

    Build with :func:`build_index` or :func:`open_index`; all reads (search, similar, answer, ...)
    are safe from many threads at once.
    """

    def __init__(
        self,
        *,
        papers: tuple[Paper, ...],
        params: BM25Params,
        terms: list[str],
        arrays: dict[str, np.ndarray],
        avgdl: float,
        fingerprint: str = "",
        built_at: float = 0.0,
        build_seconds: float = 0.0,
    ) -> None:
        self.papers = papers
        self.params = params
        self.fingerprint = fingerprint
        self.built_at = built_at or time.time()
        self.build_seconds = build_seconds
        self.avgdl = avgdl
        self.terms = terms
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(terms)}
        for arr in arrays.values():
            arr.flags.writeable = False
        self.indptr: npt.NDArray[np.int64] = arrays["indptr"]
        self.post_docs: IntArray = arrays["post_docs"]
        self.post_impact: FloatArray = arrays["post_impact"]
        self.idf: FloatArray = arrays["idf"]
        self.baseline: FloatArray = arrays["baseline"]
        self.doc_len: IntArray = arrays["doc_len"]
        self.doc_start: npt.NDArray[np.int64] = arrays["doc_start"]
        self.pos_indptr: npt.NDArray[np.int64] = arrays["pos_indptr"]
        self.positions: IntArray = arrays["positions"]
        self.has_baseline = bool(np.any(self.baseline != 0))
        self._arrays = arrays
        self._by_id: dict[str, int] = {p.id: i for i, p in enumerate(papers)}
        # Case-insensitive look-up needs a second table only for ids that are not lowercase.
        self._by_folded_id: dict[str, int] = {}
        for i, p in enumerate(papers):
            folded = p.id.casefold()
            if folded != p.id and folded not in self._by_id:
                self._by_folded_id.setdefault(folded, i)
        self._init_areas()
        self._lock = threading.Lock()
        self._authors: tuple[str, npt.NDArray[np.int64], npt.NDArray[np.int64], IntArray] | None = None
        self._sorted_ids: list[tuple[str, int]] | None = None

    @classmethod
    def from_saved(
        cls,
        *,
        papers: tuple[Paper, ...],
        params: BM25Params,
        terms: list[str],
        arrays: dict[str, np.ndarray],
        meta: dict[str, Any],
    ) -> Index:
        """An index from its saved parts; ``meta`` has ``avgdl``, ``fingerprint``, ``built_at`` and
        ``build_seconds`` as the cache file (and the bot's index worker) write them."""
        return cls(
            papers=papers,
            params=params,
            terms=terms,
            arrays=arrays,
            avgdl=float(meta["avgdl"]),
            fingerprint=str(meta["fingerprint"]),
            built_at=float(meta["built_at"]),
            build_seconds=float(meta["build_seconds"]),
        )

    # -- metadata ------------------------------------------------------------------------------

    def _init_areas(self) -> None:
        from retrieval.corpus import area_key

        names: dict[str, int] = {}
        doc_area = np.empty(len(self.papers), dtype=np.int32)
        for i, p in enumerate(self.papers):
            doc_area[i] = names.setdefault(p.area, len(names))
        doc_area.flags.writeable = False
        self.doc_area = doc_area
        self.area_names: list[str] = list(names)
        self.area_counts = np.bincount(doc_area, minlength=len(names)) if len(doc_area) else np.zeros(0)
        # Filter keys per area: the whole area, its top level and its sub-area.
        self.area_keys: list[tuple[str, str, str]] = []
        for name in self.area_names:
            top, _, sub = name.partition(AREA_SEPARATOR)
            self.area_keys.append((area_key(name), area_key(top), area_key(sub)))

    def _author_table(self) -> tuple[str, npt.NDArray[np.int64], npt.NDArray[np.int64], IntArray]:
        """Normalised author names joined in one string (for fast substring search) and a CSR
        author -> docs table. Built on first use (most sessions never filter by author)."""
        table = self._authors
        if table is not None:
            return table
        with self._lock:
            if self._authors is not None:
                return self._authors
            from retrieval.corpus import normalize_name

            ids: dict[str, int] = {}
            pairs_author: list[int] = []
            pairs_doc: list[int] = []
            norm_cache: dict[str, str] = {}
            for d, p in enumerate(self.papers):
                for name in p.authors:
                    norm = norm_cache.get(name)
                    if norm is None:
                        norm = norm_cache[name] = normalize_name(name).replace("\n", " ")
                    pairs_author.append(ids.setdefault(norm, len(ids)))
                    pairs_doc.append(d)
            a = np.asarray(pairs_author, dtype=np.int64)
            docs = np.asarray(pairs_doc, dtype=np.int32)
            order = np.argsort(a, kind="stable")
            counts = np.bincount(a, minlength=len(ids))
            indptr = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(counts, out=indptr[1:])
            names = list(ids)
            joined = "\n".join(names)
            starts = np.zeros(len(names), dtype=np.int64)
            if names:
                np.cumsum([len(n) + 1 for n in names[:-1]], out=starts[1:])
            self._authors = (joined, starts, indptr, docs[order])
            return self._authors

    # -- container protocol --------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.papers)

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and self.position(paper_id) is not None

    def __repr__(self) -> str:
        return f"<Index {len(self.papers)} papers, {len(self.terms)} terms, {self.params.key()}>"

    def position(self, paper_id: str) -> int | None:
        """The corpus position of a paper id (exact, then case-insensitive), or None."""
        pos = self._by_id.get(paper_id)
        if pos is None:
            folded = paper_id.strip().casefold()
            pos = self._by_id.get(folded)
            if pos is None:
                pos = self._by_folded_id.get(folded)
        return pos

    def get(self, paper_id: str) -> Paper | None:
        """The paper with this id (exact match first, then case-insensitive), or None."""
        if not isinstance(paper_id, str):
            return None
        pos = self.position(paper_id)
        return None if pos is None else self.papers[pos]

    # -- searching (implemented in retrieval.search) ---------------------------------------------

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        offset: int = 0,
        area: str | None = None,
        author: str | None = None,
    ) -> SearchResults:
        """Rank papers for a query (see :mod:`retrieval.query` for the syntax).

        Args:
            query: The query text.
            k: Page size, 1..100.
            offset: Number of ranked hits to skip (paging), >= 0.
            area: Extra area filter (the bot's slash option), combined with inline ``area:``.
            author: Extra author filter, combined with inline ``author:``.

        Returns:
            The page of hits and the total number of matching papers.

        Raises:
            ValueError: k or offset out of range.
            QueryError: Malformed query (with ``.position``).
            EmptyQueryError: No searchable word.
        """
        from retrieval.search import search

        return search(self, query, k, offset=offset, area=area, author=author)

    def similar(self, paper_id: str, k: int = 5) -> list[Hit]:
        """Papers closest to ``paper_id`` (itself excluded), by its most distinctive terms.

        Raises:
            UnknownPaperError: No paper has that id.
            ValueError: k out of 1..100.
        """
        from retrieval.search import similar

        return similar(self, paper_id, k)

    def answer(self, question: str, k: int = 4) -> Answer:
        """An extractive answer: up to ``k`` sentences from the top papers that bear on the question
        (fewer when fewer do; see :func:`retrieval.answer.answer`), with their papers.

        Raises:
            EmptyQueryError: The question has no searchable word.
            QueryError: The question is too long.
            ValueError: k out of 1..10.
        """
        from retrieval.answer import answer

        return answer(self, question, k)

    # -- areas and autocomplete ----------------------------------------------------------------

    def areas(self) -> list[tuple[str, int]]:
        """Distinct (non-empty) areas with their paper counts, most common first, then by name."""
        pairs = [(n, int(c)) for n, c in zip(self.area_names, self.area_counts, strict=True) if n]
        return sorted(pairs, key=lambda p: (-p[1], p[0].casefold()))

    def _area_choices(self) -> list[tuple[str, int]]:
        """Areas plus their top levels (``"Theory"`` filters every Theory sub-area), with counts."""
        counts: dict[str, int] = {}
        for name, count in self.areas():
            counts[name] = counts.get(name, 0) + count
            top = name.split(AREA_SEPARATOR, 1)[0]
            if top != name:
                counts[top] = counts.get(top, 0) + count
        return sorted(counts.items(), key=lambda p: (-p[1], p[0].casefold()))

    def complete_areas(self, prefix: str, limit: int = 25) -> list[str]:
        """Area names for autocomplete, best first: those whose area or sub-area starts with
        ``prefix``, then those with a word starting with it, then those containing it; within a
        group by paper count (top-level areas such as ``"Theory"`` are included).

        Args:
            prefix: What the user typed so far (case/punctuation-insensitive).
            limit: At most this many names.
        """
        from retrieval.corpus import area_key

        key = area_key(prefix or "")
        groups: tuple[list[str], list[str], list[str]] = ([], [], [])
        for name, _ in self._area_choices():
            full = area_key(name)
            parts = [area_key(p) for p in name.split(AREA_SEPARATOR)]
            if not key or any(p.startswith(key) for p in parts):
                groups[0].append(name)
            elif any(w.startswith(key) for w in full.replace("·", " ").split()):
                groups[1].append(name)
            elif key in full:
                groups[2].append(name)
        return (groups[0] + groups[1] + groups[2])[: max(limit, 0)]

    def complete_ids(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """``(id, title)`` pairs for autocomplete: ids starting with ``prefix`` (case-insensitive,
        corpus order), then papers whose title contains every word of ``prefix``.

        Args:
            prefix: What the user typed so far.
            limit: At most this many pairs.
        """
        import bisect

        limit = max(limit, 0)
        text = (prefix or "").strip().casefold()
        if not text:
            return [(p.id, p.title) for p in self.papers[:limit]]
        if self._sorted_ids is None:
            self._sorted_ids = sorted((p.id.casefold(), i) for i, p in enumerate(self.papers))
        ids = self._sorted_ids
        found: list[int] = []
        j = bisect.bisect_left(ids, (text, -1))
        while j < len(ids) and ids[j][0].startswith(text) and len(found) < limit:
            found.append(ids[j][1])
            j += 1
        found.sort()
        seen = set(found)
        words = text.split()
        if len(found) < limit:
            for i, p in enumerate(self.papers):
                if i in seen:
                    continue
                title = p.title.casefold()
                if all(w in title for w in words):
                    found.append(i)
                    if len(found) >= limit:
                        break
        return [(self.papers[i].id, self.papers[i].title) for i in found]

    def nearest_areas(self, text: str, n: int = 3) -> list[str]:
        """Area names closest in spelling to ``text`` (for a "did you mean" message)."""
        from retrieval.corpus import area_key

        choices = [name for name, _ in self._area_choices()]
        by_key: dict[str, str] = {}
        for name in choices:
            by_key.setdefault(area_key(name), name)
            for part in name.split(AREA_SEPARATOR):
                by_key.setdefault(area_key(part), name)
        key = area_key(text or "")
        if not key:
            return choices[:n]
        out: list[str] = []
        for match in difflib.get_close_matches(key, list(by_key), n=n * 3, cutoff=0.4):
            name = by_key[match]
            if name not in out:
                out.append(name)
        for name in choices:  # substring matches count as close too
            if len(out) >= n:
                break
            if key in area_key(name) and name not in out:
                out.append(name)
        return out[:n]

    # -- internals used by retrieval.search -------------------------------------------------------

    def postings(self, term_id: int) -> tuple[IntArray, FloatArray]:
        """Doc ids (ascending) and impacts of one term."""
        lo, hi = self.indptr[term_id], self.indptr[term_id + 1]
        return self.post_docs[lo:hi], self.post_impact[lo:hi]

    def term_docs(self, term: str) -> IntArray:
        """Doc ids containing a token (empty for an unknown token)."""
        tid = self.vocab.get(term)
        if tid is None:
            return np.zeros(0, dtype=np.int32)
        return self.post_docs[self.indptr[tid] : self.indptr[tid + 1]]

    def contains(self, doc: int, term: str) -> bool:
        """True when paper number ``doc`` contains the token ``term``."""
        docs = self.term_docs(term)
        j = int(np.searchsorted(docs, doc))
        return j < len(docs) and int(docs[j]) == doc

    def score_terms(self, terms: Iterable[str]) -> tuple[FloatArray, npt.NDArray[np.bool_] | None]:
        """BM25 scores of every paper for ``terms`` (repeats count), equal to rank-bm25's
        ``get_scores(terms)``; plus, for BM25Plus, a mask of papers containing some term."""
        scores = np.zeros(len(self.papers), dtype=np.float64)
        hit = np.zeros(len(self.papers), dtype=np.bool_) if self.has_baseline else None
        for term in terms:
            tid = self.vocab.get(term)
            if tid is None:
                continue  # rank-bm25 scores an unknown term 0 for every document
            lo, hi = self.indptr[tid], self.indptr[tid + 1]
            docs = self.post_docs[lo:hi]
            impact = self.post_impact[lo:hi]
            base = self.baseline[tid]
            if base == 0.0:
                scores[docs] += impact  # doc ids within one posting list are unique
            else:
                # Same operation order as rank-bm25: each doc gets old + its own contribution.
                inside = scores[docs] + impact
                scores += base
                scores[docs] = inside
            if hit is not None:
                hit[docs] = True
        return scores, hit

    def phrase_docs(self, tokens: Sequence[str]) -> IntArray:
        """Sorted doc ids whose title or abstract contains ``tokens`` consecutively (phrase tokens)."""
        if not tokens:
            return np.arange(len(self.papers), dtype=np.int32)
        ids = [self.vocab.get(t) for t in tokens]
        if any(i is None for i in ids):
            return np.zeros(0, dtype=np.int32)
        tids = [int(i) for i in ids if i is not None]
        if len(tids) == 1:
            return self.post_docs[self.indptr[tids[0]] : self.indptr[tids[0] + 1]]
        # Anchor on the rarest token; keep the starts where every other token sits at its offset
        # (position lists are sorted, so membership is a binary search). The gaps between title,
        # abstract and documents hold no token, so a match never crosses them.
        counts = [int(self.pos_indptr[t + 1] - self.pos_indptr[t]) for t in tids]
        anchor = int(np.argmin(counts))
        at = tids[anchor]
        starts = self.positions[self.pos_indptr[at] : self.pos_indptr[at + 1]].astype(np.int64) - anchor
        for offset, tid in enumerate(tids):
            if offset == anchor or not len(starts):
                continue
            where = self.positions[self.pos_indptr[tid] : self.pos_indptr[tid + 1]]
            want = starts + offset
            j = np.searchsorted(where, want)
            found = j < len(where)
            found[found] = where[j[found]] == want[found]
            starts = starts[found]
        if not len(starts):
            return np.zeros(0, dtype=np.int32)
        docs = np.searchsorted(self.doc_start, starts, side="right") - 1
        return np.unique(docs).astype(np.int32)

    def area_mask(self, values: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Per-area bool array: areas matching EVERY value (substring of area, top or sub key)."""
        from retrieval.corpus import area_key

        ok = np.ones(len(self.area_names), dtype=np.bool_)
        for value in values:
            key = area_key(value)
            for i, keys in enumerate(self.area_keys):
                if ok[i] and not (key and any(key in k for k in keys)):
                    ok[i] = False
        return ok

    def author_docs(self, value: str) -> IntArray:
        """Sorted doc ids with an author whose normalised name contains ``value``'s."""
        from retrieval.corpus import normalize_name

        needle = " ".join(normalize_name(value).split())
        joined, starts, indptr, docs = self._author_table()
        if not needle:
            return np.zeros(0, dtype=np.int32)
        found: set[int] = set()
        pos = joined.find(needle)
        while pos >= 0:
            author = int(np.searchsorted(starts, pos, side="right") - 1)
            found.add(author)
            pos = joined.find(needle, pos + 1)
        if not found:
            return np.zeros(0, dtype=np.int32)
        parts = [docs[indptr[a] : indptr[a + 1]] for a in found]
        return np.unique(np.concatenate(parts)).astype(np.int32)

    def arrays(self) -> dict[str, np.ndarray]:
        """The index arrays by name (read-only views), as saved in the cache."""
        return dict(self._arrays)


# --------------------------------------------------------------------------------------------------
# Building


def _report_progress(progress: Progress | None, stage: str, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)


def build_index(
    papers: Sequence[Paper],
    params: BM25Params | None = None,
    *,
    progress: Progress | None = None,
    use_rank_bm25: bool | None = None,
    fingerprint: str = "",
) -> Index:
    """Tokenize papers and build the served index.

    Args:
        papers: The papers, in corpus order (ties in ranking break by this order).
        params: Ranking parameters (default BM25Okapi k1=1.5 b=0.75 epsilon=0.25).
        progress: ``progress(stage, done, total)`` for the ``"tokenize"`` and ``"index"`` stages.
        use_rank_bm25: Take idf/avgdl/doc_len from a real rank-bm25 model (default: when the corpus
            has at most :data:`RANK_BM25_MAX_DOCS` papers); otherwise compute the identical values here.
        fingerprint: Stored on the index (set by :func:`open_index`).

    Returns:
        The index.

    Raises:
        CorpusError: No papers.
    """
    params = params or BM25Params()
    started = time.perf_counter()
    papers = tuple(papers)
    n = len(papers)
    if n == 0:
        raise CorpusError("the corpus has no papers to index")
    if use_rank_bm25 is None:
        use_rank_bm25 = n <= RANK_BM25_MAX_DOCS

    vocab: dict[str, int] = {}
    add = vocab.setdefault
    # Surface word -> (index term ids, phrase term ids), so each distinct word is analysed and
    # mapped to ids once; ids are assigned in first-appearance order = rank-bm25's dict order.
    surface_ids: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def ids_of(surface: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        index_tokens, phrase_tokens = analyze_word(surface)
        entry = (
            tuple([add(t, len(vocab)) for t in index_tokens]),
            tuple([vocab[t] for t in phrase_tokens]),
        )
        surface_ids[surface] = entry
        return entry

    tokens_flat = array("i")
    stream = array("i")
    doc_len = array("q")
    doc_start = array("q", [0])
    docs_ids: list[list[int]] | None = [] if use_rank_bm25 else None
    step = max(1, n // 100)
    get = surface_ids.get
    _report_progress(progress, "tokenize", 0, n)
    for i, paper in enumerate(papers):
        doc: list[int] = []
        for field in (paper.title, paper.abstract):
            phrase: list[int] = []
            for surface in surface_words(field):
                entry = get(surface) or ids_of(surface)
                doc += entry[0]
                phrase += entry[1]
            stream.extend(phrase)
            stream.append(-1)  # a gap: phrases never span title/abstract or two papers
        tokens_flat.extend(doc)
        doc_len.append(len(doc))
        doc_start.append(len(stream))
        if docs_ids is not None:
            docs_ids.append(doc)
        if (i + 1) % step == 0 or i + 1 == n:
            _report_progress(progress, "tokenize", i + 1, n)
    surface_ids.clear()

    total_steps = 5
    _report_progress(progress, "index", 0, total_steps)
    n_terms = len(vocab)
    terms = list(vocab)
    vocab.clear()
    token_ids = np.frombuffer(tokens_flat, dtype=np.int32)
    lengths = np.frombuffer(doc_len, dtype=np.int64)
    doc_of_token = np.repeat(np.arange(n, dtype=np.int64), lengths)
    # (term, doc) pairs sorted term-major, doc ascending; counts are the term frequencies.
    keys = token_ids.astype(np.int64) * n + doc_of_token
    del doc_of_token
    keys, tf = np.unique(keys, return_counts=True)
    del tokens_flat, token_ids
    post_terms = keys // n
    post_docs = (keys - post_terms * n).astype(np.int32)
    del keys
    df = np.bincount(post_terms, minlength=n_terms)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    _report_progress(progress, "index", 1, total_steps)

    if docs_ids is not None:
        # rank-bm25 is given the very token lists that tokenize() yields for each paper.
        model = params.rank_bm25_model([[terms[t] for t in doc] for doc in docs_ids])
        del docs_ids
        idf_values = [model.idf[t] for t in terms]
        avgdl = float(model.avgdl)
        model_len = np.asarray(model.doc_len, dtype=np.int64)
        if not np.array_equal(model_len, lengths):  # pragma: no cover - would be a tokenizer bug
            raise AssertionError("document lengths differ from rank-bm25's")
        del model
    else:
        idf_values = _idf_like_rank_bm25(params, df.tolist(), n)
        avgdl = int(lengths.sum()) / n  # rank-bm25: num_doc / corpus_size
    idf = np.asarray(idf_values, dtype=np.float64)
    _report_progress(progress, "index", 2, total_steps)

    dl = lengths[post_docs]
    with np.errstate(divide="ignore", invalid="ignore"):
        impact = _impacts(params, tf.astype(np.int64), dl, np.repeat(idf, df), avgdl if avgdl else 1.0)
    del dl, tf, post_terms
    baseline = _baselines(params, idf)
    _report_progress(progress, "index", 3, total_steps)

    stream_arr = np.frombuffer(stream, dtype=np.int32).copy()
    del stream
    order = np.argsort(stream_arr, kind="stable")
    sentinels = int(np.count_nonzero(stream_arr < 0))
    pos_dtype = np.int32 if len(stream_arr) < 2**31 else np.int64
    positions = order[sentinels:].astype(pos_dtype)
    del order
    pos_counts = np.bincount(stream_arr[stream_arr >= 0], minlength=n_terms)
    pos_indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(pos_counts, out=pos_indptr[1:])
    del stream_arr
    _report_progress(progress, "index", 4, total_steps)

    arrays: dict[str, np.ndarray] = {
        "indptr": indptr,
        "post_docs": post_docs,
        "post_impact": impact,
        "idf": idf,
        "baseline": baseline,
        "doc_len": lengths.astype(np.int32),
        "doc_start": np.frombuffer(doc_start, dtype=np.int64).copy(),
        "pos_indptr": pos_indptr,
        "positions": positions,
    }
    index = Index(
        papers=papers,
        params=params,
        terms=terms,
        arrays=arrays,
        avgdl=avgdl,
        fingerprint=fingerprint,
        built_at=time.time(),
        build_seconds=time.perf_counter() - started,
    )
    _report_progress(progress, "index", total_steps, total_steps)
    return index


# --------------------------------------------------------------------------------------------------
# Cache


def _loader_version() -> str:
    """A hash of the parser and text-helper sources: papers (titles, ids, areas) are cached, so a
    change in how they are derived must invalidate the cache even without a version bump."""
    import retrieval.corpus
    import retrieval.text

    h = hashlib.blake2b(digest_size=8)
    for module in (retrieval.corpus, retrieval.text):
        source = getattr(module, "__file__", None)
        try:
            h.update(Path(source).read_bytes() if source else module.__name__.encode())
        except OSError:
            h.update(module.__name__.encode())
    return h.hexdigest()


def corpus_fingerprint(files: Sequence[Path], params: BM25Params) -> str:
    """Fingerprint of a corpus + settings: file names, sizes, mtimes and content (BLAKE2b), the
    tokenizer version, the parser's source, the cache format and the ranking parameters.

    Hashing the content costs about 0.1 s per 100 MB (the files are read again by the parser, from
    the page cache); it catches edits that keep size and mtime.
    """
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{CACHE_FORMAT}\0{TOKENIZER_VERSION}\0{_loader_version()}\0{params.key()}\0".encode())
    for path in files:
        st = path.stat()
        h.update(f"{path.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def cache_path_for(corpus_path: Path, params: BM25Params, cache_dir: Path | None = None) -> Path:
    """Where the cache file of a corpus lives.

    ``cache_dir`` when given (and writable), else ``.paperbot-index/`` beside the corpus, else (a
    read-only corpus folder) a per-user folder in the temp dir. The name combines the corpus name,
    a hash of its absolute path and the parameters, so corpora and settings never collide.
    """
    corpus_path = Path(corpus_path).expanduser().resolve()
    tag = hashlib.blake2b(str(corpus_path).encode(), digest_size=6).hexdigest()
    name = f"{corpus_path.name or 'corpus'}-{tag}-{params.key()}.npz"
    candidates: list[Path] = []
    if cache_dir is not None:
        candidates.append(Path(cache_dir).expanduser())
    else:
        candidates.append(corpus_path.parent / ".paperbot-index")
    candidates.append(Path(tempfile.gettempdir()) / f"paperbot-index-{os.getuid()}")
    for folder in candidates:
        if _writable_dir(folder):
            return folder / name
    return candidates[-1] / name


def paper_row(paper: Paper) -> list[Any]:
    """A paper as a JSON-ready row (the cache file and the bot's index worker store papers so)."""
    return [paper.id, paper.title, list(paper.authors), paper.et_al, paper.area, paper.abstract, paper.url,
            paper.source]  # fmt: skip


def paper_from_row(row: Sequence[Any]) -> Paper:
    """The paper of a :func:`paper_row` (author names and areas interned: they repeat a lot)."""
    return Paper(
        id=row[0], title=row[1], authors=tuple(map(intern, row[2])), et_al=bool(row[3]), area=intern(row[4]),
        abstract=row[5], url=row[6], source=row[7],
    )  # fmt: skip


def _save(index: Index, path: Path, meta: dict[str, Any]) -> None:
    """Write the cache atomically: a temp file in the same folder, then os.replace."""
    members: dict[str, np.ndarray] = dict(index.arrays())
    members["terms"] = np.frombuffer("\n".join(index.terms).encode("utf-8"), dtype=np.uint8)
    paper_rows = [paper_row(p) for p in index.papers]
    members["papers"] = np.frombuffer(
        json.dumps(paper_rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), dtype=np.uint8
    )
    members["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **members)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _BadCache(Exception):
    pass


def _read_member(z: zipfile.ZipFile, name: str) -> np.ndarray:
    """One array of the (uncompressed) npz in a single read, without a copy: ``np.load`` reads zip
    members in small chunks and copies them, which is 3x slower. The zip layer still checks the
    member's CRC-32 when the read reaches its end, so a damaged cache is detected."""
    with z.open(name + ".npy") as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unsupported npy version {version}")
        if fortran or dtype.hasobject or len(shape) != 1:
            raise ValueError(f"unexpected array layout in {name}")
        raw = fh.read()
    count = shape[0]
    if len(raw) != count * dtype.itemsize:
        raise ValueError(f"{name}: {len(raw)} bytes for {count} items")
    return np.frombuffer(raw, dtype=dtype, count=count)


def _load(path: Path, fingerprint: str, params: BM25Params) -> tuple[Index, dict[str, Any]]:
    """Read and validate a cache file; raise _BadCache (with the reason) when it cannot be used."""
    try:
        with zipfile.ZipFile(path) as z:
            names = {n.removesuffix(".npy") for n in z.namelist()}
            if "meta" not in names:
                raise _BadCache("not a paperbot index")
            meta = json.loads(_read_member(z, "meta").tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
                raise _BadCache("written by another version")
            if meta.get("fingerprint") != fingerprint:
                raise _BadCache("stale (the corpus, tokenizer or parameters changed)")
            corpus_meta = meta.get("corpus")
            if not isinstance(corpus_meta, dict) or not all(
                isinstance(corpus_meta.get(key), list)
                for key in ("files", "duplicate_details", "skipped")
            ):
                raise _BadCache("damaged (corpus summary)")
            float(meta["avgdl"]), float(meta["built_at"]), float(meta["build_seconds"])
            int(corpus_meta["duplicates"])
            meta["skipped_blocks"] = tuple(
                SkippedBlock(str(f), int(line), str(why)) for f, line, why in corpus_meta["skipped"]
            )
            data = {name: _read_member(z, name) for name in names}
    except _BadCache:
        raise
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise _BadCache(f"unreadable ({type(exc).__name__}: {exc})") from exc
    try:
        rows = json.loads(data.pop("papers").tobytes().decode("utf-8"))
        papers = tuple(map(paper_from_row, rows))
        text = data.pop("terms").tobytes().decode("utf-8")
        terms = text.split("\n") if text else []
        data.pop("meta")
        arrays = {name: data[name] for name in _ARRAY_SPECS}
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError) as exc:
        raise _BadCache(f"damaged ({type(exc).__name__}: {exc})") from exc
    _validate(arrays, len(papers), len(terms))
    index = Index.from_saved(papers=papers, params=params, terms=terms, arrays=arrays, meta=meta)
    return index, meta


_ARRAY_SPECS: dict[str, tuple[str, ...]] = {
    "indptr": ("i",),
    "post_docs": ("i",),
    "post_impact": ("f",),
    "idf": ("f",),
    "baseline": ("f",),
    "doc_len": ("i",),
    "doc_start": ("i",),
    "pos_indptr": ("i",),
    "positions": ("i",),
}


def _validate(arrays: dict[str, np.ndarray], n_docs: int, n_terms: int) -> None:
    """Cheap structural checks so a damaged cache is rebuilt instead of crashing a search later."""

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise _BadCache(f"damaged ({what})")

    for name, (kind,) in _ARRAY_SPECS.items():
        arr = arrays[name]
        need(arr.ndim == 1 and arr.dtype.kind == kind, f"{name} has the wrong type")
    a = arrays
    need(n_docs > 0, "no papers")
    need(len(a["indptr"]) == n_terms + 1 and len(a["pos_indptr"]) == n_terms + 1, "vocabulary size")
    need(len(a["idf"]) == n_terms and len(a["baseline"]) == n_terms, "idf size")
    need(int(a["indptr"][0]) == 0 and int(a["indptr"][-1]) == len(a["post_docs"]), "postings size")
    need(len(a["post_impact"]) == len(a["post_docs"]), "impacts size")
    need(bool(np.all(np.diff(a["indptr"]) >= 0)), "postings order")
    need(len(a["doc_len"]) == n_docs and len(a["doc_start"]) == n_docs + 1, "document count")
    need(int(a["pos_indptr"][-1]) == len(a["positions"]), "positions size")
    if len(a["post_docs"]):
        need(0 <= int(a["post_docs"].min()) and int(a["post_docs"].max()) < n_docs, "doc ids")
    if len(a["positions"]):
        low, high = int(a["positions"].min()), int(a["positions"].max())
        need(0 <= low and high < int(a["doc_start"][-1]), "positions")
    need(bool(np.all(np.diff(a["doc_start"]) >= 0)), "document starts")


def open_index(
    corpus_path: str | Path,
    params: BM25Params | None = None,
    *,
    cache_dir: Path | None = None,
    previous: Index | None = None,
    progress: Progress | None = None,
) -> tuple[Index, IngestReport]:
    """Load the index of a corpus from its cache, or build it (and save the cache).

    Args:
        corpus_path: A corpus file or folder.
        params: Ranking parameters (default BM25Okapi k1=1.5 b=0.75 epsilon=0.25).
        cache_dir: Folder for the cache file (default: ``.paperbot-index/`` beside the corpus, or a
            temp folder when that is read-only).
        previous: The index being replaced; the report lists ids added/removed relative to it. It is
            never modified.
        progress: ``progress(stage, done, total)`` with stages ``"parse"``, ``"tokenize"``, ``"index"``;
            called about every 1 %.

    Returns:
        The new index and the ingest report.

    Raises:
        CorpusError: The corpus cannot be read (missing, empty, nothing parseable).
    """
    from retrieval.corpus import corpus_files, load_corpus

    params = params or BM25Params()
    started = time.perf_counter()
    path = Path(corpus_path).expanduser()
    _report_progress(progress, "parse", 0, 1)
    files = corpus_files(path)
    fingerprint = corpus_fingerprint(files, params)
    cache_file = cache_path_for(path, params, cache_dir)

    index: Index | None = None
    meta: dict[str, Any] = {}
    if cache_file.exists():
        try:
            index, meta = _load(cache_file, fingerprint, params)
        except _BadCache as exc:
            log.warning("index cache %s is %s; rebuilding it", cache_file, exc)
    if index is not None:
        _report_progress(progress, "parse", 1, 1)
        corpus_meta = meta["corpus"]
        report = _report(
            index,
            previous,
            files=tuple(corpus_meta["files"]),
            duplicates=int(corpus_meta["duplicates"]),
            duplicate_details=tuple(corpus_meta["duplicate_details"]),
            skipped=meta["skipped_blocks"],
            build_seconds=0.0,
            from_cache=True,
            extra={"cache": str(cache_file), "load_seconds": time.perf_counter() - started},
        )
        return index, report

    corpus = load_corpus(path)
    _report_progress(progress, "parse", 1, 1)
    index = build_index(corpus.papers, params, progress=progress, fingerprint=fingerprint)
    corpus_meta = {
        "files": list(corpus.files),
        "duplicates": corpus.duplicates,
        "duplicate_details": list(corpus.duplicate_details),
        "skipped": [[s.path, s.line, s.reason] for s in corpus.skipped],
    }
    meta = {
        "format": CACHE_FORMAT,
        "fingerprint": fingerprint,
        "tokenizer": TOKENIZER_VERSION,
        "params": params.key(),
        "avgdl": index.avgdl,
        "built_at": index.built_at,
        "build_seconds": index.build_seconds,
        "corpus": corpus_meta,
    }
    extra: dict[str, object] = {"cache": str(cache_file)}
    try:
        _save(index, cache_file, meta)
    except OSError as exc:
        log.warning("could not save the index cache to %s: %s", cache_file, exc)
        extra["cache"] = None
    report = _report(
        index,
        previous,
        files=tuple(corpus.files),
        duplicates=corpus.duplicates,
        duplicate_details=tuple(corpus.duplicate_details),
        skipped=tuple(corpus.skipped),
        build_seconds=time.perf_counter() - started,
        from_cache=False,
        extra=extra,
    )
    return index, report


def id_diff(
    papers: Sequence[Paper], previous: Index | None
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """``(added ids, removed ids, unchanged count)`` of ``papers`` against the index they replace.

    Without a previous index every paper is added. Ids keep corpus order.
    """
    ids = [p.id for p in papers]
    if previous is None:
        return tuple(ids), (), 0
    old = {p.id for p in previous.papers}
    new = set(ids)
    added = tuple(i for i in ids if i not in old)
    removed = tuple(p.id for p in previous.papers if p.id not in new)
    return added, removed, len(new & old)


def _report(index: Index, previous: Index | None, **fields: Any) -> IngestReport:
    added, removed, unchanged = id_diff(index.papers, previous)
    extra = dict(fields.pop("extra", {}))
    extra.update(terms=len(index.terms), postings=int(len(index.post_docs)))
    return IngestReport(
        papers=len(index.papers), added=added, removed=removed, unchanged=unchanged, extra=extra, **fields
    )
