"""The postings-and-scoring core of the index: BM25 parameters, per-(term, doc) impacts, phrase positions.

Layout (numpy arrays, immutable, memory-mapped from the cache file when served; shared read-only
between threads):

* ``terms``/``vocab``: term <-> term id, ids in order of first appearance in the corpus (rank-bm25's
  order).
* postings, CSR by term: ``indptr[t]:indptr[t+1]`` slices ``post_docs`` (int32, ascending doc ids)
  and ``post_tf`` (the term's frequency in that doc, uint16 unless a count needs more). A term's
  BM25 contributions are computed when it is queried, with exactly rank-bm25's floating-point
  expression (the per-doc length normalisation is precomputed with the same operations), so summing
  them in query order reproduces ``get_scores`` bit for bit. Storing the frequency instead of a
  float64 impact keeps the postings a third of the size: they are what a serving process pages in.
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

import logging
import math
import re
import threading
import warnings
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import rank_bm25

__all__ = ["ARRAYS", "BM25Params", "Postings", "KERNEL_UNAVAILABLE", "RANK_BM25_MAX_DOCS", "compiled_kernel"]

log = logging.getLogger(__name__)

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
    "post_tf": "u",
    "idf": "f",
    "baseline": "f",
    "doc_len": "i",
    "doc_start": "i",
    "pos_indptr": "i",
    "positions": "i",
    # The vocabulary (see :class:`Vocabulary`).
    "terms": "u",
    "vocab_hash": "i",
    # Dynamic pruning (see :func:`pruning_arrays`).
    "long_slot": "i",
    "long_bits": "u",
    "long_bmax": "f",
    "long_min": "f",
}

#: Documents per block of the block-max bounds: one 64-bit word of a long term's bitmap.
BLOCK_SHIFT = 6
BLOCK = 1 << BLOCK_SHIFT


def long_df_for(n_docs: int) -> int:
    """The document frequency from which a term is "long" (bitmap and block-max bounds): where its
    bitmap (n/8 bytes) is no bigger than its doc ids (4 bytes each)."""
    return max(1, -(-n_docs // 32))


def _length_norm(params: BM25Params, doc_len: np.ndarray, avgdl: float) -> FloatArray:
    """Per doc, the length part of rank-bm25's denominator, with its very operations:
    Okapi/Plus use k1 * (1 - b + b * dl / avgdl), BM25L uses (1 - b + b * dl / avgdl)."""
    k1, b = params.k1, params.b
    length = 1 - b + b * doc_len.astype(np.int64) / (avgdl if avgdl else 1.0)
    return length if params.variant == "l" else k1 * length


def _contributions(params: BM25Params, idf: Any, tf: np.ndarray, norm: FloatArray) -> FloatArray:
    """rank-bm25's per-document expression for one term (rank_bm25.py 0.2.2, get_scores):

    BM25Okapi:  idf * (f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl)))
    BM25L:      ctd = f / (1 - b + b * dl / avgdl);
                idf * f * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
    BM25Plus:   idf * (delta + (f * (k1 + 1)) / (k1 * (1 - b + b * dl / avgdl) + f))

    ``idf`` is a scalar or broadcasts against ``tf``; a frequency of 0 gives what rank-bm25 adds to
    a document without the term (0, or BM25Plus's ``idf * delta``).
    """
    k1 = params.k1
    with np.errstate(divide="ignore", invalid="ignore"):
        if params.variant == "okapi":
            return idf * (tf * (k1 + 1) / (tf + norm))
        delta = params.effective_delta
        if params.variant == "l":
            ctd = tf / norm
            return idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
        return idf * (delta + (tf * (k1 + 1)) / (norm + tf))


def placed(
    out: Mapping[str, np.ndarray] | None, name: str, dtype: np.dtype, shape: tuple[int, ...]
) -> np.ndarray | None:
    """The array ``out`` gives for ``name`` (the memory an array is to be made in, e.g. its place in
    the cache file's memory map), checked to be of this dtype and shape; None when it gives none.

    Raises:
        ValueError: The given array is of another dtype or shape.
    """
    given = None if out is None else out.get(name)
    if given is not None and (given.dtype != dtype or given.shape != shape):
        raise ValueError(f"the place given for {name} is not {shape} of {dtype}")
    return given


def pruning_arrays(
    arrays: dict[str, np.ndarray],
    params: BM25Params,
    avgdl: float,
    long_df: int | None = None,
    *,
    out: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The arrays that let :meth:`Postings.top` skip most of the long posting lists (built once).

    A term held by at least ``long_df`` documents (default :func:`long_df_for`) is *long*; for it:

    * ``long_slot[t]``: its row in the arrays below (-1 for a short term);
    * ``long_bits``: its bitmap over the documents (rows of ``ceil(n / 64)`` uint64 words, bit
      ``d & 63`` of word ``d >> 6``): hit counts and candidate blocks without reading the postings;
    * ``long_bmax``: per block of 64 documents, the largest *excess* contribution (what the term adds
      to a doc holding it beyond what it adds to one without: the contribution minus BM25Plus's
      baseline), at least 0, rounded up to float32 (rows of ``ceil(n / 64)``);
    * ``long_min``: its smallest excess contribution (float64), for lower bounds (< 0 only where
      BM25Okapi's idf floor is negative).

    ``out`` may give, by name, the memory to make them in (1-d, of their sizes: see
    :func:`pruning_sizes`); the values are the same.
    """
    indptr, post_docs, post_tf = arrays["indptr"], arrays["post_docs"], arrays["post_tf"]
    n = len(arrays["doc_len"])
    n_words = -(-n // 64)
    df = np.diff(indptr)
    long_terms = np.flatnonzero(df >= (long_df if long_df is not None else long_df_for(n)))
    sizes = pruning_sizes(df, n, long_df)

    def array(name: str) -> np.ndarray:
        dtype, count = sizes[name]
        given = placed(out, name, dtype, (count,))
        if given is None:
            return np.zeros(count, dtype=dtype)
        given.fill(0)
        return given

    slot = array("long_slot")
    slot.fill(-1)
    slot[long_terms] = np.arange(len(long_terms), dtype=np.int32)
    flat_bits, flat_bmax, low = array("long_bits"), array("long_bmax"), array("long_min")
    bits = flat_bits.reshape(len(long_terms), n_words)
    bmax = flat_bmax.reshape(len(long_terms), n_words)
    norm = _length_norm(params, arrays["doc_len"], avgdl)
    member = np.zeros(n_words * 64, dtype=np.bool_)
    for row, tid in enumerate(long_terms.tolist()):
        lo, hi = int(indptr[tid]), int(indptr[tid + 1])
        docs = post_docs[lo:hi]
        excess = _contributions(params, arrays["idf"][tid], post_tf[lo:hi], norm[docs])
        excess = excess - arrays["baseline"][tid]
        low[row] = excess.min()
        blocks = docs >> BLOCK_SHIFT
        starts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
        top = np.maximum(np.maximum.reduceat(excess, starts), 0.0)
        up = top.astype(np.float32)
        below = up.astype(np.float64) < top
        up[below] = np.nextafter(up[below], np.float32(np.inf))
        bmax[row, blocks[starts]] = up
        member[docs] = True
        bits[row] = np.packbits(member, bitorder="little").view(np.uint64)
        member[docs] = False
    return {"long_slot": slot, "long_bits": flat_bits, "long_bmax": flat_bmax, "long_min": low}


def pruning_sizes(df: np.ndarray, n_docs: int, long_df: int | None = None) -> dict[str, tuple[np.dtype, int]]:
    """The dtype and length of each of :func:`pruning_arrays`' arrays (from the terms' document
    frequencies), in their order."""
    n_long = int(np.count_nonzero(df >= (long_df if long_df is not None else long_df_for(n_docs))))
    n_words = -(-n_docs // 64)
    return {
        "long_slot": (np.dtype(np.int32), len(df)),
        "long_bits": (np.dtype(np.uint64), n_long * n_words),
        "long_bmax": (np.dtype(np.float32), n_long * n_words),
        "long_min": (np.dtype(np.float64), n_long),
    }


# --------------------------------------------------------------------------------------------------
# The vocabulary


def _encode(term: str) -> bytes:
    return term.encode("utf-8", "surrogatepass")


def vocabulary_arrays(terms: Sequence[str]) -> dict[str, np.ndarray]:
    """The vocabulary as stored: ``terms``, the terms' UTF-8 joined by newlines (term ids in order),
    and ``vocab_hash``, an open-addressing table (linear probing, a power of two at least twice the
    vocabulary) from ``crc32(term) & (size - 1)`` to the term id, -1 for an empty slot."""
    encoded = [_encode(t) for t in terms]
    blob = np.frombuffer(b"\n".join(encoded), dtype=np.uint8)
    size = 1 << max(4, (2 * len(encoded)).bit_length())
    probe = getattr(_kernel, "probe_table", None)
    if probe is None:
        return {"terms": blob, "vocab_hash": _probe_table(encoded, size)}
    table = np.full(size, -1, dtype=np.int32)
    probe(table, np.fromiter(map(zlib.crc32, encoded), dtype=np.uint32, count=len(encoded)))
    return {"terms": blob, "vocab_hash": table}


def _probe_table(encoded: Sequence[bytes], size: int) -> np.ndarray:
    """:func:`vocabulary_arrays`' table, term by term (the definition; the C kernel's
    ``probe_table`` fills the same table from the terms' CRCs)."""
    mask = size - 1
    table = [-1] * size
    crc = zlib.crc32
    for tid, raw in enumerate(encoded):
        h = crc(raw) & mask
        while table[h] >= 0:
            h = (h + 1) & mask
        table[h] = tid
    return np.asarray(table, dtype=np.int32)


_MEMO_MAX = 65_536
_UNSEEN = object()


class Vocabulary(Mapping[str, int]):
    """Term -> term id over the stored arrays (:func:`vocabulary_arrays`), without building a dict:
    opening an index reads nothing per term (one pass over the blob finds where each term starts),
    and a look-up is one CRC and about one probe."""

    def __init__(self, blob: npt.NDArray[np.uint8], table: npt.NDArray[np.int32], n_terms: int) -> None:
        self._bytes = memoryview(blob).cast("B") if len(blob) else memoryview(b"")
        self._table = memoryview(np.ascontiguousarray(table, dtype="<i4")).cast("B").cast("i")
        self._mask = len(table) - 1
        self._memo: dict[str, int | None] = {}  # recent look-ups (a query's terms recur per hit)
        ends = np.flatnonzero(blob == 10)
        if len(ends) != max(n_terms - 1, 0):
            raise ValueError(f"{len(ends) + 1 if len(blob) or n_terms else 0} terms stored for {n_terms}")
        starts = np.empty(n_terms + 1, dtype=np.int64)
        if n_terms:
            starts[0] = 0
            starts[1:-1] = ends + 1
            starts[-1] = len(blob) + 1  # as if the blob ended with a newline
        else:
            starts[0] = 0
        self._starts = memoryview(starts).cast("B").cast("q")
        self._n = n_terms

    def id_of(self, term: str) -> int | None:
        """The term's id, or None."""
        memo = self._memo
        known = memo.get(term, _UNSEEN)  # one get: another thread may clear the memo meanwhile
        if known is not _UNSEEN:
            return known  # type: ignore[return-value]
        raw = _encode(term)
        table, mask, starts, data = self._table, self._mask, self._starts, self._bytes
        h = zlib.crc32(raw) & mask
        while True:
            tid = table[h]
            if tid < 0:
                found = None
                break
            if data[starts[tid] : starts[tid + 1] - 1] == raw:
                found = tid
                break
            h = (h + 1) & mask
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[term] = found
        return found

    def starting_with(self, prefix: str) -> list[int]:
        """The ids of the terms that start with ``prefix`` (a scan in C of the terms' blob)."""
        raw = _encode(prefix)
        if not raw or b"\n" in raw:
            return []
        blob = self._bytes
        pattern = re.compile(b"(?m)^" + re.escape(raw))
        starts = np.frombuffer(self._starts, dtype=np.int64)
        at = [m.start() for m in pattern.finditer(blob)]
        return np.searchsorted(starts, np.asarray(at, dtype=np.int64)).tolist() if at else []

    def term(self, tid: int) -> str:
        """The term with id ``tid``."""
        if not 0 <= tid < self._n:
            raise IndexError(tid)
        raw = self._bytes[self._starts[tid] : self._starts[tid + 1] - 1]
        return str(raw, "utf-8", "surrogatepass")

    def get(self, term: object, default: int | None = None) -> int | None:  # type: ignore[override]
        tid = self.id_of(term) if isinstance(term, str) else None
        return default if tid is None else tid

    def __getitem__(self, term: str) -> int:
        tid = self.id_of(term) if isinstance(term, str) else None
        if tid is None:
            raise KeyError(term)
        return tid

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.id_of(term) is not None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        return (self.term(i) for i in range(self._n))


class Terms(Sequence[str]):
    """The vocabulary by term id (``terms[tid]``), decoded on access."""

    def __init__(self, vocab: Vocabulary) -> None:
        self._vocab = vocab

    def __len__(self) -> int:
        return len(self._vocab)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN204
        if isinstance(i, slice):
            return [self._vocab.term(j) for j in range(*i.indices(len(self)))]
        return self._vocab.term(i + len(self) if i < 0 else i)

    def __iter__(self) -> Iterator[str]:
        return iter(self._vocab)

    def __eq__(self, other: object) -> bool:  # like the list of terms it stands for
        if isinstance(other, Terms | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------------
# The compiled kernel (optional: a C extension built at install)

try:
    from retrieval import _kernel
except ImportError as exc:  # not built: no C compiler or Python headers at install time
    _kernel = None
    KERNEL_UNAVAILABLE: str | None = (
        f"the C ranking kernel (retrieval/_kernel.c) is not built ({exc}); install a C compiler and "
        "Python's headers, then re-run pip install"
    )
else:
    KERNEL_UNAVAILABLE = None

#: The C kernel's interface this module calls: retrieval/_kernel.c's ``INTERFACE``, raised with every
#: change to what ``Kernel()`` and ``Kernel.top`` take or return (or the build tokenizer's
#: ``SurfaceTable`` and ``chunk_arrays``, which :mod:`retrieval.build` takes from here). A build of
#: another interface (left from older source: ``pip install -e .`` not re-run after _kernel.c
#: changed) is never called.
KERNEL_INTERFACE = 3
#: True when a stale build was found and dropped (this module warned once; callers need not repeat it).
KERNEL_STALE = False
#: What ranking without the C kernel costs, worded once for every warning (p50 at 20,000 abstracts:
#: `python bench/latency.py --sizes 20000 --skip-peers --queries 1000`, docs/benchmarks.md).
NUMPY_FALLBACK = "ranking with numpy, about 5-7x slower"

_VARIANT_CODE = {"okapi": 0, "l": 1, "plus": 2}
#: The C kernel keeps its top ``need`` in an insertion list: larger pages use the numpy path.
C_MAX_NEED = 1000


def compiled_kernel() -> str:
    """Which ranking kernel answers: ``"c"`` when the C extension is built, else ``"numpy"`` (the same
    results; :data:`KERNEL_UNAVAILABLE` says why). A build whose ``INTERFACE`` is not
    :data:`KERNEL_INTERFACE` is stale: it is dropped here, with one RuntimeWarning, and numpy ranks."""
    global _kernel, KERNEL_UNAVAILABLE, KERNEL_STALE
    if _kernel is not None and (found := getattr(_kernel, "INTERFACE", None)) != KERNEL_INTERFACE:
        KERNEL_UNAVAILABLE = (
            f"the built C ranking kernel ({getattr(_kernel, '__file__', _kernel)}) is stale: interface "
            f"{'none' if found is None else found}, this code calls {KERNEL_INTERFACE}; rebuild it with "
            "`pip install -e .`"
        )
        _kernel, KERNEL_STALE = None, True
        warnings.warn(f"{NUMPY_FALLBACK}: {KERNEL_UNAVAILABLE}", RuntimeWarning, 2)
    return "c" if _kernel is not None else "numpy"


compiled_kernel()  # a stale build is dropped at import, before any query can call it


class Postings:
    """An immutable, thread-safe BM25 scoring core over ``n_docs`` documents (numbered 0..n-1).

    Args:
        params: The ranking parameters the impacts were computed with.
        terms: The vocabulary, by term id, when ``arrays`` does not hold it yet (a build); None
            when it does (a cache file).
        arrays: The arrays of :data:`ARRAYS` (numpy arrays or read-only memory maps).
        avgdl: rank-bm25's average document length.
    """

    def __init__(
        self,
        *,
        params: BM25Params,
        terms: Sequence[str] | None = None,
        arrays: dict[str, np.ndarray],
        avgdl: float,
    ) -> None:
        self.params = params
        if terms is not None:
            arrays = {**arrays, **vocabulary_arrays(terms)}
        self.vocab = Vocabulary(arrays["terms"], arrays["vocab_hash"], len(arrays["indptr"]) - 1)
        self.terms = Terms(self.vocab)
        self.avgdl = avgdl
        for name in ARRAYS:
            if arrays[name].flags.writeable:
                arrays[name].flags.writeable = False
        self._arrays = {name: arrays[name] for name in ARRAYS}
        self.indptr: npt.NDArray[np.int64] = arrays["indptr"]
        self.post_docs: IntArray = arrays["post_docs"]
        self.post_tf: npt.NDArray[np.unsignedinteger] = arrays["post_tf"]
        self.idf: FloatArray = arrays["idf"]
        self.baseline: FloatArray = arrays["baseline"]
        self.doc_len: IntArray = arrays["doc_len"]
        self.doc_start: npt.NDArray[np.int64] = arrays["doc_start"]
        self.pos_indptr: npt.NDArray[np.int64] = arrays["pos_indptr"]
        self.positions: IntArray = arrays["positions"]
        self.n_docs = len(self.doc_len)
        self.has_baseline = bool(np.any(self.baseline != 0))
        self._norm: FloatArray = _length_norm(params, self.doc_len, avgdl)
        self._norm.flags.writeable = False
        self.long_slot: IntArray = arrays["long_slot"]
        self._n_words = -(-self.n_docs // 64)
        self.long_bits = arrays["long_bits"].reshape(-1, self._n_words)
        self.long_bmax = arrays["long_bmax"].reshape(-1, self._n_words)
        self.long_min: FloatArray = arrays["long_min"]
        self._scratch = threading.local()
        self._c: Any = None  # the C kernel over these arrays, made on first use

    def __len__(self) -> int:
        return self.n_docs

    def arrays(self) -> dict[str, np.ndarray]:
        """The core's arrays by name (read-only), as saved in the cache."""
        return dict(self._arrays)

    def df(self, term: str) -> int:
        """How many documents hold ``term`` (0 for an unknown term)."""
        tid = self.vocab.get(term)
        return 0 if tid is None else int(self.indptr[tid + 1] - self.indptr[tid])

    @property
    def post_impact(self) -> _Impacts:
        """Every posting's BM25 contribution, as if stored: ``post_impact[lo:hi]``, ``post_impact[j]``
        or ``post_impact[positions]`` computes just those (posting positions as in ``post_docs``)."""
        return _Impacts(self)

    def postings(self, term_id: int) -> tuple[IntArray, FloatArray]:
        """Doc ids (ascending) and BM25 contributions of one term."""
        lo, hi = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
        docs = self.post_docs[lo:hi]
        return docs, self._impacts(term_id, docs, self.post_tf[lo:hi])

    def _impacts(self, term_id: int | np.ndarray, docs: IntArray, tf: np.ndarray) -> FloatArray:
        """rank-bm25's contributions of term(s) ``term_id`` to ``docs`` with frequencies ``tf``."""
        return _contributions(self.params, self.idf[term_id], tf, self._norm[docs])

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
            docs, impact = self.postings(tid)
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

    def top(
        self,
        terms: Sequence[str],
        need: int,
        mask: npt.NDArray[np.bool_] | None = None,
        words: Sequence[Iterable[str]] | None = None,
    ) -> tuple[npt.NDArray[np.int64], dict[int, float], int]:
        """The ranking kernel: see :func:`retrieval.search.rank` for the rule.

        Dynamic pruning (MaxScore over short lists, block-max over long ones), exact by construction:

        1. Short terms (fewer than ``long_df`` docs) are read whole: each of their docs gets a partial
           score (their excess contributions) and is a candidate.
        2. Long terms are not read: per block of 64 docs, the sum of their stored block maxima bounds
           what they add to any doc in it; their bitmaps give the exact number of hits (OR, popcount).
        3. A candidate's final score lies between its partial score plus the long terms' smallest and
           largest possible additions; the ``need``-th best lower bound is a threshold no top doc is
           below. Candidates that can reach it are scored exactly, as rank-bm25 does (every query
           term in query order, repeats included, from the frequencies), then the blocks whose bound
           reaches the threshold, best first, each raising the threshold: a doc left out scores less
           than ``need`` docs that were scored, so it cannot be in the top ``need`` even by a tie.

        A query whose words do not hold exactly its terms uses :meth:`_top_exhaustive`.

        Returns:
            ``(docs, scores, total)``: the top docs in order, their scores by doc, the number of hits.
        """
        get = self.vocab.get
        ids = [i for i in map(get, terms) if i is not None]
        word_ids: list[list[int]] | None = None  # None: each distinct term is a word
        if words is None:
            if not ids:
                return np.zeros(0, dtype=np.int64), {}, 0
        else:
            words = [tuple(w) for w in words]
            word_ids = []
            for word in words:
                group = [i for i in map(get, word) if i is not None]
                if group:
                    word_ids.append(group)
            if not word_ids:
                return np.zeros(0, dtype=np.int64), {}, 0
            if {i for w in word_ids for i in w} != set(ids):
                return self._top_exhaustive(terms, need, mask, words)
        if mask is not None and len(mask) != self.n_docs:
            raise IndexError(f"mask of {len(mask)} papers for an index of {self.n_docs}")
        if 0 < need <= C_MAX_NEED and _kernel is not None:
            kernel = self._c or self._c_kernel()
            if kernel is not None:
                return self._top_c(kernel, ids, word_ids, need, mask)
        distinct = list(dict.fromkeys(ids))
        if word_ids is None:
            word_ids = [[i] for i in distinct]
        return self._top_pruned(ids, distinct, word_ids, need, mask)

    def _c_kernel(self) -> Any:
        """The C kernel over this core's arrays (made once), or None when their types are not its
        own (uint32 frequencies)."""
        kernel = self._c
        if kernel is None and self.post_tf.dtype == np.uint16 and _kernel is not None:
            p = self.params
            kernel = self._c = _kernel.Kernel(
                self.indptr, self.post_docs, self.post_tf, self._norm, self.idf, self.baseline,
                self.long_slot, self.long_bits, self.long_bmax, self.long_min,
                _VARIANT_CODE[p.variant], float(p.k1), float(p.effective_delta),
            )  # fmt: skip
        return kernel

    def _top_c(
        self,
        kernel: Any,
        ids: list[int],
        word_ids: list[list[int]] | None,
        need: int,
        mask: npt.NDArray[np.bool_] | None,
    ) -> tuple[npt.NDArray[np.int64], dict[int, float], int]:
        scratch = self._scratch
        try:
            flag = scratch.flag
        except AttributeError:
            flag = scratch.flag = np.zeros(self.n_docs, dtype=np.int32)
        if mask is not None and (mask.dtype != np.bool_ or not mask.flags.c_contiguous):
            mask = np.ascontiguousarray(mask, dtype=np.bool_)
        docs, scores, total = kernel.top(ids, word_ids, mask, need, flag)
        return np.array(docs, dtype=np.int64), scores, total

    def _top_pruned(
        self,
        ids: list[int],
        distinct: list[int],
        word_ids: list[list[int]],
        need: int,
        mask: npt.NDArray[np.bool_] | None,
    ) -> tuple[npt.NDArray[np.int64], dict[int, float], int]:
        scratch = self._scratch
        if getattr(scratch, "seen", None) is None:
            scratch.seen = np.zeros(self.n_docs, dtype=np.bool_)
        seen = scratch.seen
        indptr, slot = self.indptr, self.long_slot
        mult: dict[int, int] = {}
        for i in ids:
            mult[i] = mult.get(i, 0) + 1
        short = [t for t in distinct if slot[t] < 0]
        long_ = [t for t in distinct if slot[t] >= 0]
        base = self.baseline
        const = sum(mult[t] * float(base[t]) for t in distinct) if self.has_baseline else 0.0
        cands = np.zeros(0, dtype=np.int64)
        try:
            if short:
                spans = [(int(indptr[t]), int(indptr[t + 1])) for t in short]
                lens = [hi - lo for lo, hi in spans]
                if len(short) == 1:
                    touched = self.post_docs[spans[0][0] : spans[0][1]]
                    tf = self.post_tf[spans[0][0] : spans[0][1]]
                else:
                    touched = np.concatenate([self.post_docs[lo:hi] for lo, hi in spans])
                    tf = np.concatenate([self.post_tf[lo:hi] for lo, hi in spans])
                sid = np.asarray(short, dtype=np.int64)
                per = np.repeat(sid, lens) if len(short) > 1 else sid[0]
                excess = _contributions(self.params, self.idf[per], tf, self._norm[touched])
                if self.has_baseline:
                    excess = excess - base[per]
                if any(mult[t] > 1 for t in short):
                    weights = np.asarray([mult[t] for t in short], dtype=np.float64)
                    excess = excess * (np.repeat(weights, lens) if len(short) > 1 else weights[0])
                if len(short) == 1:
                    cands, part_all = touched.astype(np.int64), excess
                else:
                    order = np.argsort(touched, kind="stable")
                    ordered = touched[order]
                    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
                    cands = ordered[starts].astype(np.int64)
                    part_all = np.add.reduceat(excess[order], starts)
            else:
                part_all = np.zeros(0, dtype=np.float64)
            if mask is None:
                in_mask, part = cands, part_all
            else:
                keep_mask = mask[cands]
                in_mask, part = cands[keep_mask], part_all[keep_mask]
            if long_:
                rows = slot[np.asarray(long_, dtype=np.int64)]
                lmult = np.asarray([mult[t] for t in long_], dtype=np.float64)
                block_ub = lmult @ self.long_bmax[rows].astype(np.float64)
                lb_long = float(np.minimum(self.long_min[rows], 0.0) @ lmult)
                union = np.bitwise_or.reduce(self.long_bits[rows], axis=0)
                if mask is not None:
                    union &= _mask_words(mask, self._n_words)
                total = int(np.bitwise_count(union).sum())
                if len(in_mask):
                    bit = (union[in_mask >> BLOCK_SHIFT] >> (in_mask & 63).astype(np.uint64)) & np.uint64(1)
                    total += int(np.count_nonzero(bit == 0))
                    seen[cands] = True
            else:
                block_ub, lb_long, union = None, 0.0, None
                total = len(in_mask)
            if need <= 0 or total == 0:
                return np.zeros(0, dtype=np.int64), {}, total
            scale = 1.0 + abs(const) + (float(np.abs(part).max()) if len(part) else 0.0)
            if block_ub is not None:
                scale += float(block_ub.max()) + abs(lb_long)
            slack = 1e-7 * scale
            theta = -math.inf
            if len(in_mask):
                lower = part + (const + lb_long - slack)
                upper = part + (const + slack)
                if block_ub is not None:
                    upper += block_ub[in_mask >> BLOCK_SHIFT]
                if len(lower) >= need:
                    theta = float(np.partition(lower, len(lower) - need)[len(lower) - need])
                first = in_mask[upper >= theta]
            else:
                first = in_mask
            best = self._exact_top(first, ids, distinct, word_ids, need, None)
            if block_ub is not None and union is not None:
                theta = best[3]
                bound = block_ub + (const + slack)
                blocks = np.flatnonzero((bound >= theta) & (union != 0))
                blocks = blocks[np.argsort(-bound[blocks], kind="stable")]
                chunk = 16
                while len(blocks):
                    take, blocks = blocks[:chunk], blocks[chunk:]
                    chunk *= 4
                    flags = np.unpackbits(union[take].view(np.uint8), bitorder="little")
                    at = np.flatnonzero(flags)
                    docs = take[at >> BLOCK_SHIFT].astype(np.int64) * BLOCK + (at & (BLOCK - 1))
                    if len(cands):
                        docs = docs[~seen[docs]]
                    if len(docs):
                        best = self._exact_top(np.sort(docs), ids, distinct, word_ids, need, best)
                        theta = best[3]
                        blocks = blocks[bound[blocks] >= theta]
            docs_out = best[0]
            return docs_out, dict(zip(docs_out.tolist(), best[1].tolist(), strict=True)), total
        finally:
            if long_ and len(cands):
                seen[cands] = False

    def _exact_top(
        self,
        docs: npt.NDArray[np.int64],
        ids: list[int],
        distinct: list[int],
        word_ids: list[list[int]],
        need: int,
        best: tuple[np.ndarray, FloatArray, IntArray, float] | None,
    ) -> tuple[npt.NDArray[np.int64], FloatArray, IntArray, float]:
        """Score ``docs`` exactly as rank-bm25 does and merge them into ``best`` (the top ``need`` so
        far: docs, scores, words matched, and the ``need``-th score or -inf)."""
        if len(docs):
            indptr = self.indptr
            freqs = np.empty((len(distinct), len(docs)), dtype=self.post_tf.dtype)
            for row, tid in enumerate(distinct):
                lo, hi = int(indptr[tid]), int(indptr[tid + 1])
                held = self.post_docs[lo:hi]
                at = np.searchsorted(held, docs)
                np.minimum(at, hi - lo - 1, out=at)
                found = held[at] == docs
                np.multiply(self.post_tf[lo:hi][at], found, out=freqs[row], casting="unsafe")
            contrib = _contributions(
                self.params, self.idf[np.asarray(distinct)][:, None], freqs, self._norm[docs][None, :]
            )
            row_of = {t: r for r, t in enumerate(distinct)}
            scores = np.zeros(len(docs), dtype=np.float64)
            for tid in ids:  # query order, repeats included: rank-bm25's summation order
                scores += contrib[row_of[tid]]
            held_any = freqs > 0
            counts = np.zeros(len(docs), dtype=np.int32)
            for word in word_ids:
                rows = [row_of[t] for t in word]
                counts += held_any[rows[0]] if len(rows) == 1 else held_any[rows].any(axis=0)
            if best is not None:
                docs = np.concatenate([best[0], docs])
                scores = np.concatenate([best[1], scores])
                counts = np.concatenate([best[2], counts])
        elif best is not None:
            return best
        else:
            return docs, np.zeros(0), np.zeros(0, dtype=np.int32), -math.inf
        if need < len(docs):
            cut = scores[np.argpartition(-scores, need - 1)[need - 1]]
            keep = scores >= cut
            docs, scores, counts = docs[keep], scores[keep], counts[keep]
        order = np.lexsort((docs, -counts, -scores))[:need]
        docs, scores, counts = docs[order], scores[order], counts[order]
        return docs, scores, counts, float(scores[-1]) if len(docs) >= need else -math.inf

    def _top_exhaustive(
        self,
        terms: Sequence[str],
        need: int,
        mask: npt.NDArray[np.bool_] | None = None,
        words: Sequence[Iterable[str]] | None = None,
    ) -> tuple[npt.NDArray[np.int64], dict[int, float], int]:
        """The ranking kernel without pruning (every posting of the query read).

        Work is proportional to the query's postings, never to the corpus: scores and word counts
        accumulate in per-thread scratch arrays (zero between queries: only the touched slots are
        reset), the hits are the distinct docs of the postings, and the top ``need`` are selected
        among them. BM25Plus's baseline (what a term adds to a doc without it) is added to the hits
        only: no other doc can be returned.

        Returns:
            ``(docs, scores, total)``: the top docs in order, their scores by doc, the number of hits.
        """
        if words is None:
            words = [(t,) for t in dict.fromkeys(terms)]
        scratch = self._scratch
        if getattr(scratch, "scores", None) is None:
            scratch.scores = np.zeros(self.n_docs, dtype=np.float64)
            scratch.counts = np.zeros(self.n_docs, dtype=np.int32)
        scores, counts = scratch.scores, scratch.counts
        vocab, indptr = self.vocab, self.indptr
        distinct: list[IntArray] = []  # each hit once: the docs a word reaches first
        try:
            for word in words:
                lists = [self.term_docs(t) for t in dict.fromkeys(word)]
                lists = [d for d in lists if len(d)]
                if not lists:
                    continue
                docs = lists[0] if len(lists) == 1 else np.unique(np.concatenate(lists))
                distinct.append(docs[counts[docs] == 0])
                counts[docs] += 1
            if not distinct:
                return np.zeros(0, dtype=np.int64), {}, 0
            every = distinct[0] if len(distinct) == 1 else np.concatenate(distinct)
            baseline = self.baseline
            for term in terms:  # query order, repeats included: rank-bm25's summation order
                tid = vocab.get(term)
                if tid is None:
                    continue
                lo, hi = int(indptr[tid]), int(indptr[tid + 1])
                docs = self.post_docs[lo:hi]
                impact = self._impacts(tid, docs, self.post_tf[lo:hi])
                base = baseline[tid]
                if base == 0.0:
                    scores[docs] += impact  # doc ids within one posting list are unique
                else:
                    # BM25Plus: a hit without the term gets its baseline; the same operation order
                    # as rank-bm25 (each doc: old + its own contribution), over the hits only.
                    inside = scores[docs] + impact
                    scores[every] += base
                    scores[docs] = inside
            hits = every if mask is None else every[mask[every]]
            total = len(hits)
            if need <= 0 or total == 0:
                return np.zeros(0, dtype=np.int64), {}, total
            values = scores[hits]
            if need < total:
                # argpartition picks arbitrary members of a tie at the cut: keep every doc scoring
                # at least the cut value, then order them exactly.
                cut = values[np.argpartition(-values, need - 1)[need - 1]]
                keep = values >= cut
                hits, values = hits[keep], values[keep]
            best = np.lexsort((hits, -counts[hits], -values))[:need]
            docs_out = hits[best].astype(np.int64)
            return docs_out, dict(zip(docs_out.tolist(), values[best].tolist(), strict=True)), total
        finally:
            for docs in distinct:  # every doc a word reached, once
                counts[docs] = 0
                scores[docs] = 0.0
            covered = {t for word in words for t in word}
            for term in terms:  # a term no word holds wrote scores the loop above did not clear
                tid = vocab.get(term) if term not in covered else None
                if tid is not None:
                    scores[self.post_docs[int(indptr[tid]) : int(indptr[tid + 1])]] = 0.0


def _mask_words(mask: npt.NDArray[np.bool_], n_words: int) -> npt.NDArray[np.uint64]:
    """A bool mask as bitmap words (bit ``d & 63`` of word ``d >> 6``)."""
    padded = np.zeros(n_words * 64, dtype=np.bool_)
    padded[: len(mask)] = mask
    return np.packbits(padded, bitorder="little").view(np.uint64)


class _Impacts:
    """A read-only, array-like view of every posting's contribution, computed on indexing."""

    def __init__(self, core: Postings) -> None:
        self._core = core

    def __len__(self) -> int:
        return len(self._core.post_docs)

    def __getitem__(self, key: int | slice | np.ndarray) -> Any:
        core = self._core
        if isinstance(key, slice):
            positions = np.arange(*key.indices(len(self)), dtype=np.int64)
        else:
            positions = np.asarray(key, dtype=np.int64)
        scalar = positions.ndim == 0
        positions = positions.reshape(-1)
        positions = np.where(positions < 0, positions + len(self), positions)
        tids = np.searchsorted(core.indptr, positions, side="right") - 1
        docs = core.post_docs[positions]
        values = core._impacts(tids, docs, core.post_tf[positions])
        return values[0] if scalar else values
