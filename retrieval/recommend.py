"""Recommendations from a reading list: the papers most like a set of saved papers.

The method (chosen by ``bench/recommend.py`` on ICLR 2024, sub-areas as ground truth; the figures are
in docs/benchmarks.md) is a Rocchio-style profile queried through the BM25 index:

1. each saved paper becomes the vector of its BM25 term weights (the index's idf times its term
   frequency saturated by ``k1`` and length-normalised by ``b``, in BM25Okapi's form), L2-normalised,
   so a long abstract weighs no more than a short one;
2. the profile is the mean of those vectors: words the saved papers *share* add up, words only one
   of them uses are diluted;
3. its heaviest terms (at most :data:`PROFILE_TERMS`, and no more postings than
   :data:`POSTINGS_BUDGET` allows) are a weighted BM25 query: a paper scores
   ``sum(weight[t] * impact[t, paper])``, with the index's own BM25 contributions (``postings``);
4. saved papers (all of them, not only the list's) are never recommended; each recommendation names
   the saved paper it is most like (the one whose vector agrees most with it on the query terms), for
   a "because you saved …" line.

Everything here is synchronous and pure (numpy over the served index, no I/O). A saved paper's
vector comes from its own text (tokenised with the index's analyzer, counted, weighted with the
index's idf and the paper's length), never from walking the postings, so a first (cold) call costs
about as much as a warm one; :class:`ProfileCache` keeps vectors between calls.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from retrieval.models import Paper

if TYPE_CHECKING:
    from retrieval.index import Index

__all__ = ["POSTINGS_BUDGET", "PROFILE_TERMS", "ProfileCache", "Recommendation", "paper_vectors", "recommend"]

#: Most profile terms in the query (bench/recommend.py on ICLR 2024: 30, 60 and 120 terms measure
#: alike, 0.334 / 0.333 / 0.335; 60 keeps room for broader lists).
PROFILE_TERMS = 60
#: Most postings the query may walk, as a fraction of the index's (with a floor): keeps a profile of
#: very common words (a list of unrelated papers) within the latency target at 100k papers (warm p50
#: 24 -> 6 ms from 5 % to 1 % in one run); the floor means it never binds on a corpus of ICLR's size.
POSTINGS_BUDGET = 0.01
POSTINGS_FLOOR = 50_000
#: Most saved papers a profile is built from (the newest ones).
MAX_PROFILE_PAPERS = 200

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
#: A paper's vector: ascending term ids and their L2-normalised weights.
Vector = tuple[IntArray, FloatArray]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One recommended paper.

    Attributes:
        paper: The paper.
        score: Its profile score (higher is closer; only comparable within one call).
        rank: 1-based position.
        because: The id of the saved paper it is most like.
    """

    paper: Paper
    score: float
    rank: int
    because: str


def _normalised(tids: IntArray, weights: FloatArray) -> Vector:
    order = np.argsort(tids, kind="stable")
    tids, weights = tids[order], weights[order]
    norm = float(np.sqrt(np.dot(weights, weights))) or 1.0
    return tids, weights / norm


def _weights(
    index: Index, tids: IntArray, docs: npt.NDArray[np.integer], tf: npt.NDArray[np.integer]
) -> FloatArray:
    """BM25Okapi-form weights of terms ``tids`` in docs ``docs`` with frequencies ``tf`` (idf from
    the index, whatever its variant; every weight is positive for a term the doc holds)."""
    k1, b = index.params.k1, index.params.b
    norm = k1 * (1 - b + b * index.doc_len[docs].astype(np.float64) / (index.avgdl or 1.0))
    freq = tf.astype(np.float64)
    return np.abs(index.idf[tids]) * (freq * (k1 + 1) / (freq + norm))


def _vector_by_tokens(index: Index, pos: int) -> Vector | None:
    """One paper's vector from its own text: its tokens (the analyzer the index was built with)
    counted into term frequencies, with the index's idf and the paper's length. No postings are
    read. ``None`` when the tokens disagree with the index (a token it lacks, or a count that is not
    the paper's length: an index built by another analyzer version)."""
    from retrieval.index import paper_tokens

    vocab = index.vocab
    counts: dict[int, int] = {}
    for token in paper_tokens(index.papers[pos]):
        tid = vocab.get(token)
        if tid is None:
            return None
        counts[tid] = counts.get(tid, 0) + 1
    if sum(counts.values()) != int(index.doc_len[pos]):
        return None
    tids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    tf = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    weights = _weights(index, tids, np.full(len(tids), pos), tf)
    keep = weights > 0
    return _normalised(tids[keep], weights[keep])


def _vectors_by_scan(index: Index, positions: Sequence[int]) -> dict[int, Vector]:
    """Papers' vectors from one pass over every posting (exact whatever the analyzer, but it walks
    all the postings: ~12M at 100k papers). Only for papers whose tokens disagree with the index."""
    member = np.zeros(len(index), dtype=np.bool_)
    member[list(positions)] = True
    at = np.flatnonzero(member[index.post_docs])
    tids = np.searchsorted(index.indptr, at, side="right") - 1
    docs = index.post_docs[at]
    weights = _weights(index, tids, docs, index.core.post_tf[at])
    order = np.argsort(docs, kind="stable")
    docs, tids, weights = docs[order], tids[order], weights[order]
    bounds = np.searchsorted(docs, np.asarray(sorted(set(positions))), side="left")
    out: dict[int, Vector] = {}
    ends = [*bounds[1:].tolist(), len(docs)]
    for pos, lo, hi in zip(sorted(set(positions)), bounds.tolist(), ends, strict=True):
        keep = weights[lo:hi] > 0
        out[pos] = _normalised(tids[lo:hi][keep], weights[lo:hi][keep])
    return out


def paper_vectors(index: Index, positions: Sequence[int]) -> dict[int, Vector]:
    """The vectors of the papers at ``positions``, each from its own text (a few hundred µs a
    paper); a paper whose tokens disagree with the index falls back to the postings pass."""
    out: dict[int, Vector] = {}
    disagree: list[int] = []
    for pos in dict.fromkeys(positions):
        vector = _vector_by_tokens(index, pos)
        if vector is None:
            disagree.append(pos)
        else:
            out[pos] = vector
    if disagree:
        out.update(_vectors_by_scan(index, disagree))
    return out


class ProfileCache:
    """Paper vectors by position for one index (keyed by the index object: a reindex gives a new
    index, hence a fresh cache). Bounded, least recently used first out."""

    def __init__(self, index: Index, size: int = 4096) -> None:
        self.index = index
        self.size = size
        self._vectors: dict[int, Vector] = {}
        self._lock = threading.Lock()  # calls run in worker threads

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, positions: Sequence[int]) -> list[Vector]:
        """The vectors of ``positions``, computing only the missing ones (outside the lock)."""
        with self._lock:
            missing = [p for p in positions if p not in self._vectors]
        fresh = paper_vectors(self.index, missing) if missing else {}
        out = []
        with self._lock:
            for pos in positions:
                vector = self._vectors.pop(pos, None) or fresh.get(pos)
                if vector is None:  # evicted by another thread meanwhile: cheap to redo for one
                    vector = paper_vectors(self.index, [pos])[pos]
                self._vectors[pos] = vector  # most recently used last
                out.append(vector)
            while len(self._vectors) > self.size:
                self._vectors.pop(next(iter(self._vectors)))
        return out


def _profile(index: Index, vectors: Sequence[Vector], n_terms: int) -> tuple[IntArray, FloatArray]:
    """The mean vector's heaviest terms (ties by term id), within the postings budget."""
    tids = np.concatenate([v[0] for v in vectors])
    weights = np.concatenate([v[1] for v in vectors])
    if not len(tids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    terms, inverse = np.unique(tids, return_inverse=True)
    total = np.zeros(len(terms), dtype=np.float64)
    np.add.at(total, inverse, weights)
    order = np.lexsort((terms, -total))
    df = (index.indptr[terms[order] + 1] - index.indptr[terms[order]]).astype(np.int64)
    budget = max(POSTINGS_FLOOR, int(POSTINGS_BUDGET * len(index.post_docs)))
    fits = np.cumsum(df) <= budget
    fits[0] = True  # the heaviest term always counts
    chosen = order[fits][:n_terms]
    return terms[chosen], total[chosen] / len(vectors)


def recommend(
    index: Index,
    saved_ids: Sequence[str],
    k: int = 10,
    *,
    exclude: Iterable[str] = (),
    cache: ProfileCache | None = None,
    n_terms: int = PROFILE_TERMS,
) -> list[Recommendation]:
    """The ``k`` papers most like the papers ``saved_ids`` (in saving order, newest last).

    Args:
        index: The served index.
        saved_ids: The reading list's paper ids; ids the index no longer has are ignored (a saved
            paper may have left the corpus), and only the newest :data:`MAX_PROFILE_PAPERS` count.
        k: How many recommendations, 1..100.
        exclude: More ids never to recommend (the user's other saved papers); ``saved_ids`` are
            always excluded.
        cache: Paper vectors kept between calls (must belong to ``index``).
        n_terms: Most profile terms in the query.

    Returns:
        Up to ``k`` recommendations, best first; fewer when fewer papers share a profile term, none
        when no saved paper is in the index.

    Raises:
        ValueError: ``k`` out of range, or ``cache`` made for another index.
    """
    if not 1 <= k <= 100:
        raise ValueError(f"k must be between 1 and 100, not {k}")
    if cache is not None and cache.index is not index:
        raise ValueError("the profile cache belongs to another index")
    positions: list[int] = []
    for pid in list(saved_ids)[-MAX_PROFILE_PAPERS:]:
        pos = index.position(pid) if isinstance(pid, str) else None
        if pos is not None and pos not in positions:
            positions.append(pos)
    if not positions:
        return []
    if cache is not None:
        vectors = cache.vectors(positions)
    else:
        found = paper_vectors(index, positions)
        vectors = [found[p] for p in positions]
    query_tids, query_weights = _profile(index, vectors, n_terms)
    if not len(query_tids):
        return []
    scores = np.zeros(len(index), dtype=np.float64)
    spans: list[tuple[IntArray, FloatArray]] = []
    for tid, weight in zip(query_tids.tolist(), query_weights.tolist(), strict=True):
        docs, impacts = index.postings(tid)  # the index's own BM25 contributions of the term
        scores[docs] += weight * impacts
        spans.append((docs, impacts))
    scores[positions] = 0.0
    for pid in exclude:
        pos = index.position(pid) if isinstance(pid, str) else None
        if pos is not None:
            scores[pos] = 0.0
    candidates = np.flatnonzero(scores > 0)
    if not len(candidates):
        return []
    chosen = candidates[_top(scores[candidates], k)]
    because = _because(query_tids, vectors, spans, chosen)
    return [
        Recommendation(
            paper=index.papers[int(doc)],
            score=float(scores[doc]),
            rank=i + 1,
            because=index.papers[positions[because[i]]].id,
        )
        for i, doc in enumerate(chosen.tolist())
    ]


def _top(values: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.int64]:
    """Indices of the ``k`` largest values, largest first; ties keep their order (corpus order)."""
    if len(values) > k:
        part = np.argpartition(-values, k - 1)[:k]
        cut = values[part].min()
        part = np.flatnonzero(values >= cut)  # every tie at the cut, so the order below is stable
    else:
        part = np.arange(len(values))
    order = np.lexsort((part, -values[part]))
    return part[order][:k]


def _because(
    query_tids: IntArray,
    vectors: Sequence[Vector],
    spans: list[tuple[IntArray, FloatArray]],
    chosen: IntArray,
) -> list[int]:
    """Per chosen doc, the index of the saved paper whose vector agrees most with it on the query
    terms (``sum over t of vector[t] * impact[t, doc]``); ties go to the newest saved paper."""
    saved = np.zeros((len(vectors), len(query_tids)), dtype=np.float64)  # S x T
    for row, (tids, weights) in enumerate(vectors):
        at = np.searchsorted(tids, query_tids)
        inside = at < len(tids)
        found = np.zeros(len(query_tids), dtype=np.bool_)
        found[inside] = tids[at[inside]] == query_tids[inside]
        saved[row, found] = weights[at[found]]
    impacts = np.zeros((len(query_tids), len(chosen)), dtype=np.float64)  # T x R
    for row, (docs, contributions) in enumerate(spans):
        at = np.searchsorted(docs, chosen)
        inside = at < len(docs)
        found = np.zeros(len(chosen), dtype=np.bool_)
        found[inside] = docs[at[inside]] == chosen[inside]
        impacts[row, found] = contributions[at[found]]
    agreement = saved @ impacts  # S x R
    newest_first = agreement[::-1]  # argmax takes the first maximum: the newest saved paper wins ties
    return [len(vectors) - 1 - int(i) for i in np.argmax(newest_first, axis=0)]
