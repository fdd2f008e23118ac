"""The index: a postings-and-scoring core (:mod:`retrieval.postings`) and a catalogue of papers,
areas and authors (:mod:`retrieval.catalogue`), built from a corpus and saved as one memory-mapped
cache file.

Cache file (one per corpus and ranking parameters; written by whoever builds: the CLI, the bot, the
bot's reindex worker)::

    "PAPERBOT-INDEX\\n\\0" (16 bytes) | header length (u64) | header CRC-32 (u32) | 4 bytes
    header (JSON: format, fingerprint, corpus summary, area names, and per array its offset,
            dtype, length and - for arrays under 16 MB - CRC-32)
    arrays, raw little-endian, each 64-byte aligned

Opening maps the file (``mmap``) and views every array in place: nothing is read until used, the
pages are shared with the OS page cache, and papers become :class:`Paper` objects only when shown.
A foreign, truncated, stale (corpus, tokenizer, parser or parameters changed) or damaged file is
detected on open and rebuilt, with one warning. The large arrays are checked for size, not content
(checking them would read the whole file on every start).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import mmap
import os
import re
import secrets
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from retrieval import catalogue as catalogue_module
from retrieval import postings as postings_module
from retrieval._libc import process_alive
from retrieval.answer import answer as _answer
from retrieval.build import ChunkTokenizer, CorpusBuild, Merged, MergedShape, Merger
from retrieval.catalogue import Catalogue, FileBlob, PaperTable, catalogue_arrays
from retrieval.errors import CorpusError
from retrieval.models import Answer, Hit, IngestReport, Paper, SearchResults, SkippedBlock
from retrieval.postings import (
    RANK_BM25_MAX_DOCS,
    BM25Params,
    Postings,
    baselines,
    idf_like_rank_bm25,
)
from retrieval.search import search as _search
from retrieval.search import similar as _similar
from retrieval.tokenize import (
    _CJK_RE,
    STOPWORDS,
    TOKENIZER_VERSION,
    _strip_accents,
    analyze_document,
    analyze_word,
)

__all__ = [
    "BM25Params",
    "CACHE_FORMAT",
    "Index",
    "Progress",
    "build_index",
    "cache_path_for",
    "corpus_fingerprint",
    "open_cache_file",
    "open_index",
    "paper_tokens",
    "sweep_leftovers",
]

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

#: Version of the on-disk cache layout; part of the fingerprint.
CACHE_FORMAT = "paperbot-index-10"
CACHE_SUFFIX = ".pbindex"
_MAGIC = b"PAPERBOT-INDEX\n\0"
_PREFIX = len(_MAGIC) + 16
_ALIGN = 64
#: Arrays up to this size are CRC-checked on open (the vocabulary, offsets, per-doc arrays of small
#: corpora); bigger ones only for size.
_CRC_MAX_BYTES = 16 << 20


_STOPWORD_STARTS = frozenset(w[:k] for w in STOPWORDS for k in range(3, len(w) + 1))

#: At most this many titles are derived for one autocomplete answer (about a millisecond each).
COMPLETE_DERIVE_MAX = 100


def _folded_word(word: str) -> str:
    """A typed word as the index folds its words (case, accents), its letters and digits only; ""
    for a stopword or CJK text (indexed as bigrams, not words)."""
    if not analyze_word(word)[0]:
        return ""
    folded = "".join(c for c in _strip_accents(_strip_accents(word).casefold()) if c.isalnum())
    return "" if _CJK_RE.search(folded) is not None else folded


def _may_stem_from(term: str, folded: str) -> bool:
    """Whether ``term`` may be the stem of a word starting with ``folded`` (3 or more characters): it
    goes on from what was typed ("spars" of "sparse" for "spar"), or it parts from it only in its
    last three characters, which the stemmer may have replaced ("probabl" of "probability", "studi"
    of "study", "match" of "matching" for "matchin")."""
    common = len(os.path.commonprefix((term, folded)))
    return common == len(folded) or common >= max(3, len(term) - 3)


def paper_tokens(paper: Paper) -> list[str]:
    """The index tokens of a paper (its own title, if the source gave one, then the abstract): what
    rank-bm25 is given for it. A title derived from the abstract is not indexed: its words are the
    abstract's, and deriving it is left to when the paper is shown."""
    return analyze_document(paper.indexed_title)[0] + analyze_document(paper.abstract)[0]


# --------------------------------------------------------------------------------------------------
# The index


class Index:
    """An immutable, thread-safe BM25 index: the scoring core, the catalogue, and where they came from.

    Build with :func:`build_index` or :func:`open_index`; all reads (search, similar, answer, ...)
    are safe from many threads at once. ``index.papers`` is a :class:`~retrieval.catalogue.PaperTable`
    (a sequence making each paper on demand).
    """

    def __init__(
        self,
        *,
        core: Postings,
        catalogue: Catalogue,
        fingerprint: str = "",
        built_at: float = 0.0,
        build_seconds: float = 0.0,
    ) -> None:
        if len(core) != len(catalogue):
            raise ValueError(f"{len(core)} documents in the postings but {len(catalogue)} papers")
        self.core = core
        self.catalogue = catalogue
        self.fingerprint = fingerprint
        self.built_at = built_at or time.time()
        self.build_seconds = build_seconds
        # The hot reads, bound once.
        self.papers: PaperTable = catalogue.papers
        self.params: BM25Params = core.params
        self.terms: Sequence[str] = core.terms
        self.vocab: Mapping[str, int] = core.vocab
        self.avgdl: float = core.avgdl
        self.idf: FloatArray = core.idf
        self.indptr = core.indptr
        self.post_docs: IntArray = core.post_docs
        self.baseline: FloatArray = core.baseline
        self.post_impact = core.post_impact
        self.doc_len: IntArray = core.doc_len
        self.doc_area: IntArray = catalogue.doc_area
        self.term_docs = core.term_docs
        self.contains = core.contains
        self.score_terms = core.score_terms
        self.top = core.top
        self.phrase_docs = core.phrase_docs
        self.postings = core.postings
        self.position = catalogue.position
        self.area_mask = catalogue.area_mask
        self.author_docs = catalogue.author_docs
        self.areas = catalogue.areas
        self.complete_areas = catalogue.complete_areas
        self.nearest_areas = catalogue.nearest_areas

    # -- autocomplete ----------------------------------------------------------------------------

    def complete_ids(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """``(id, title)`` pairs for autocomplete: ids starting with ``prefix`` (case-insensitive,
        corpus order), then papers whose title the source gave contains every word of ``prefix``
        (case-insensitive, corpus order), then papers whose derived title has, for every word of
        ``prefix``, a word that starts with it (case-insensitive, corpus order).

        Derived titles are searched like the source's own once the index's title file is there
        (:mod:`retrieval.titlefile`: its case-folded blob is scanned in C). Until then (a corpus
        just built, or an index without a cache file) they are found through the index: the papers
        holding, for each typed word, a term that may stem from a word starting with it, are the
        candidates, in corpus order; each one's title is derived (kept once made) and checked. At
        most :data:`COMPLETE_DERIVE_MAX` titles are derived for one answer, so an answer takes about
        a tenth of a second at most, even when few candidates match.
        """
        title_file = self.papers.title_file()
        if title_file is not None:
            return self.catalogue.complete_ids(prefix, limit, (title_file.fold, title_file.fold_starts))
        found = self.catalogue.complete_ids(prefix, limit)
        words = (prefix or "").strip().casefold().split()
        if len(found) >= limit or not words or not self._any_derived:
            return found
        papers = self.papers
        seen = {pid for pid, _ in found}
        starts = [re.compile(r"(?<!\w)" + re.escape(w)) for w in words]
        derived = 0
        for doc in self._candidates(words):
            doc = int(doc)
            if not papers.title_is_derived(doc) or papers.id(doc) in seen:
                continue
            derived += not papers.derived_title_known(doc)
            title = papers.title(doc)
            folded = title.casefold()
            if all(start.search(folded) for start in starts):
                found.append((papers.id(doc), title))
                if len(found) >= limit:
                    break
            if derived >= COMPLETE_DERIVE_MAX:
                break
        return found

    @functools.cached_property
    def _any_derived(self) -> bool:
        """Whether any paper's title is derived (read once)."""
        return self.papers.derived_count() > 0

    def _candidates(self, words: Sequence[str]) -> np.ndarray:
        """The papers (ascending) holding, for every typed word of 3 or more letters (a stopword, the
        start of one and CJK text aside: the index holds none), a term that may be the stem of a word
        starting with it (:func:`_may_stem_from`)."""
        docs: np.ndarray | None = None
        vocab = self.core.vocab
        for word in words:
            folded = _folded_word(word)
            if len(folded) < 3 or folded in _STOPWORD_STARTS:  # "throug": a title's "through"
                continue
            tids = [t for t in vocab.starting_with(folded[:3]) if _may_stem_from(vocab.term(t), folded)]
            # a verb whose -ing form drops its e ("usin" of "using", stemmed "use"; "makin", "make")
            dropped = re.sub(r"(?:i|in|ing)$", "", folded)
            if len(dropped) >= 2 and dropped != folded and (dropped + "e") in vocab:
                tids.append(vocab[dropped + "e"])
            if not tids:
                return np.zeros(0, dtype=np.int32)
            indptr, post = self.indptr, self.post_docs
            have = np.unique(np.concatenate([post[indptr[t] : indptr[t + 1]] for t in tids]))
            docs = have if docs is None else np.intersect1d(docs, have, assume_unique=True)
            if not len(docs):
                break
        return np.arange(len(self.papers), dtype=np.int32) if docs is None else docs

    def title_identity(self) -> dict[str, object]:
        """What a title file of this index names (:mod:`retrieval.titlefile`): this build, and the
        title rules its titles were derived by."""
        import retrieval.titles

        return {"fingerprint": self.fingerprint, "built_at": self.built_at, "papers": len(self.papers),
                "rules": retrieval.titles.TITLE_RULES_VERSION}  # fmt: skip

    # -- container protocol --------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.papers)

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and self.position(paper_id) is not None

    def __repr__(self) -> str:
        return f"<Index {len(self.papers)} papers, {len(self.terms)} terms, {self.params.key()}>"

    def get(self, paper_id: str) -> Paper | None:
        """The paper with this id (exact match first, then case-insensitive), or None."""
        return self.catalogue.get(paper_id) if isinstance(paper_id, str) else None

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of the index by name (read-only), as saved in the cache."""
        return {**self.core.arrays(), **self.catalogue.arrays()}

    # -- reads ---------------------------------------------------------------------------------------

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
            The page of hits (with their snippet spans) and the total number of matching papers.

        Raises:
            ValueError: k or offset out of range.
            QueryError: Malformed query (with ``.position``).
            EmptyQueryError: No searchable word.
        """
        return _search(self.core, self.catalogue, query, k, offset=offset, area=area, author=author)

    def similar(self, paper_id: str, k: int = 5) -> list[Hit]:
        """Papers closest to ``paper_id`` (itself excluded), by its most distinctive terms.

        Raises:
            UnknownPaperError: No paper has that id.
            ValueError: k out of 1..100.
        """
        return _similar(self.core, self.catalogue, paper_id, k)

    def answer(self, question: str, k: int | None = None, within: Iterable[str] | None = None) -> Answer:
        """An extractive answer: the sentence that answers the question, then up to ``k - 1`` that
        support it (default 3 in all; see :func:`retrieval.answer.answer`), with their papers; none
        when no paper bears on the question. ``within``: answer only from the papers of these ids
        (ids the index does not hold are ignored).

        Raises:
            EmptyQueryError: The question has no searchable word.
            QueryError: The question is too long.
            ValueError: k out of 1..10.
        """
        if within is None:
            return _answer(self, question, k)
        positions = {p for p in map(self.catalogue.position, within) if p is not None}
        return _answer(self, question, k, within=positions)


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
    chunk_docs: int = 20_000,
) -> Index:
    """Tokenize papers and build the served index.

    Args:
        papers: The papers, in corpus order (ties in ranking break by this order).
        params: Ranking parameters (default BM25Okapi k1=1.5 b=0.75 epsilon=0.25).
        progress: ``progress(stage, done, total)`` for the ``"tokenize"`` and ``"index"`` stages.
        use_rank_bm25: Take idf/avgdl/doc_len from a real rank-bm25 model (default: when the corpus
            has at most :data:`RANK_BM25_MAX_DOCS` papers); otherwise compute the identical values here.
        fingerprint: Stored on the index (set by :func:`open_index`).
        chunk_docs: Papers tokenized per chunk (any size gives the same index; see
            :mod:`retrieval.build`).

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

    keep_tokens = bool(use_rank_bm25)
    tokenizer = ChunkTokenizer()
    merger = Merger(keep_tokens=keep_tokens)
    _report_progress(progress, "tokenize", 0, n)
    for first in range(0, n, chunk_docs):
        chunk = papers[first : first + chunk_docs]
        merger.add(tokenizer.chunk(((p.indexed_title, p.abstract) for p in chunk), keep_tokens=keep_tokens))
        _report_progress(progress, "tokenize", merger.n_docs, n)
    del tokenizer
    merged = merger.finish()
    total_steps = 5
    _report_progress(progress, "index", 1, total_steps)
    index = _index_from_merged(merged, params, papers, fingerprint=fingerprint, started=started)
    _report_progress(progress, "index", total_steps, total_steps)
    return index


def _core_sizes(shape: MergedShape) -> dict[str, tuple[np.dtype, int]]:
    """The dtype and length of each of the scoring core's arrays (:func:`_core_arrays`), in their
    order, from the merged arrays' shape."""
    n_terms, n_docs = len(shape.df), shape.n_docs
    n_post = int(shape.df.sum())
    i8, f8 = np.dtype(np.int64), np.dtype(np.float64)
    return {
        "indptr": (i8, n_terms + 1),
        "post_docs": (np.dtype(np.int32), n_post),
        "post_tf": (shape.tf_dtype, n_post),
        "idf": (f8, n_terms),
        "baseline": (f8, n_terms),
        "doc_len": (np.dtype(np.int32), n_docs),
        "doc_start": (i8, n_docs + 1),
        "pos_indptr": (i8, n_terms + 1),
        "positions": (shape.pos_dtype, shape.n_positions),
        **postings_module.pruning_sizes(shape.df, n_docs),
    }


def _core_arrays(
    merged: Merged, params: BM25Params, out: Mapping[str, np.ndarray] | None = None
) -> tuple[dict[str, np.ndarray], float]:
    """The scoring core's arrays (and avgdl) from the merged chunks; those made by this function
    (``idf``, ``baseline``, ``doc_len`` and the pruning arrays) in ``out``'s arrays when it has
    them (see :func:`_core_sizes`), the same values."""

    def put(name: str, values: np.ndarray) -> np.ndarray:
        given = postings_module.placed(out, name, values.dtype, values.shape)
        if given is None:
            return values
        given[...] = values
        return given

    n = len(merged.doc_len)
    lengths = merged.doc_len
    if merged.docs_tokens is not None:
        # rank-bm25 is given the very token lists that tokenize() yields for each paper.
        model = params.rank_bm25_model(merged.docs_tokens)
        merged.docs_tokens = None
        idf_values = [model.idf[t] for t in merged.terms]
        avgdl = float(model.avgdl)
        model_len = np.asarray(model.doc_len, dtype=np.int64)
        if not np.array_equal(model_len, lengths):  # pragma: no cover - would be a tokenizer bug
            raise AssertionError("document lengths differ from rank-bm25's")
        del model
    else:
        idf_values = idf_like_rank_bm25(params, merged.df.tolist(), n)
        avgdl = int(lengths.sum()) / n  # rank-bm25: num_doc / corpus_size
    idf = put("idf", np.asarray(idf_values, dtype=np.float64))
    arrays: dict[str, np.ndarray] = {
        "indptr": merged.indptr,
        "post_docs": merged.post_docs,
        "post_tf": merged.post_tf,
        "idf": idf,
        "baseline": put("baseline", baselines(params, idf)),
        "doc_len": put("doc_len", lengths.astype(np.int32)),
        "doc_start": merged.doc_start,
        "pos_indptr": merged.pos_indptr,
        "positions": merged.positions,
    }
    arrays.update(postings_module.pruning_arrays(arrays, params, avgdl, out=out))
    return arrays, avgdl


def _index_from_merged(
    merged: Merged, params: BM25Params, papers: Sequence[Paper], *, fingerprint: str, started: float
) -> Index:
    arrays, avgdl = _core_arrays(merged, params)
    core = Postings(params=params, terms=merged.terms, arrays=arrays, avgdl=avgdl)
    cat_arrays, area_names = catalogue_arrays(papers)
    return Index(
        core=core,
        catalogue=Catalogue(cat_arrays, area_names),
        fingerprint=fingerprint,
        built_at=time.time(),
        build_seconds=time.perf_counter() - started,
    )


# --------------------------------------------------------------------------------------------------
# Cache


def _loader_version() -> str:
    """The version of the rules that make the cached papers: the parser's (fields, ids, areas). An
    explicit constant, bumped when the output changes: editing the code without changing what it
    produces (a comment, a speed-up) keeps every cache valid. The title rules are not part of it:
    a cache holds no derived title (they are in a file beside it, see :mod:`retrieval.titlefile`,
    which names the rules' version), so editing them rebuilds no index."""
    from retrieval.corpus import PARSER_VERSION

    return PARSER_VERSION


def _settings_key(params: BM25Params, headers: Sequence[str] = ()) -> str:
    """What, besides the corpus files, a cache depends on. Extra header lines (the corpus setting)
    are part of it only when set, so caches built without them stay valid."""
    key = f"{CACHE_FORMAT}\0{TOKENIZER_VERSION}\0{_loader_version()}\0{params.key()}"
    return key + "\0headers=" + "\x1f".join(headers) if headers else key


def corpus_fingerprint(files: Sequence[Path], params: BM25Params, headers: Sequence[str] = ()) -> str:
    """Fingerprint of a corpus + settings: file names, sizes and content (BLAKE2b), the tokenizer
    version, the parser and title-rules versions, the cache format, the ranking parameters and the
    configured header lines.

    Hashing the content costs about 0.1 s per 100 MB; :func:`open_index` skips it when every file's
    size, mtime, ctime and inode are those recorded in the cache (any write changes the ctime, even
    one that puts the mtime back).
    """
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{_settings_key(params, headers)}\0".encode())
    for path in files:
        st = path.stat()
        h.update(f"{path.name}\0{st.st_size}\0".encode())
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


class _Hashing:
    """:func:`corpus_fingerprint` computed in a thread (hashlib lets go of the GIL while it hashes),
    so that it overlaps the build instead of delaying its start.

    The build then reads the files while they are hashed, not after: a file written meanwhile might
    be hashed new and built old. :meth:`result` is therefore given the files' stats taken before
    both began, and if the files changed since, the fingerprint is one no corpus has (the cache is
    rebuilt when next opened), as it would have been had the hash come first (it would be the old
    content's)."""

    def __init__(self, files: Sequence[Path], params: BM25Params, headers: Sequence[str]) -> None:
        self._files = list(files)
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(params, tuple(headers)), daemon=True,
                                        name="paperbot-corpus-fingerprint")  # fmt: skip
        self._thread.start()

    def _run(self, params: BM25Params, headers: tuple[str, ...]) -> None:
        try:
            self._value = corpus_fingerprint(self._files, params, headers)
        except BaseException as exc:  # noqa: BLE001 - raised again by result()
            self._error = exc

    def result(self, stats: list[list[Any]]) -> str:
        """The fingerprint (waits for it; raises what hashing raised), given the files' stats
        taken before the hash and the build began."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        value = str(self._value)
        if _file_stats(self._files) != stats:
            log.info("the corpus changed while its index was built: its cache will be rebuilt")
            return hashlib.blake2b(f"changed while built\0{value}".encode(), digest_size=20).hexdigest()
        return value


def _file_stats(files: Sequence[Path]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for path in files:
        st = path.stat()
        out.append([str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])
    return out


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _cache_dirs(corpus_path: Path, cache_dir: Path | None) -> list[Path]:
    corpus_path = Path(corpus_path).expanduser().resolve()
    first = Path(cache_dir).expanduser() if cache_dir is not None else corpus_path.parent / ".paperbot-index"
    return [first, Path(tempfile.gettempdir()) / f"paperbot-index-{os.getuid()}"]


def cache_path_for(corpus_path: Path, params: BM25Params, cache_dir: Path | None = None) -> Path:
    """Where the cache file of a corpus lives.

    ``cache_dir`` when given (and writable), else ``.paperbot-index/`` beside the corpus, else (a
    read-only corpus folder) a per-user folder in the temp dir. The name combines the corpus name,
    a hash of its absolute path and the parameters, so corpora and settings never collide.
    """
    corpus_path = Path(corpus_path).expanduser().resolve()
    tag = hashlib.blake2b(str(corpus_path).encode(), digest_size=6).hexdigest()
    name = f"{corpus_path.name or 'corpus'}-{tag}-{params.key()}{CACHE_SUFFIX}"
    candidates = _cache_dirs(corpus_path, cache_dir)
    for folder in candidates:
        if _writable_dir(folder):
            return folder / name
    return candidates[-1] / name


#: A transfer folder untouched this long is a dead build's leftover, not a hand-over in progress.
TRANSFER_STALE_SECONDS = 3600.0
_TMP_RE = re.compile(r"\.(\d+)\.[A-Za-z0-9_]+\.tmp$")


def sweep_leftovers(corpus_path: Path, cache_dir: Path | None = None) -> list[Path]:
    """Remove what a killed build left behind: cache ``.tmp`` files whose writer is dead (the pid is
    in their name) in the cache folders of ``corpus_path``, and old-style ``paperbot-transfer-*``
    folders in the temp dir. Returns what was removed; never raises."""
    import shutil

    removed: list[Path] = []
    try:
        folders = _cache_dirs(Path(corpus_path), cache_dir)
    except (OSError, RuntimeError):
        folders = []
    for folder in folders:
        try:
            entries = list(folder.glob(f"*{CACHE_SUFFIX}.*.tmp")) + list(folder.glob("*.npz.*.tmp"))
        except OSError:
            continue
        for path in entries:
            match = _TMP_RE.search(path.name)
            if match and process_alive(int(match.group(1))):
                continue  # another process is writing it now
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                pass
    # Earlier versions handed the index over through these folders; nothing creates them now. The
    # temp dir is shared: a fresh one may be a live hand-over of another (older) paperbot process
    # on this host, so only stale ones go.
    now = time.time()
    try:
        transfers = [
            folder for folder in Path(tempfile.gettempdir()).glob("paperbot-transfer-*")
            if now - folder.stat().st_mtime > TRANSFER_STALE_SECONDS
        ]
    except OSError:
        transfers = []
    for folder in transfers:
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    for path in removed:
        log.warning("removed %s, left behind by an interrupted index build", path)
    return removed


class _Spilled:
    """An array (uint8) that is the content of parts of files (each: a file, where the part starts,
    its bytes), copied into the cache file without reading it into memory."""

    def __init__(self, segments: Sequence[tuple[Path, int, int]]) -> None:
        self.segments = list(segments)
        self.nbytes = sum(n for _, _, n in self.segments)
        self.size = self.nbytes
        self.dtype = np.dtype(np.uint8)

    def blocks(self) -> Iterator[bytes]:
        for path, start, nbytes in self.segments:
            with open(path, "rb") as src:
                at, end = start, start + nbytes
                while at < end:
                    block = os.pread(src.fileno(), min(16 << 20, end - at), at)
                    if not block:
                        raise OSError(f"{path} holds fewer bytes than expected")
                    at += len(block)
                    yield block

    def read(self) -> np.ndarray:
        return np.frombuffer(b"".join(self.blocks()), dtype=np.uint8)


class _Size:
    """An array not made yet, as :func:`_layout` sees one (its dtype and length)."""

    def __init__(self, dtype: np.dtype, count: int) -> None:
        self.dtype, self.size = np.dtype(dtype), int(count)
        self.nbytes = self.dtype.itemsize * self.size


def _layout(arrays: Mapping[str, Any], *, crc: bool = True) -> tuple[dict[str, dict[str, Any]], int]:
    """The cache file's sections (per array: its offset from the data start, dtype, length and, up
    to :data:`_CRC_MAX_BYTES`, CRC-32) and the data's bytes. ``crc=False``: a ten-digit stand-in for
    each CRC (for a header's likely size)."""
    sections: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, arr in arrays.items():
        small = arr.nbytes <= _CRC_MAX_BYTES
        if isinstance(arr, (_Spilled, _Size)):
            value = None
            if small and not crc:
                value = 4294967295
            elif small and isinstance(arr, _Spilled):
                value = 0
                for block in arr.blocks():
                    value = zlib.crc32(block, value)
            dtype = arr.dtype
        else:
            value = (zlib.crc32(memoryview(arr).cast("B")) if crc else 4294967295) if small else None
            dtype = arr.dtype
        sections[name] = {
            "offset": offset,
            "dtype": "|u1" if isinstance(arr, _Spilled) else (
                dtype.newbyteorder("<").str if dtype.byteorder == "=" else dtype.str),
            "count": int(arr.size),
            "crc": value,
        }  # fmt: skip
        offset += -(-int(arr.nbytes) // _ALIGN) * _ALIGN
    return sections, offset


def _header_bytes(
    meta: dict[str, Any], sections: dict[str, dict[str, Any]], data_bytes: int
) -> tuple[bytes, int]:
    """The file's first bytes up to its data (magic, header length and CRC, header, zeros), and
    where the data starts (the next multiple of 4096)."""
    header = dict(meta, format=CACHE_FORMAT, sections=sections, data_bytes=data_bytes)
    raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    data_start = -(-(_PREFIX + len(raw)) // 4096) * 4096
    header_bytes = np.zeros(4, dtype="<u8")  # [header length, CRC, data start, 0]
    header_bytes[:3] = [len(raw), zlib.crc32(raw), data_start]
    head = _MAGIC + header_bytes[:2].tobytes() + raw
    return head + b"\0" * (data_start - len(head)), data_start


class _CacheWriter:
    """A cache file being written: a temp file in its folder (its name holds our pid, so a sweep can
    tell a live writer's file from debris), written through a shared memory map, so each byte of the
    file is written once, in the page cache (no array in this process's own memory, no copy by
    ``write()``).

    :meth:`place` gives, before the header is known, arrays at their place in the file (the first
    sections, made in place by the build); the header's size (hence where the data starts, the next
    multiple of 4096 after it) is guessed then, and :meth:`write` moves them if the guess was a page
    off. The file's space is reserved when mapped (``posix_fallocate``): a full disk is an OSError
    then, never a SIGBUS while writing."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        self.path, self.fd, self.tmp = path, fd, Path(tmp)
        self._maps: list[mmap.mmap] = []  # the newest last; older ones stay while arrays view them
        self._placed: dict[str, tuple[int, np.ndarray]] = {}  # name -> (offset from the data start, array)
        self._placed_end = 0  # the placed sections' end (aligned), from the data start
        self._base = 0  # the data start the placed arrays assume
        self._copies: dict[str, np.ndarray] | None = None  # the placed arrays, when they had to leave

    def _map(self, size: int) -> mmap.mmap:
        if self._maps and len(self._maps[-1]) >= size:
            return self._maps[-1]
        os.posix_fallocate(self.fd, 0, size)
        self._maps.append(mmap.mmap(self.fd, size))
        return self._maps[-1]

    def place(
        self, sizes: Mapping[str, tuple[np.dtype, int]], data_start: int, file_bytes: int
    ) -> dict[str, np.ndarray]:
        """Arrays of these sizes (the file's first sections, in order) at their place in the file,
        for a data start of ``data_start`` and a file of at most ``file_bytes`` (a guess: more is
        mapped later if needed)."""
        if self._placed:
            raise RuntimeError("arrays were placed in this cache file already")
        mm = self._map(max(file_bytes, data_start + 4096))
        out: dict[str, np.ndarray] = {}
        offset = 0
        for name, (dtype, count) in sizes.items():
            nbytes = np.dtype(dtype).itemsize * count
            if data_start + offset + nbytes > len(mm):
                mm = self._map(data_start + offset + nbytes + (1 << 20))
            out[name] = np.frombuffer(mm, dtype=dtype, count=count, offset=data_start + offset)
            self._placed[name] = (offset, out[name])
            offset += -(-nbytes // _ALIGN) * _ALIGN
        self._base, self._placed_end = data_start, offset
        return out

    def placed(self) -> dict[str, np.ndarray]:
        """The placed arrays, where they are now (:meth:`write` may have moved them)."""
        if self._copies is not None:
            return dict(self._copies)
        mm = self._maps[-1] if self._maps else None
        return {name: np.frombuffer(mm, dtype=arr.dtype, count=arr.size, offset=self._base + offset)
                for name, (offset, arr) in self._placed.items()}  # fmt: skip

    def _in_place(self, sections: dict[str, dict[str, Any]], arrays: Mapping[str, Any]) -> bool:
        """Whether the placed arrays are the first sections, where the layout puts them."""
        names = list(sections)[: len(self._placed)]
        if names != list(self._placed):
            return False
        for name in names:
            offset, arr = self._placed[name]
            given = arrays[name]
            if sections[name]["offset"] != offset or not isinstance(given, np.ndarray):
                return False
            same = given.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
            if not same or given.nbytes != arr.nbytes:
                return False
        return True

    def write(self, head: bytes, data_start: int, sections: dict[str, dict[str, Any]],
              arrays: Mapping[str, Any], data_bytes: int) -> None:  # fmt: skip
        """Write the file: ``head`` (up to ``data_start``), then every array at its section (the
        placed ones moved there if needed), then close it (its size: ``data_start + data_bytes``)."""
        placed_end = self._placed_end
        if self._placed and not self._in_place(sections, arrays):
            # not the layout the arrays were placed for: copy them out, then write as if none were
            self._copies = {name: np.array(arrays[name]) for name in self._placed}
            arrays = {**arrays, **self._copies}
            self._placed.clear()
            placed_end = 0
        total = data_start + data_bytes
        mm = self._map(max(total, self._base + placed_end))
        if self._placed and data_start != self._base:
            mm.move(data_start, self._base, placed_end)  # memmove: the pages are the file's own
            self._base = data_start
        # every byte up to the end is written below (a move leaves copies behind, past the placed
        # sections: the next sections and their pads cover them, or the file ends before them)
        mm[:data_start] = head
        for name, spec in sections.items():
            at = data_start + spec["offset"]
            arr = arrays[name]
            nbytes = int(arr.nbytes)
            if name not in self._placed:
                if isinstance(arr, _Spilled):
                    _copy_segments(arr, self.fd, at, mm)
                elif nbytes:
                    mm[at : at + nbytes] = memoryview(np.ascontiguousarray(arr)).cast("B")
            pad = -nbytes % _ALIGN
            if pad:
                mm[at + nbytes : at + nbytes + pad] = bytes(pad)
        os.ftruncate(self.fd, total)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def discard(self) -> None:
        self.close()
        self.tmp.unlink(missing_ok=True)


def _save_arrays(
    arrays: dict[str, Any],
    terms: Sequence[str],
    path: Path,
    meta: dict[str, Any],
    writer: _CacheWriter | None = None,
) -> None:
    """Write the cache atomically: a temp file in the same folder (``writer``'s, which may hold
    arrays placed already: see :class:`_CacheWriter`), then os.replace."""
    arrays = dict(arrays)
    if "vocab_hash" not in arrays:  # a build's arrays: add the vocabulary as stored (postings.Vocabulary)
        arrays.update(postings_module.vocabulary_arrays(terms))
    for name, arr in arrays.items():
        if not isinstance(arr, _Spilled):
            arrays[name] = np.ascontiguousarray(arr)
    sections, data_bytes = _layout(arrays)
    head, data_start = _header_bytes(meta, sections, data_bytes)
    writer = writer or _CacheWriter(path)
    try:
        writer.write(head, data_start, sections, arrays, data_bytes)
        writer.close()
        os.replace(writer.tmp, path)
    except BaseException:
        writer.discard()
        raise


def _copy_segments(arr: _Spilled, fd: int, at: int, mm: mmap.mmap) -> None:
    """Copy the content of ``arr``'s parts of files into the file ``fd`` from ``at``, in the kernel
    where it can (``os.copy_file_range``: no copy through this process), else block by block into
    ``mm`` (the file's map)."""
    for path, start, nbytes in arr.segments:
        done = 0
        with open(path, "rb") as src:
            try:
                while done < nbytes:
                    n = os.copy_file_range(src.fileno(), fd, nbytes - done, start + done, at + done)
                    if n == 0:
                        raise OSError(f"{path} holds fewer bytes than expected")
                    done += n
            except (AttributeError, OSError) as exc:  # not on this system or between these file systems
                if isinstance(exc, OSError) and exc.errno is None:
                    raise
                while done < nbytes:
                    block = os.pread(src.fileno(), min(16 << 20, nbytes - done), start + done)
                    if not block:
                        raise OSError(f"{path} holds fewer bytes than expected") from None
                    mm[at + done : at + done + len(block)] = block
                    done += len(block)
        at += nbytes


class _BadCache(Exception):
    pass


def _read_header(path: Path) -> tuple[dict[str, Any], int, int]:
    """The header of a cache file, the offset of its data, and the file size."""
    try:
        with path.open("rb") as fh:
            prefix = fh.read(_PREFIX)
            size = os.fstat(fh.fileno()).st_size
            if len(prefix) < _PREFIX or not prefix.startswith(_MAGIC):
                raise _BadCache("not a paperbot index")
            length, crc = np.frombuffer(prefix[len(_MAGIC) :], dtype="<u8")[:2].tolist()
            if length > size - _PREFIX:
                raise _BadCache("truncated (header)")
            raw = fh.read(length)
    except OSError as exc:
        raise _BadCache(f"unreadable ({type(exc).__name__}: {exc})") from exc
    if zlib.crc32(raw) != crc:
        raise _BadCache("damaged (header checksum)")
    try:
        header = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise _BadCache(f"damaged (header: {exc})") from exc
    if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT:
        raise _BadCache("written by another version")
    data_start = -(-(_PREFIX + length) // 4096) * 4096
    return header, data_start, size


def _is_current(
    header: dict[str, Any], files: Sequence[Path], params: BM25Params, headers: Sequence[str] = ()
) -> bool:
    """True when the cache was built from these very files with these settings."""
    try:
        settings = _settings_key(params, headers)
        if header.get("settings") == settings and header.get("files_stat") == _file_stats(files):
            return True  # no file was written since: no need to hash the content
        return header.get("fingerprint") == corpus_fingerprint(files, params, headers)
    except OSError:
        return False


def _load(
    path: Path,
    files: Sequence[Path],
    params: BM25Params,
    *,
    check_current: bool = True,
    headers: Sequence[str] = (),
) -> tuple[Index, dict[str, Any]]:
    """Open and validate a cache file; raise _BadCache (with the reason) when it cannot be used."""
    header, data_start, size = _read_header(path)
    if check_current and not _is_current(header, files, params, headers):
        raise _BadCache("stale (the corpus, tokenizer or parameters changed)")
    try:
        sections = header["sections"]
        if size < data_start + int(header["data_bytes"]):
            raise _BadCache(f"truncated ({size} bytes, {data_start + int(header['data_bytes'])} expected)")
        with path.open("rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mm)
        arrays: dict[str, np.ndarray] = {}
        for name, spec in sections.items():
            dtype = np.dtype(spec["dtype"])
            start, count = data_start + int(spec["offset"]), int(spec["count"])
            if dtype.hasobject or count < 0 or start + count * dtype.itemsize > size:
                raise _BadCache(f"damaged ({name} out of the file)")
            arr = np.frombuffer(view, dtype=dtype, count=count, offset=start)
            if spec["crc"] is not None and zlib.crc32(view[start : start + arr.nbytes]) != spec["crc"]:
                raise _BadCache(f"damaged ({name} checksum)")
            arrays[name] = arr
        text_start = data_start + int(sections["paper_text"]["offset"])
        corpus_meta = header["corpus"]
        meta = {
            "corpus": corpus_meta,
            "skipped_blocks": tuple(
                SkippedBlock(str(f), int(line), str(why)) for f, line, why in corpus_meta["skipped"]
            ),
        }
        int(corpus_meta["duplicates"]), list(corpus_meta["files"]), list(corpus_meta["duplicate_details"])
        area_names = [str(a) for a in header["areas"]]
        missing = (set(postings_module.ARRAYS) | set(catalogue_module.ARRAYS)) - set(arrays)
        if missing:
            raise _BadCache(f"damaged (no {', '.join(sorted(missing))})")
        _validate(arrays, len(arrays["indptr"]) - 1, len(area_names))
        core = Postings(params=params, arrays=arrays, avgdl=float(header["avgdl"]))
        index = Index(
            core=core,
            catalogue=Catalogue(arrays, area_names, FileBlob(path, text_start, len(arrays["paper_text"]))),
            fingerprint=str(header["fingerprint"]),
            built_at=float(header["built_at"]),
            build_seconds=float(header["build_seconds"]),
        )
    except _BadCache:
        raise
    except (OSError, ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError) as exc:
        raise _BadCache(f"damaged ({type(exc).__name__}: {exc})") from exc
    return index, meta


def _validate(a: dict[str, np.ndarray], n_terms: int, n_areas: int) -> None:
    """Cheap structural checks so a damaged cache is rebuilt instead of crashing a search later.
    Only O(terms + papers) work: the postings themselves are not read."""

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise _BadCache(f"damaged ({what})")

    for name, kind in {**postings_module.ARRAYS, **catalogue_module.ARRAYS}.items():
        arr = a[name]
        need(arr.ndim == 1 and arr.dtype.kind in ({"i", "u"} if kind in "iu" else {kind}), f"{name} type")
    n_docs = len(a["doc_len"])
    need(n_docs > 0, "no papers")
    need(len(a["indptr"]) == n_terms + 1 and len(a["pos_indptr"]) == n_terms + 1, "vocabulary size")
    need(len(a["idf"]) == n_terms and len(a["baseline"]) == n_terms, "idf size")
    table = a["vocab_hash"]
    need(len(table) > n_terms and len(table) & (len(table) - 1) == 0, "vocabulary table size")
    need(int(np.count_nonzero(table >= 0)) == n_terms and int(table.max(initial=-1)) < n_terms, "vocabulary")
    need(int(a["indptr"][0]) == 0 and int(a["indptr"][-1]) == len(a["post_docs"]), "postings size")
    need(len(a["post_tf"]) == len(a["post_docs"]), "frequencies size")
    need(bool(np.all(np.diff(a["indptr"]) >= 0)), "postings order")
    need(len(a["doc_start"]) == n_docs + 1, "document count")
    need(int(a["pos_indptr"][-1]) == len(a["positions"]), "positions size")
    need(bool(np.all(np.diff(a["doc_start"]) >= 0)), "document starts")
    n_long, n_words = len(a["long_min"]), -(-n_docs // 64)
    need(len(a["long_slot"]) == n_terms and int(a["long_slot"].max(initial=-1)) < n_long, "long terms")
    need(len(a["long_bits"]) == len(a["long_bmax"]) == n_long * n_words, "long term bounds")
    for name in ("paper_flags", "doc_area", "id_order", "fold_order"):
        need(len(a[name]) == n_docs, f"{name} size")
    need(len(a["paper_offsets"]) == 5 * n_docs + 1 and int(a["paper_offsets"][-1]) == len(a["paper_text"]),
         "paper offsets")  # fmt: skip
    need(len(a["id_offsets"]) == n_docs + 1 and int(a["id_offsets"][-1]) == len(a["id_text"]), "id offsets")
    need(bool(np.all(np.diff(a["id_offsets"]) >= 0)), "id offsets order")
    need(bool(np.all(np.diff(a["paper_offsets"]) >= 0)), "paper offsets order")
    need(len(a["title_starts"]) == n_docs + 1 and int(a["title_starts"][-1]) == len(a["title_fold"]),
         "title offsets")  # fmt: skip
    need(int(a["doc_area"].min()) >= 0 and int(a["doc_area"].max()) < n_areas, "areas")
    for name in ("id_order", "fold_order"):
        need(int(a[name].min()) >= 0 and int(a[name].max()) < n_docs, name)
    need(len(a["author_indptr"]) == len(a["author_starts"]) + 1, "authors")
    need(int(a["author_indptr"][-1]) == len(a["author_docs"]), "author postings")


def open_index(
    corpus_path: str | Path,
    params: BM25Params | None = None,
    *,
    cache_dir: Path | None = None,
    previous: Index | None = None,
    progress: Progress | None = None,
    headers: Sequence[str] = (),
) -> tuple[Index, IngestReport]:
    """Open the index of a corpus from its cache file, or build it (and write the cache).

    Args:
        corpus_path: A corpus file or folder.
        params: Ranking parameters (default BM25Okapi k1=1.5 b=0.75 epsilon=0.25).
        cache_dir: Folder for the cache file (default: ``.paperbot-index/`` beside the corpus, or a
            temp folder when that is read-only).
        previous: The index being replaced; the report lists ids added/removed relative to it. It is
            never modified.
        progress: ``progress(stage, done, total)`` with stages ``"parse"``, ``"tokenize"``, ``"index"``;
            called about every 1 %.
        headers: Lines that are a file's header besides ``论文检索`` (the ``[corpus] headers``
            setting); part of the cache key.

    Returns:
        The new index and the ingest report. A built index is served from the file it was just
        written to (memory-mapped), like a loaded one.

    Raises:
        CorpusError: The corpus cannot be read (missing, empty, nothing parseable).
    """
    from retrieval.corpus import HEADER, corpus_files

    params = params or BM25Params()
    headers = tuple(h.strip() for h in headers if h.strip() and h.strip() != HEADER)
    started = time.perf_counter()
    path = Path(corpus_path).expanduser()
    _report_progress(progress, "parse", 0, 1)
    files = corpus_files(path)
    cache_file = cache_path_for(path, params, cache_dir)

    index: Index | None = None
    meta: dict[str, Any] = {}
    if cache_file.exists():
        try:
            index, meta = _load(cache_file, files, params, headers=headers)
        except _BadCache as exc:
            log.warning("index cache %s is %s; rebuilding it", cache_file, exc)
    if index is not None:
        _report_progress(progress, "parse", 1, 1)
        _watch_titles(index, cache_file)
        return index, _cached_report(index, meta, previous, cache_file, started)

    stats = _file_stats(files)  # before reading: a write during the build makes the cache stale
    fingerprint = _Hashing(files, params, headers)  # while the build reads the corpus
    index, corpus_meta, skipped, extra = _build_and_save(
        path, files, params, cache_file, fingerprint=fingerprint, stats=stats, progress=progress,
        started=started, headers=headers,
    )  # fmt: skip
    report = _report(
        index,
        previous,
        files=tuple(corpus_meta["files"]),
        duplicates=int(corpus_meta["duplicates"]),
        duplicate_details=tuple(corpus_meta["duplicate_details"]),
        skipped=skipped,
        cp1252_files=tuple(corpus_meta["cp1252_files"]),
        ignored_files=tuple(corpus_meta["ignored_files"]),
        **_counts_of(corpus_meta),
        build_seconds=time.perf_counter() - started,
        from_cache=False,
        extra=extra,
    )
    if extra.get("cache"):
        _watch_titles(index, Path(str(extra["cache"])))
    return index, report


def _watch_titles(index: Index, cache_file: Path) -> None:
    """Attach the title file of ``index`` (see :mod:`retrieval.titlefile`), having it written first
    when it is missing or stale."""
    from retrieval.titlefile import ensure_titles

    index.papers.attach_titles(ensure_titles(index, cache_file))


def load_cache_file(path: Path, params: BM25Params) -> Index:
    """The index a cache file holds, whatever corpus it was built from (no title file attached).

    Raises:
        ValueError: The file is missing, unreadable, damaged or of another version.
    """
    try:
        return _load(Path(path), (), params, check_current=False)[0]
    except _BadCache as exc:
        raise ValueError(f"the index file {path} is {exc}") from None


def open_current_cache(
    corpus_path: str | Path,
    params: BM25Params,
    *,
    cache_dir: Path | None = None,
    headers: Sequence[str] = (),
) -> tuple[Index, IngestReport] | None:
    """The corpus's index from its cache file, as :func:`open_index` would open it, or None when that
    would need a build (no current cache file, or the corpus cannot be read). Never builds or writes
    the index (its title file, when missing, is written as :func:`open_index` has it written): a
    preforking parent maps the index for its children with it (bot/supervisor.py)."""
    from retrieval.corpus import HEADER, corpus_files

    started = time.perf_counter()
    headers = tuple(h.strip() for h in headers if h.strip() and h.strip() != HEADER)
    path = Path(corpus_path).expanduser()
    try:
        files = corpus_files(path)
        cache_file = cache_path_for(path, params, cache_dir)
        if not cache_file.exists():
            return None
        index, meta = _load(cache_file, files, params, headers=headers)
    except (_BadCache, CorpusError, OSError):
        return None
    _watch_titles(index, cache_file)
    return index, _cached_report(index, meta, None, cache_file, started)


def cache_is_current(
    index: Index,
    corpus_path: str | Path,
    params: BM25Params,
    *,
    cache_dir: Path | None = None,
    headers: Sequence[str] = (),
) -> bool:
    """True when :func:`open_index` would now open ``index`` itself: the corpus's cache file still holds
    that build and the corpus has not changed since. Reads only the file's header and the corpus's
    file stats (its content when a file was written since)."""
    from retrieval.corpus import HEADER, corpus_files

    headers = tuple(h.strip() for h in headers if h.strip() and h.strip() != HEADER)
    path = Path(corpus_path).expanduser()
    try:
        files = corpus_files(path)
        header, _, _ = _read_header(cache_path_for(path, params, cache_dir))
    except (_BadCache, CorpusError, OSError):
        return False
    return header.get("fingerprint") == index.fingerprint and _is_current(header, files, params, headers)


def _cached_report(
    index: Index, meta: dict[str, Any], previous: Index | None, cache_file: Path, started: float
) -> IngestReport:
    """The report of an index opened from its cache file (nothing was built)."""
    corpus_meta = meta["corpus"]
    return _report(
        index,
        previous,
        files=tuple(corpus_meta["files"]),
        duplicates=int(corpus_meta["duplicates"]),
        duplicate_details=tuple(corpus_meta["duplicate_details"]),
        skipped=meta["skipped_blocks"],
        cp1252_files=tuple(str(f) for f in corpus_meta.get("cp1252_files", ())),
        ignored_files=tuple(str(f) for f in corpus_meta.get("ignored_files", ())),
        **_counts_of(corpus_meta),
        build_seconds=0.0,
        from_cache=True,
        extra={"cache": str(cache_file), "load_seconds": time.perf_counter() - started},
    )


def open_cache_file(
    path: str | Path, params: BM25Params, *, fingerprint: str, previous: Index | None = None
) -> tuple[Index, IngestReport]:
    """Open the cache file another process built (memory-mapped, milliseconds); never build.

    The file must carry ``fingerprint`` (the corpus and settings it was published for): a file
    replaced since by another build, or one written by another version, is refused.

    Raises:
        ValueError: The file is missing, unreadable, damaged or holds another index; ``str()`` says
            which, in one line.
    """
    started = time.perf_counter()
    cache_file = Path(path)
    try:
        index, meta = _load(cache_file, (), params, check_current=False)
    except _BadCache as exc:
        raise ValueError(f"the index file {cache_file} is {exc}") from None
    if index.fingerprint != fingerprint:
        found = index.fingerprint[:12]
        raise ValueError(f"the index file {cache_file} now holds another build (fingerprint {found}…)")
    _watch_titles(index, cache_file)
    return index, _cached_report(index, meta, previous, cache_file, started)


#: A corpus up to this size keeps its tokens during the build, so that one of up to
#: RANK_BM25_MAX_DOCS papers gets its statistics from a real rank-bm25 model.
_MODEL_TOKENS_MAX_BYTES = 64 << 20


def _build_and_save(
    path: Path,
    files: Sequence[Path],
    params: BM25Params,
    cache_file: Path,
    *,
    fingerprint: str | _Hashing,
    stats: list[list[Any]],
    progress: Progress | None,
    started: float,
    headers: Sequence[str] = (),
) -> tuple[Index, dict[str, Any], tuple[SkippedBlock, ...], dict[str, object]]:
    """Build the index of a corpus file by file (see :func:`retrieval.build.build_corpus`), write
    its cache file and serve it from there. The papers' text goes to a temp file beside the cache as
    it is read, so a big corpus's text is never held in memory. ``fingerprint``: the corpus's, or
    its hashing under way (waited for once the corpus is read)."""
    from retrieval.build import build_corpus, remove_worker_files
    from retrieval.corpus import HEADER

    spill_path: Path | None = None
    spill: BinaryIO | None = None
    postings_path: Path | None = None
    postings: BinaryIO | None = None
    worker_files: tuple[Path, str] | None = None
    writer: _CacheWriter | None = None
    try:
        writer = _CacheWriter(cache_file)  # the cache file, written from the merge on
        prefix = f"{cache_file.name}.{os.getpid()}."
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=cache_file.parent)
        spill_path, spill = Path(name), os.fdopen(fd, "wb")
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=cache_file.parent)
        postings_path, postings = Path(name), os.fdopen(fd, "w+b")
        # the worker processes' files: this build's own names, removed below whatever happens
        worker_files = (cache_file.parent, f"{prefix}{secrets.token_hex(4)}w")
    except OSError:
        pass  # an unwritable cache folder: the text and postings stay in memory

    def meta_of(built: CorpusBuild, avgdl: float, built_at: float) -> dict[str, Any]:
        return {
            "fingerprint": fingerprint if isinstance(fingerprint, str) else "0" * 40,  # (its length)
            "settings": _settings_key(params, headers),
            "files_stat": stats,
            "tokenizer": TOKENIZER_VERSION,
            "params": params.key(),
            "avgdl": avgdl,
            "built_at": built_at,
            "build_seconds": time.perf_counter() - started,
            "corpus": {
                "files": list(built.files),
                "duplicates": built.duplicates,
                "duplicate_details": list(built.duplicate_details),
                "skipped": [[s.path, s.line, s.reason] for s in _all_skipped(built)],
                "cp1252_files": list(built.cp1252_files),
                "ignored_files": list(built.ignored_files),
                "blocks": built.blocks,
            },
            "areas": built.area_names,
        }

    def place(shape: MergedShape, built: CorpusBuild) -> dict[str, np.ndarray] | None:
        """The core's arrays at their place in the cache file (see _CacheWriter), for the header
        this build will likely have (its CRCs and times stand-ins of their likely lengths)."""
        if writer is None:
            return None
        core = _core_sizes(shape)
        n_terms = len(shape.df)
        likely: dict[str, Any] = {name: _Size(*size) for name, size in core.items()}
        likely.update(built.catalogue)
        if "paper_text" not in likely:
            likely["paper_text"] = _Size(np.uint8, built.text_bytes)
        likely["terms"] = _Size(np.uint8, shape.term_chars + max(n_terms - 1, 0))
        likely["vocab_hash"] = _Size(np.int32, 1 << max(4, (2 * n_terms).bit_length()))
        sections, data_bytes = _layout(likely, crc=False)
        likely_meta = meta_of(built, 123.45678901234567, time.time())
        head, data_start = _header_bytes(likely_meta, sections, data_bytes)
        # room for a page more of header and terms of up to four bytes a character
        room = data_start + 4096 + data_bytes + 3 * shape.term_chars
        try:
            return writer.place(core, data_start, room)
        except OSError as exc:  # e.g. no room on the disk: the arrays are made in memory
            log.debug("making the index arrays in memory: %s", exc)
            return None

    try:
        keep_tokens = sum(f.stat().st_size for f in files) <= _MODEL_TOKENS_MAX_BYTES
        built = build_corpus(path, (HEADER, *headers), spill=spill, postings_spill=postings,
                             keep_tokens=keep_tokens, progress=progress,
                             worker_files=worker_files, place=place)  # fmt: skip
        if built.merged is None:  # pragma: no cover - build_corpus always merges
            raise RuntimeError("the build has no merged arrays")
        for fh in (spill, postings):
            if fh is not None:
                fh.close()
        read_seconds = time.perf_counter() - started
        n = len(built.merged.doc_len)
        _report_progress(progress, "tokenize", n, n)
        if n > RANK_BM25_MAX_DOCS:
            built.merged.docs_tokens = None
        _report_progress(progress, "index", 1, 5)
        core_arrays, avgdl = _core_arrays(built.merged, params, None if writer is None else writer.placed())
        terms = built.merged.terms
        _report_progress(progress, "index", 4, 5)
        if not isinstance(fingerprint, str):
            fingerprint = fingerprint.result(stats)
        built_at = time.time()
        meta = meta_of(built, avgdl, built_at)
        corpus_meta = meta["corpus"]
        arrays: dict[str, Any] = {**core_arrays, **built.catalogue}
        arrays_seconds = time.perf_counter() - started - read_seconds
        if spill_path is not None:
            arrays["paper_text"] = _Spilled([(spill_path if p is None else Path(p), at, n)
                                             for p, at, n in built.text_segments])  # fmt: skip
        extra: dict[str, object] = {"cache": str(cache_file)}
        index: Index | None = None
        try:
            if writer is None:
                raise OSError(f"cannot write in {cache_file.parent}")
            _save_arrays(arrays, terms, cache_file, meta, writer)
        except OSError as exc:
            log.warning("could not save the index cache to %s: %s", cache_file, exc)
            extra["cache"] = None
            if writer is not None:  # the arrays made in the file, wherever the writing left them
                arrays.update(writer.placed())
        else:
            try:  # serve from the file just written: memory-mapped, off the Python heap
                index = _load(cache_file, files, params, check_current=False)[0]
            except _BadCache as exc:  # pragma: no cover - the file was just written
                log.warning("index cache %s cannot be read back (%s); serving the built index",
                            cache_file, exc)  # fmt: skip
        if index is None:
            if isinstance(arrays.get("paper_text"), _Spilled):
                arrays["paper_text"] = arrays["paper_text"].read()
            core = Postings(params=params, terms=terms, arrays=arrays, avgdl=avgdl)
            index = Index(core=core, catalogue=Catalogue(arrays, built.area_names), fingerprint=fingerprint,
                          built_at=built_at, build_seconds=meta["build_seconds"])  # fmt: skip
        _report_progress(progress, "index", 5, 5)
        total = time.perf_counter() - started
        log.info("built the index of %d papers in %.1f s: read and tokenized %.1f s, arrays %.1f s, "
                 "saved and opened %.1f s", n, total, read_seconds, arrays_seconds,
                 total - read_seconds - arrays_seconds)  # fmt: skip
        return index, corpus_meta, _all_skipped(built), extra
    finally:
        if writer is not None:
            writer.discard()  # (the file has its name already if it was written)
        for fh, fh_path in ((spill, spill_path), (postings, postings_path)):
            if fh is not None and not fh.closed:
                fh.close()
            if fh_path is not None:
                fh_path.unlink(missing_ok=True)
        if worker_files is not None:
            remove_worker_files(worker_files)


def id_diff(
    papers: Sequence[Paper], previous: Index | None
) -> tuple[Sequence[str], tuple[str, ...], int]:
    """``(added ids, removed ids, unchanged count)`` of ``papers`` against the index they replace.

    Without a previous index every paper is added: for a paper table that is its
    :meth:`~retrieval.catalogue.PaperTable.id_list` (read from the mapped ids on demand, so a
    serving process holds no string per paper for its start-up report), else a tuple. Ids keep
    corpus order.
    """
    if previous is None:
        if isinstance(papers, PaperTable):
            return papers.id_list(), (), 0
        return tuple(_ids_of(papers)), (), 0
    ids = _ids_of(papers)
    old_ids = _ids_of(previous.papers)
    old = set(old_ids)
    new = set(ids)
    added = tuple(i for i in ids if i not in old)
    removed = tuple(i for i in old_ids if i not in new)
    return added, removed, len(new & old)


def _ids_of(papers: Sequence[Paper]) -> list[str]:
    return papers.ids() if isinstance(papers, PaperTable) else [p.id for p in papers]


def _counts_of(corpus_meta: dict[str, Any]) -> dict[str, Any]:
    """The report's block count as a cache file's header keeps it."""
    return {"blocks": int(corpus_meta.get("blocks", 0))}


def _all_skipped(built: CorpusBuild) -> tuple[SkippedBlock, ...]:
    """What the report's ``skipped`` holds: the files rejected, the blocks skipped and the notes on
    papers that loaded (:class:`~retrieval.models.IngestReport` tells them apart by their field)."""
    return tuple(sorted((*built.rejected, *built.skipped, *built.notes), key=lambda s: (s.path, s.line)))


def _report(index: Index, previous: Index | None, **fields: Any) -> IngestReport:
    added, removed, unchanged = id_diff(index.papers, previous)
    extra = dict(fields.pop("extra", {}))
    extra.update(terms=len(index.terms), postings=int(len(index.post_docs)))
    return IngestReport(
        papers=len(index.papers), added=added, removed=removed, unchanged=unchanged, extra=extra, **fields
    )
