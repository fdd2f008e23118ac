"""The postings-and-scoring core of the index: BM25 parameters, per-(term, doc) impacts, phrase positions.

Layout (numpy arrays, immutable, memory-mapped from the cache file when served; shared read-only
between threads):

* ``terms``/``vocab``: term <-> term id, ids in order of first appearance in the corpus (rank-bm25's
  order).
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

Nothing here knows about papers' text, areas or authors (that is :mod:`retrieval.catalogue`), nor
about queries (:mod:`retrieval.search`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import rank_bm25

__all__ = ["ARRAYS", "BM25Params", "Postings", "RANK_BM25_MAX_DOCS"]

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

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
        import rank_bm25  # only builds need it: a served index opens without importing it

        if self.variant == "okapi":
            return rank_bm25.BM25Okapi(corpus, k1=self.k1, b=self.b, epsilon=self.epsilon)
        if self.variant == "l":
            return rank_bm25.BM25L(corpus, k1=self.k1, b=self.b, delta=self.effective_delta)
        return rank_bm25.BM25Plus(corpus, k1=self.k1, b=self.b, delta=self.effective_delta)


# --------------------------------------------------------------------------------------------------
# Statistics and impacts


def idf_like_rank_bm25(params: BM25Params, df: Sequence[int], n_docs: int) -> list[float]:
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


def bm25_impacts(
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


def baselines(params: BM25Params, idf: FloatArray) -> FloatArray:
    """What each term adds to a doc WITHOUT it: BM25Plus ``idf * (delta + 0/x)``; 0 for Okapi and
    BM25L (whose expression is multiplied by the term frequency)."""
    if params.variant == "plus":
        return idf * (params.effective_delta + 0.0)
    return np.zeros_like(idf)


# --------------------------------------------------------------------------------------------------
# The core

#: The core's arrays and their kinds ("i" integer, "f" float), as the cache file stores them.
ARRAYS: dict[str, str] = {
    "indptr": "i",
    "post_docs": "i",
    "post_impact": "f",
    "idf": "f",
    "baseline": "f",
    "doc_len": "i",
    "doc_start": "i",
    "pos_indptr": "i",
    "positions": "i",
}


class Postings:
    """An immutable, thread-safe BM25 scoring core over ``n_docs`` documents (numbered 0..n-1).

    Args:
        params: The ranking parameters the impacts were computed with.
        terms: The vocabulary, by term id.
        arrays: The arrays of :data:`ARRAYS` (numpy arrays or read-only memory maps).
        avgdl: rank-bm25's average document length.
    """

    def __init__(
        self, *, params: BM25Params, terms: list[str], arrays: dict[str, np.ndarray], avgdl: float
    ) -> None:
        self.params = params
        self.terms = terms
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(terms)}
        self.avgdl = avgdl
        for name in ARRAYS:
            if arrays[name].flags.writeable:
                arrays[name].flags.writeable = False
        self._arrays = {name: arrays[name] for name in ARRAYS}
        self.indptr: npt.NDArray[np.int64] = arrays["indptr"]
        self.post_docs: IntArray = arrays["post_docs"]
        self.post_impact: FloatArray = arrays["post_impact"]
        self.idf: FloatArray = arrays["idf"]
        self.baseline: FloatArray = arrays["baseline"]
        self.doc_len: IntArray = arrays["doc_len"]
        self.doc_start: npt.NDArray[np.int64] = arrays["doc_start"]
        self.pos_indptr: npt.NDArray[np.int64] = arrays["pos_indptr"]
        self.positions: IntArray = arrays["positions"]
        self.n_docs = len(self.doc_len)
        self.has_baseline = bool(np.any(self.baseline != 0))

    def __len__(self) -> int:
        return self.n_docs

    def arrays(self) -> dict[str, np.ndarray]:
        """The core's arrays by name (read-only), as saved in the cache."""
        return dict(self._arrays)

    def df(self, term: str) -> int:
        """How many documents hold ``term`` (0 for an unknown term)."""
        tid = self.vocab.get(term)
        return 0 if tid is None else int(self.indptr[tid + 1] - self.indptr[tid])

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
        scores = np.zeros(self.n_docs, dtype=np.float64)
        hit = np.zeros(self.n_docs, dtype=np.bool_) if self.has_baseline else None
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
            return np.arange(self.n_docs, dtype=np.int32)
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
