"""The index build in chunks of papers: each chunk is tokenized to term ids and turned into its own
small postings and phrase positions (:class:`ChunkTokenizer`, in this process or in a worker
process), then the chunks are merged, in corpus order, into the index's arrays (:class:`Merger`).

Exactness: a chunk's terms come in their order of first appearance in the chunk, and the merger
gives new terms the next ids in that order, so term ids end up in order of first appearance in the
corpus: rank-bm25's dict order, which its idf floor (a float sum over that order) depends on. A
term's postings are its chunks' postings one after the other (docs ascending); the same holds for
phrase positions. The arrays are those a one-pass build produces, whatever the chunk size
(tests/retrieval/test_build.py builds with several chunk sizes and checks against a plain reference).

Memory: the merger keeps only each chunk's postings and positions (6 + 4 bytes per posting and
position), never a token list of the whole corpus; the final arrays are filled chunk by chunk while
the chunks' parts are released.
"""

from __future__ import annotations

import glob
import itertools
import logging
import multiprocessing
import operator
import os
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import Stemmer

from retrieval import postings
from retrieval._libc import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, die_with_parent, mallopt
from retrieval.catalogue import CatalogueBuilder, CataloguePart, catalogue_part, numbered
from retrieval.corpus import FilePiece, split_file
from retrieval.errors import CorpusError
from retrieval.models import Paper, SkippedBlock
from retrieval.tokenize import _JOINERS, _KEEP_WORD_CHARS, STOPWORDS, analyze_word, surface_bytes

log = logging.getLogger(__name__)

__all__ = [
    "ChunkTokenizer", "CorpusBuild", "Merger", "StoredChunk", "TokenChunk", "build_corpus", "process_file",
]


@dataclass(slots=True)
class TokenChunk:
    """One chunk of papers, tokenized. Term ids are local: ``terms[i]`` is term ``i``, in order of
    first appearance in the chunk; docs and stream positions are counted from the chunk's start."""

    terms: list[str]
    doc_len: np.ndarray  # int32 per doc: index tokens (what rank-bm25 counts)
    stream_len: np.ndarray  # int64 per doc: its phrase tokens and the two gaps
    post_df: np.ndarray  # int64 per term: docs holding it
    post_docs: np.ndarray  # int32, grouped by term (ascending), docs ascending within a term
    post_tf: np.ndarray  # uint16 (uint32 if needed) term frequency per posting
    pos_count: np.ndarray  # int64 per term: its phrase positions
    positions: np.ndarray  # int32 stream positions, grouped by term, ascending within a term
    tokens: np.ndarray | None = None  # int32 index tokens of every doc in order (when asked for)


class ChunkTokenizer:
    """Tokenizes chunks of papers (title and abstract) to term ids.

    Every distinct surface word is analysed once per process and gets a surface id, with its index
    and phrase term ids in two flat tables. A chunk's words are found in one buffer of the chunk's
    text (:func:`~retrieval.tokenize.surface_bytes` per field, then numpy): each word of up to 16
    bytes is read as two 64-bit integers (its bytes, zero-padded), the chunk's distinct words are
    found with one ``np.unique`` (over a hash of the pair, checked exactly against the pair), and
    only those distinct words are looked up in the memo. Longer words are looked up one by one.
    Then numpy gathers from the tables: no Python work per word occurrence.

    With the C kernel built (``retrieval._kernel``, the one :mod:`retrieval.postings` ranks with:
    a stale build is dropped there, with its one warning), C does the same: it reads the fields
    (the common ASCII ones itself, as :func:`~retrieval.tokenize.surface_bytes` reads them, the
    others through it), looks each word up in its table of this tokenizer's surface words and
    returns the new ones for :meth:`_learn`, then counts the chunk's postings and positions from the
    tables (``chunk_arrays``). The numpy path is the definition: the chunks are identical
    (tests/retrieval/test_build_c.py), only the order in which this process numbers its own terms
    differs (a chunk's terms are numbered by first appearance in the chunk either way).

    Args:
        native: Use the C path (None: when it is built).
    """

    def __init__(self, *, native: bool | None = None) -> None:
        self._terms: list[str] = []
        self._vocab: dict[str, int] = {}
        # surface word (surface_bytes's key) -> surface id (on the C path: its table; this is empty)
        self._surface: dict[bytes, int] = {}
        # per surface id: its index term ids and phrase term ids (flat tables + lengths)
        self._index_flat = array("q")
        self._index_len = array("q")
        self._phrase_flat = array("q")
        self._phrase_len = array("q")
        self._stemmer = Stemmer.Stemmer("english")  # this tokenizer's own: no lock shared with queries
        self._stemmer.maxCacheSize = 0  # each word is stemmed once here; PyStemmer's cache costs ~6x
        kernel = postings._kernel
        if native and kernel is None:
            raise RuntimeError(f"the C tokenizer is not available: {postings.KERNEL_UNAVAILABLE}")
        use_c = kernel is not None and native is not False
        self._table = kernel.SurfaceTable(_KEEP_SURFACE, _SHAPE) if use_c else None

    def _learn(self, words: Iterable[bytes]) -> None:
        """Analyse new surface words (all at once: ASCII words, the common case, are stemmed in one
        call, hyphenated ones split as :func:`~retrieval.tokenize.analyze_word` splits them; other
        words go through :func:`~retrieval.tokenize.analyze_word`)."""
        vocab, terms, surface = self._vocab, self._terms, self._surface

        def term_ids(tokens: Iterable[str]) -> list[int]:
            out = []
            for term in tokens:
                i = vocab.get(term)
                if i is None:
                    i = vocab[term] = len(terms)
                    terms.append(term)
                out.append(i)
            return out

        plain = [w for w in words if w.isascii() and b"-" not in w]  # the common case
        if plain:  # one stem each, unless a stopword: in bulk, no Python call per word
            texts = b" ".join(plain).decode("ascii").split(" ")
            keep = [t not in STOPWORDS for t in texts]
            old = len(terms)
            add = vocab.setdefault
            stems = self._stemmer.stemWords(list(itertools.compress(texts, keep)))
            ids = [add(stem, len(vocab)) for stem in stems]
            terms.extend(itertools.islice(vocab, old, None))
            base = len(self._index_len)
            surface.update(zip(plain, range(base, base + len(plain)), strict=True))
            self._index_flat.extend(ids)
            self._index_len.extend(keep)
            self._phrase_flat.extend(ids)
            self._phrase_len.extend(keep)
        hyphenated: list[tuple[bytes, list[str]]] = []  # ASCII word, its parts at hyphens
        other: list[bytes] = []
        to_stem: set[str] = set()
        for word in words:
            if not word.isascii():
                other.append(word)
            elif b"-" in word:
                parts = word.decode("ascii").split("-")
                parts.append("".join(parts))  # the joined form, last here
                to_stem.update(p for p in parts if p and p not in STOPWORDS)
                hyphenated.append((word, parts))
        kept = list(to_stem)
        stems = dict(zip(kept, self._stemmer.stemWords(kept), strict=True))
        for word, parts in hyphenated:  # as analyze_word: the joined form first, then the parts
            phrase = tuple(stems[p] for p in parts[:-1] if p and p not in STOPWORDS)
            joined = stems.get(parts[-1])
            index = phrase if joined is None else (joined, *phrase)
            self._add_surface(word, term_ids(index), term_ids(phrase))
        for word in other:
            index, phrase = analyze_word(word.decode("utf-8", "surrogatepass"))
            self._add_surface(word, term_ids(index), term_ids(phrase))

    def _add_surface(self, word: bytes, index: list[int], phrase: list[int]) -> None:
        self._surface[word] = len(self._index_len)
        self._index_flat.extend(index)
        self._index_len.append(len(index))
        self._phrase_flat.extend(phrase)
        self._phrase_len.append(len(phrase))

    def _lookup(self, words: list[bytes]) -> np.ndarray:
        """Surface ids of distinct words (new ones learnt)."""
        if not words:
            return np.zeros(0, dtype=np.int64)
        missing = [w for w in words if w not in self._surface]
        if missing:
            self._learn(missing)
        if len(words) == 1:
            return np.asarray([self._surface[words[0]]], dtype=np.int64)
        return np.frombuffer(array("q", operator.itemgetter(*words)(self._surface)), dtype=np.int64)

    def _word_ids(self, buf: bytes) -> tuple[np.ndarray, np.ndarray]:
        """The surface id of every word of ``buf`` (words separated by spaces; it starts with one
        space and ends with at least 16), in order, and each word's start in ``buf``."""
        a = np.frombuffer(buf, dtype=np.uint8)
        edges = np.flatnonzero(np.diff((a != 32).view(np.int8)))
        starts = edges[0::2] + 1
        lengths = edges[1::2] + 1 - starts
        n = len(starts)
        sid = np.empty(n, dtype=np.int64)
        short = lengths <= 16
        if not short.all():
            long_at = np.flatnonzero(~short)
            ends = (starts[long_at] + lengths[long_at]).tolist()
            words = [buf[s:e] for s, e in zip(starts[long_at].tolist(), ends, strict=True)]
            distinct = list(dict.fromkeys(words))
            ids = dict(zip(distinct, self._lookup(distinct).tolist(), strict=True))
            sid[long_at] = [ids[w] for w in words]
        at = np.flatnonzero(short) if not short.all() else None
        s_starts = starts if at is None else starts[at]
        s_len = lengths if at is None else lengths[at]
        window = np.lib.stride_tricks.as_strided(a, shape=(max(len(a) - 15, 0), 16), strides=(1, 1))
        pair = window[s_starts].view(np.uint64)  # (n, 2): the word's first 16 bytes and what follows
        pair[:, 0] &= _LOW_BYTES[np.minimum(s_len, 8)]  # the word's bytes, zero-padded (no word holds a 0)
        pair[:, 1] &= _LOW_BYTES[np.clip(s_len - 8, 0, 8)]
        key = pair[:, 0] * np.uint64(0x9E3779B97F4A7C15) ^ pair[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
        # the hash's top bits, room left for the word's index (see _distinct)
        key = (key >> np.uint64(max(len(key).bit_length(), 1) + 2)).astype(np.int64)
        _, first, inverse = _distinct(key, inverse=True)
        del key
        if not np.array_equal(pair[first[inverse]], pair):  # a hash collision: compare the words' bytes
            _, first, inverse = np.unique(pair.view(np.dtype((np.void, 16))).ravel(), return_index=True,
                                          return_inverse=True)  # fmt: skip
            inverse = inverse.ravel()
        ends = (s_starts[first] + s_len[first]).tolist()
        distinct = [buf[s:e] for s, e in zip(s_starts[first].tolist(), ends, strict=True)]
        ids = self._lookup(distinct)[inverse]
        if at is None:
            sid = ids
        else:
            sid[at] = ids
        return sid, starts

    def chunk(self, docs: Iterable[tuple[str, str]], *, keep_tokens: bool = False) -> TokenChunk:
        """Tokenize ``(title, abstract)`` pairs: what :func:`retrieval.index.paper_tokens` gives for
        each paper (title then abstract), and the phrase stream (title, gap, abstract, gap)."""
        docs = list(docs)
        if self._table is not None and docs:
            return self._chunk_c(docs, keep_tokens)
        return self._chunk_numpy(docs, keep_tokens)

    def _chunk_c(self, docs: list[tuple[str, str]], keep_tokens: bool) -> TokenChunk:
        fields = [field for pair in docs for field in pair]
        sid_buf, words_buf, new = self._table.scan(fields, surface_bytes)
        del fields
        sid = np.frombuffer(sid_buf, dtype=np.int64)
        words = np.frombuffer(words_buf, dtype=np.int64)
        if new:  # words the table did not know: learnt, and given their ids (not kept in the dict too)
            self._learn(new)
            self._table.resolve(np.fromiter(map(self._surface.pop, new), np.int64, len(new)), sid)
        out = postings._kernel.chunk_arrays(sid, words, self._index_flat, self._index_len, self._phrase_flat,
                                            self._phrase_len, len(self._terms), keep_tokens)  # fmt: skip
        if out is None:  # a case C leaves to numpy (see chunk_arrays)
            return self._from_surface_ids(sid, np.cumsum(words), keep_tokens)
        del sid, words
        ordered, doc_len, stream_len, post_df, post_docs, post_tf, pos_count, positions, tokens = out
        wide = len(post_tf) == 4 * len(post_docs) and len(post_docs) > 0
        return TokenChunk(
            terms=[self._terms[i] for i in np.frombuffer(ordered, dtype=np.int64).tolist()],
            doc_len=np.frombuffer(doc_len, dtype=np.int32),
            stream_len=np.frombuffer(stream_len, dtype=np.int64),
            post_df=np.frombuffer(post_df, dtype=np.int64),
            post_docs=np.frombuffer(post_docs, dtype=np.int32),
            post_tf=np.frombuffer(post_tf, dtype=np.uint32 if wide else np.uint16),
            pos_count=np.frombuffer(pos_count, dtype=np.int64),
            positions=np.frombuffer(positions, dtype=np.int32),
            tokens=None if tokens is None else np.frombuffer(tokens, dtype=np.int32),
        )

    def _chunk_numpy(self, docs: list[tuple[str, str]], keep_tokens: bool) -> TokenChunk:
        sids: list[np.ndarray] = []
        words_per_field: list[np.ndarray] = []  # title, abstract, title, abstract, ...
        for at in range(0, len(docs), _WORD_BATCH):  # in batches: the word finder's arrays stay small
            pieces = [b""]
            for title, abstract in docs[at : at + _WORD_BATCH]:
                pieces.append(surface_bytes(title))
                pieces.append(surface_bytes(abstract))
            pieces.append(b" " * 16)
            field_start = np.cumsum(np.asarray([len(p) + 1 for p in pieces[:-1]], dtype=np.int64))
            buf = b" ".join(pieces)
            del pieces
            sid, starts = self._word_ids(buf)
            del buf
            words_per_field.append(np.diff(np.searchsorted(starts, field_start), prepend=0)[1:])
            sids.append(sid)
            del sid, starts
        sid = np.concatenate(sids) if sids else np.zeros(0, np.int64)
        del sids
        field_end = np.cumsum(np.concatenate(words_per_field)) if docs else np.zeros(0, np.int64)
        return self._from_surface_ids(sid, field_end, keep_tokens)

    def _from_surface_ids(self, sid: np.ndarray, field_end: np.ndarray, keep_tokens: bool) -> TokenChunk:
        """The chunk from the surface id of each word and the end of each field's words in them."""
        index_flat = np.frombuffer(self._index_flat, dtype=np.int64).copy()
        index_len = np.frombuffer(self._index_len, dtype=np.int64).copy()
        phrase_flat = np.frombuffer(self._phrase_flat, dtype=np.int64).copy()
        phrase_len = np.frombuffer(self._phrase_len, dtype=np.int64).copy()
        tokens, index_counts = _gather(sid, index_flat, index_len)
        stream, phrase_counts = _gather(sid, phrase_flat, phrase_len)
        del sid
        index_per_field = np.diff(_cumsum0(index_counts)[field_end], prepend=0)
        phrase_per_field = np.diff(_cumsum0(phrase_counts)[field_end], prepend=0)
        doc_len = index_per_field[0::2] + index_per_field[1::2]
        # a gap (-1) after every field: phrases never span title/abstract or two papers
        stream = np.insert(stream, np.cumsum(phrase_per_field), -1)
        stream_len = phrase_per_field[0::2] + phrase_per_field[1::2] + 2
        return self._to_chunk(tokens, stream, doc_len, stream_len, keep_tokens)

    def _to_chunk(self, tok: np.ndarray, raw_stream: np.ndarray, lengths: np.ndarray, stream_len: np.ndarray,
                  keep_tokens: bool) -> TokenChunk:  # fmt: skip
        n_docs = len(lengths)
        # Process ids -> chunk ids in order of first appearance in the chunk.
        seen, first, _ = _distinct(tok)
        ordered = seen[np.argsort(first)]
        lut = np.zeros(len(self._terms) + 1, dtype=np.int32)
        lut[ordered] = np.arange(len(ordered), dtype=np.int32)
        local = lut[tok]
        n_terms = len(ordered)
        terms = [self._terms[i] for i in ordered.tolist()]
        # (term, doc) pairs term-major, doc ascending; counts are the term frequencies.
        keys = local.astype(np.int64) * max(n_docs, 1) + np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        keys, tf = np.unique(keys, return_counts=True)
        post_terms = keys // max(n_docs, 1)
        post_docs = (keys - post_terms * max(n_docs, 1)).astype(np.int32)
        post_df = np.bincount(post_terms, minlength=n_terms).astype(np.int64)
        tf_dtype = np.uint16 if int(tf.max(initial=0)) < 2**16 else np.uint32
        del keys, post_terms
        at = np.flatnonzero(raw_stream >= 0)  # stream positions of tokens (not gaps)
        local_stream = lut[raw_stream[at]].astype(np.int64)
        pos_count = np.bincount(local_stream, minlength=n_terms).astype(np.int64)
        # by term, positions ascending: one value sort of (term, position) packed in an int64
        shift = max(len(raw_stream).bit_length(), 1)
        packed = np.sort((local_stream << shift) | at)
        del local_stream, at
        positions = (packed & ((1 << shift) - 1)).astype(np.int32 if len(raw_stream) < 2**31 else np.int64)
        del packed
        return TokenChunk(
            terms=terms,
            doc_len=lengths.astype(np.int32),
            stream_len=stream_len,
            post_df=post_df,
            post_docs=post_docs,
            post_tf=tf.astype(tf_dtype),
            pos_count=pos_count,
            positions=positions,
            tokens=local.astype(np.int32) if keep_tokens else None,
        )


@dataclass(slots=True)
class StoredChunk:
    """A :class:`TokenChunk` whose postings and positions (``post_docs``, ``post_tf``,
    ``positions``) a worker process wrote to a file of its own (``path``; ``spans``: the offset,
    dtype and length of each of the three there), so that they are not sent through a pipe; its
    terms are the worker's own numbers for them (``term_ids``, int32, in the chunk's order: see
    :attr:`FileOutput.new_terms`)."""

    worker: int  # the worker's pid
    term_ids: np.ndarray
    doc_len: np.ndarray
    stream_len: np.ndarray
    post_df: np.ndarray
    pos_count: np.ndarray
    max_tf: int  # the largest of post_tf (0 if none)
    path: str
    spans: list[tuple[int, str, int]]
    tokens: np.ndarray | None = None


@dataclass(slots=True)
class _Part:
    ids: np.ndarray  # int32 global id of each of the chunk's terms
    post_df: np.ndarray  # int32
    pos_count: np.ndarray  # int32
    # doc ids, frequencies, stream positions: in memory, or where they are (a file, None for the
    # spill; offset, dtype, length)
    big: list[np.ndarray] | list[tuple[str | None, int, np.dtype, int]]
    doc_base: int = 0  # what is still to be added to the doc ids and stream positions in ``big``
    stream_base: int = 0


@dataclass(slots=True)
class Merged:
    """The corpus-wide arrays the merger produces (see :mod:`retrieval.postings` for their meaning)."""

    terms: list[str]
    df: np.ndarray  # int64 per term
    indptr: np.ndarray
    post_docs: np.ndarray
    post_tf: np.ndarray
    doc_len: np.ndarray  # int64
    doc_start: np.ndarray
    pos_indptr: np.ndarray
    positions: np.ndarray
    docs_tokens: list[list[str]] | None  # every doc's index tokens, when asked for


@dataclass(slots=True, frozen=True)
class MergedShape:
    """The merged arrays' sizes, known before :meth:`Merger.finish` fills them (its ``place``)."""

    df: np.ndarray  # int64 per term: its postings (``indptr`` is its running sum)
    n_docs: int
    tf_dtype: np.dtype
    n_positions: int
    pos_dtype: np.dtype
    term_chars: int  # the terms' characters, all together


class Merger:
    """Merges :class:`TokenChunk` s, given in corpus order, into the index arrays."""

    def __init__(
        self, *, keep_tokens: bool = False, spill: BinaryIO | None = None, native: bool | None = None
    ) -> None:
        """``spill``: a binary file (read/write) the chunks' postings and positions wait in until
        :meth:`finish`, instead of memory. ``native``: :meth:`finish` copies each (chunk, term) run
        with the C kernel's ``scatter`` (None: when it is built); the numpy scatter is the
        definition, the arrays are identical (tests/retrieval/test_build_c.py)."""
        kernel = postings._kernel
        scatter = getattr(kernel, "scatter", None)
        if native and scatter is None:
            why = postings.KERNEL_UNAVAILABLE or "a build from older source"
            raise RuntimeError(f"the C scatter is not available: {why}")
        self._scatter = scatter if native is not False else None
        self._spill = spill
        self._spilled = 0
        self._vocab: dict[str, int] = {}
        self._parts: list[_Part] = []
        self._doc_len: list[np.ndarray] = []
        self._stream_len: list[np.ndarray] = []
        self._n_docs = 0
        self._n_stream = 0
        self._max_tf = 0
        self._tokens: list[np.ndarray] | None = [] if keep_tokens else None
        self._files: dict[str, int] = {}  # the workers' files of stored chunks: path -> fd
        self._worker_terms: dict[int, list[str]] = {}  # worker pid -> its terms, by its numbers
        self._parked: dict[int, dict[int, list[str]]] = {}  # worker pid -> first number -> terms
        self._worker_lut: dict[int, np.ndarray] = {}  # worker pid -> global id by its numbers (-1: unseen)

    @property
    def n_docs(self) -> int:
        return self._n_docs

    def add_worker_terms(self, new_terms: tuple[int, int, list[str]] | None) -> None:
        """Learn a worker's numbers for terms (its pid, the first number, the terms in order; see
        :attr:`FileOutput.new_terms`), in any order: a range waits until those before it came."""
        if new_terms is None or not new_terms[2]:
            return
        worker, start, strings = new_terms
        table = self._worker_terms.setdefault(worker, [])
        if start > len(table):
            self._parked.setdefault(worker, {})[start] = strings
            return
        if start < len(table):
            return  # learnt already
        table += strings
        parked = self._parked.get(worker, {})
        while len(table) in parked:
            table += parked.pop(len(table))

    def _global_ids(self, strings: list[str]) -> np.ndarray:
        """The global ids of distinct terms: known terms' ids, then the next ids for the new ones in
        the given order (C-level look-ups and one dict update, no Python call per term)."""
        return numbered(self._vocab, strings, np.int32)

    def _worker_ids(self, chunk: StoredChunk) -> np.ndarray:
        """The global ids of a stored chunk's terms, through the worker's numbers: only the terms
        this merger has not yet seen from that worker are looked up by their string."""
        table = self._worker_terms.get(chunk.worker, [])
        local = chunk.term_ids.astype(np.int64)
        if len(local) and int(local.max()) >= len(table):
            raise RuntimeError("a worker's chunk refers to terms it has not sent")
        lut = self._worker_lut.get(chunk.worker)
        if lut is None or len(lut) < len(table):
            grown = np.full(max(len(table), 2 * (0 if lut is None else len(lut))), -1, dtype=np.int32)
            if lut is not None:
                grown[: len(lut)] = lut
            lut = self._worker_lut[chunk.worker] = grown
        ids = lut[local]
        unseen = np.flatnonzero(ids < 0)
        if len(unseen):
            at = local[unseen]
            found = self._global_ids([table[i] for i in at.tolist()])
            ids[unseen] = found
            lut[at] = found
        return ids

    def add(self, chunk: TokenChunk | StoredChunk) -> None:
        ids = self._worker_ids(chunk) if isinstance(chunk, StoredChunk) else self._global_ids(chunk.terms)
        # int32: what waits here for every chunk is ~12 bytes per (chunk, term) (a chunk has fewer
        # than 2**31 postings and positions)
        post_df, pos_count = chunk.post_df.astype(np.int32), chunk.pos_count.astype(np.int32)
        if isinstance(chunk, StoredChunk):  # its doc ids and positions are shifted when read back
            where = [(chunk.path, offset, np.dtype(dtype), count) for offset, dtype, count in chunk.spans]
            self._parts.append(_Part(ids, post_df, pos_count, where, self._n_docs, self._n_stream))
            self._max_tf = max(self._max_tf, chunk.max_tf)
        else:
            end = self._n_stream + int(chunk.stream_len.sum())
            positions = chunk.positions.astype(np.int32 if end < 2**31 else np.int64) + self._n_stream
            big = [(chunk.post_docs + self._n_docs).astype(np.int32), chunk.post_tf, positions]
            if self._spill is not None:
                where = []
                for arr in big:
                    self._spill.write(memoryview(np.ascontiguousarray(arr)).cast("B"))
                    where.append((None, self._spilled, arr.dtype, len(arr)))
                    self._spilled += arr.nbytes
                big = where  # type: ignore[assignment]
            self._parts.append(_Part(ids, post_df, pos_count, big))
            if len(chunk.post_tf):
                self._max_tf = max(self._max_tf, int(chunk.post_tf.max()))
        if self._tokens is not None:
            if chunk.tokens is None:
                raise ValueError("the chunk was tokenized without its tokens")
            self._tokens.append(ids[chunk.tokens] if len(chunk.tokens) else np.zeros(0, np.int64))
        self._doc_len.append(chunk.doc_len)
        self._stream_len.append(chunk.stream_len)
        self._n_docs += len(chunk.doc_len)
        self._n_stream += int(chunk.stream_len.sum())

    def _big(self, part: _Part, buffers: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """A part's doc ids, frequencies and positions; read back from a file into ``buffers`` (one
        per array, grown as needed: the next part's read reuses their memory) when given."""
        if not part.big or isinstance(part.big[0], np.ndarray):
            return part.big  # type: ignore[return-value]
        out = []
        for i, (path, offset, dtype, count) in enumerate(part.big):  # type: ignore[misc]
            if path is None:
                fd = self._spill.fileno()  # type: ignore[union-attr]
            else:
                fd = self._files.get(path, -1)
                if fd < 0:
                    fd = self._files[path] = os.open(path, os.O_RDONLY)
            if buffers is None:
                out.append(_read_spilled(fd, offset, dtype, count))
                continue
            nbytes = count * dtype.itemsize
            if len(buffers[i]) < nbytes:
                buffers[i] = np.empty(max(nbytes, 2 * len(buffers[i])), dtype=np.uint8)
            view = buffers[i][:nbytes]
            if os.preadv(fd, [view], offset) != nbytes:
                raise OSError("the build's spill file is shorter than what was written to it")
            out.append(view.view(dtype))
        return out

    def close(self) -> None:
        """Close the workers' files (:meth:`finish` does it too)."""
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()

    def finish(self, place: Callable[[MergedShape], Mapping[str, np.ndarray] | None] | None = None) -> Merged:
        """The merged arrays (the chunks' parts are released as they are copied in).

        ``place(shape)`` may give, by name, the memory some of them are to be made in (``indptr``,
        ``post_docs``, ``post_tf``, ``doc_start``, ``pos_indptr``, ``positions``: 1-d arrays of the
        shape's sizes and dtypes; e.g. their place in the cache file's memory map), or None: the
        others are allocated here. The values are the same either way."""
        terms = list(self._vocab)
        term_chars = sum(map(len, terms))
        self._vocab.clear()
        self._worker_terms.clear()
        self._parked.clear()
        self._worker_lut.clear()
        n_terms = len(terms)
        df = np.zeros(n_terms, dtype=np.int64)
        pos_count = np.zeros(n_terms, dtype=np.int64)
        for part in self._parts:
            df[part.ids] += part.post_df  # a chunk's ids are distinct
            pos_count[part.ids] += part.pos_count
        tf_dtype = np.dtype(np.uint16 if self._max_tf < 2**16 else np.uint32)
        pos_dtype = np.dtype(np.int32 if self._n_stream < 2**31 else np.int64)
        n_post, n_pos = int(df.sum()), int(pos_count.sum())
        shape = MergedShape(df, self._n_docs, tf_dtype, n_pos, pos_dtype, term_chars)
        given = place(shape) if place is not None else None

        def array(name: str, dtype: np.dtype, count: int) -> np.ndarray:
            out = postings.placed(given, name, dtype, (count,))
            return np.empty(count, dtype=dtype) if out is None else out

        indptr = array("indptr", np.dtype(np.int64), n_terms + 1)
        indptr[0] = 0
        np.cumsum(df, out=indptr[1:])
        pos_indptr = array("pos_indptr", np.dtype(np.int64), n_terms + 1)
        pos_indptr[0] = 0
        np.cumsum(pos_count, out=pos_indptr[1:])
        post_docs = array("post_docs", np.dtype(np.int32), n_post)
        post_tf = array("post_tf", tf_dtype, n_post)
        positions = array("positions", pos_dtype, n_pos)
        post_cursor = indptr[:-1].copy()
        pos_cursor = pos_indptr[:-1].copy()
        scatter = self._scatter
        if self._spill is not None:
            self._spill.flush()
        try:
            # the scatter copies what it reads: the next part's read can reuse the memory
            buffers = [np.empty(0, np.uint8) for _ in range(3)] if scatter is not None else None
            for part in self._parts:
                part_docs, part_tf, part_positions = self._big(part, buffers)
                if scatter is not None:
                    # the same slots and values as below, one copy per (chunk, term) run
                    # (a chunk's ids are distinct; the docs advance the cursor the frequencies share)
                    ids, counts = part.ids, part.post_df
                    tf = part_tf.astype(post_tf.dtype, copy=False)
                    scatter(post_tf, post_cursor, ids, counts, tf, 0, False)
                    scatter(post_docs, post_cursor, ids, counts, part_docs.astype(np.int32, copy=False),
                            part.doc_base, True)  # fmt: skip
                    scatter(positions, pos_cursor, ids, part.pos_count,
                            part_positions.astype(pos_dtype, copy=False), part.stream_base, True)  # fmt: skip
                else:
                    if part.doc_base:
                        part_docs = part_docs + part.doc_base  # int32 (fewer than 2**31 docs)
                    if part.stream_base:
                        part_positions = part_positions.astype(pos_dtype) + part.stream_base
                    dest = _destinations(post_cursor, part.ids, part.post_df)
                    post_docs[dest] = part_docs
                    post_tf[dest] = part_tf
                    dest = _destinations(pos_cursor, part.ids, part.pos_count)
                    positions[dest] = part_positions
                    del dest
                part.big = []
                del part_docs, part_tf, part_positions
        finally:
            self.close()
        self._parts.clear()
        doc_len = np.concatenate(self._doc_len).astype(np.int64) if self._doc_len else np.zeros(0, np.int64)
        stream_len = np.concatenate(self._stream_len) if self._stream_len else np.zeros(0, np.int64)
        doc_start = array("doc_start", np.dtype(np.int64), len(stream_len) + 1)
        doc_start[0] = 0
        np.cumsum(stream_len, out=doc_start[1:])
        docs_tokens = None
        if self._tokens is not None:
            flat = np.concatenate(self._tokens) if self._tokens else np.zeros(0, np.int64)
            ends = np.cumsum(doc_len).tolist()
            words = [terms[t] for t in flat.tolist()]
            docs_tokens = [words[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
            self._tokens = None
        return Merged(terms, df, indptr, post_docs, post_tf, doc_len, doc_start, pos_indptr, positions,
                      docs_tokens)  # fmt: skip


def _read_spilled(fd: int, offset: int, dtype: np.dtype, count: int) -> np.ndarray:
    data = os.pread(fd, count * dtype.itemsize, offset)
    if len(data) != count * dtype.itemsize:
        raise OSError("the build's spill file is shorter than what was written to it")
    return np.frombuffer(data, dtype=dtype)


def _destinations(cursor: np.ndarray, ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Where a chunk's entries (grouped by its terms ``ids``, ``counts`` each) go in a CSR array
    whose next free slot per term is ``cursor``; advances the cursor."""
    starts = np.zeros(len(counts), dtype=np.int64)
    if len(counts) > 1:
        np.cumsum(counts[:-1], out=starts[1:])
    dest = np.repeat(cursor[ids] - starts, counts) + np.arange(int(counts.sum()), dtype=np.int64)
    cursor[ids] += counts
    return dest


def _gather(sid: np.ndarray, table: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The term ids of the surface words ``sid`` in order (from the flat per-surface tables), and how
    many each word gave."""
    start = np.zeros(len(count), dtype=np.int64)
    if len(count) > 1:
        np.cumsum(count[:-1], out=start[1:])
    counts = count[sid]
    total = int(counts.sum())
    ends = np.cumsum(counts)
    index = np.repeat(start[sid] - (ends - counts), counts) + np.arange(total, dtype=np.int64)
    return table[index], counts


#: Papers whose words are found and numbered together (a chunk's words, in batches of this many
#: papers: ~7 MB of temporary arrays per 1,000 papers)
_WORD_BATCH = 2_500
#: The C path's maps of an ASCII byte (surface_bytes's, lowercase first): its byte in a word (b" ":
#: none) and its shape (b"a" letter or digit, b"-" joiner, b" " other)
_KEEP_SURFACE = bytes(range(256)).lower().translate(_KEEP_WORD_CHARS)
_SHAPE = bytes(range(256)).lower().translate(_JOINERS)
#: ``_LOW_BYTES[n]``: a uint64 mask of its n low bytes (the first n bytes of a little-endian read)
_LOW_BYTES = np.asarray([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
if sys.byteorder != "little":
    _LOW_BYTES = _LOW_BYTES.byteswap()


def _distinct(values: np.ndarray, *, inverse: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=inverse)`` for non-negative integers
    (the inverse is empty unless asked for), by one value sort of each value packed with its index
    in an int64: numpy's value sort is several times faster than the argsort ``np.unique`` needs."""
    n = len(values)
    shift = max(n.bit_length(), 1)
    if n == 0 or int(values.min()) < 0 or int(values.max()) >= 1 << (62 - shift):
        if n == 0:
            return values, np.zeros(0, np.int64), np.zeros(0, np.int64)
        out = np.unique(values, return_index=True, return_inverse=inverse)
        return out[0], out[1], out[2].ravel() if inverse else np.zeros(0, np.int64)
    packed = np.sort((values.astype(np.int64) << shift) | np.arange(n, dtype=np.int64))
    sorted_values = packed >> shift
    index = packed & ((1 << shift) - 1)
    del packed
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    inv = np.zeros(0, np.int64)
    if inverse:
        inv = np.empty(n, dtype=np.int64)
        inv[index] = np.cumsum(new) - 1
    return sorted_values[starts].astype(values.dtype), index[starts], inv


def _cumsum0(values: np.ndarray) -> np.ndarray:
    """``[0, v0, v0 + v1, ...]``."""
    out = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=out[1:])
    return out


# --------------------------------------------------------------------------------------------------
# A corpus, file by file: parse, catalogue part and token chunks per file (in worker
# processes for a big corpus), merged here in file order.

#: A corpus of at least this many bytes in two or more files is parsed and tokenized by worker
#: processes (one per core, at most :data:`MAX_WORKERS`); a smaller one in this process.
PARALLEL_MIN_BYTES = 8 << 20
MAX_WORKERS = 2
#: Papers per token chunk (any size gives the same index).
CHUNK_DOCS = 10_000
#: With worker processes, a plain-text file of 1.5 times an eighth of the corpus (a quarter of a
#: worker's share; and at least this many bytes) or more is split at blank lines into pieces of
#: about that size, so that the workers' loads end together (5 files on 2 workers: 3 and 2 files
#: without it, 5 and 5 pieces with it)
SPLIT_MIN_BYTES = 4 << 20


@dataclass(slots=True)
class RecordKey:
    """What de-duplication and ids need of a record (see :class:`retrieval.corpus.Dedup`)."""

    source: str
    explicit_id: str | None
    digest: bytes
    key: bytes = b""  # the abstract's digest
    names: int = 0  # how many authors
    et_al: bool = False
    lead: str = ""  # the first author's surname (see retrieval.corpus.author_lead)
    notes: tuple[SkippedBlock, ...] = ()


@dataclass(slots=True)
class FileOutput:
    """One file, processed: every record's key, what was skipped, and for the records kept their
    catalogue part and token chunks."""

    keys: list[RecordKey]
    skipped: list[SkippedBlock]
    cp1252: bool
    catalogue: CataloguePart
    chunks: list[TokenChunk | StoredChunk]
    logs: list[tuple[str, int, str]]  # (logger, level, message) emitted in a worker
    bad_line: int | None = None  # a piece of a file: its first line that is not UTF-8
    ok: bool = True  # a piece of a file: the split holds (see retrieval.corpus.read_piece)
    # the terms the worker numbered for its stored chunks since its previous output: its pid, the
    # first number, the terms (a later output, or this one, refers to them)
    new_terms: tuple[int, int, list[str]] | None = None
    # the catalogue's text, when the worker wrote it to its file (then ``catalogue.text`` is empty):
    # the file, where it starts, its bytes
    text_at: tuple[str, int, int] | None = None
    rejected: SkippedBlock | None = None  # the file was not read (why)


_PROCESS_TOKENIZER: ChunkTokenizer | None = None
#: This process's files of stored chunks: (folder, name prefix) -> [fd, path, bytes written], or
#: None once writing there failed
_STORE_FILES: dict[tuple[str, str], list[Any] | None] = {}
#: This process's numbers for the terms of its stored chunks, and the terms numbered since its last
#: output
_WORKER_TERMS: dict[str, int] = {}
_WORKER_NEW: list[str] = []
def _store_bytes(store: tuple[str, str], buffers: Sequence[Any]) -> tuple[str, list[int]] | None:
    """Append buffers to this process's file in the folder ``store[0]`` (its name starts with
    ``store[1]``): the file's path and where each buffer starts, or None when writing fails (then
    never again in this process)."""
    entry = _STORE_FILES.get(store)
    if store in _STORE_FILES and entry is None:
        return None
    try:
        if entry is None:
            fd, path = tempfile.mkstemp(prefix=store[1], suffix=".tmp", dir=store[0])
            entry = _STORE_FILES[store] = [fd, path, 0]
        fd, path, at = entry
        starts = []
        for buffer in buffers:
            data = memoryview(buffer).cast("B")
            done = 0
            while done < len(data):
                done += os.pwrite(fd, data[done:], at + done)
            starts.append(at)
            at += len(data)
        entry[2] = at
    except OSError as exc:
        log.debug("keeping the chunks in memory: %s", exc)
        _STORE_FILES[store] = None
        return None
    return path, starts


def _store(chunk: TokenChunk, store: tuple[str, str]) -> TokenChunk | StoredChunk:
    """Write a chunk's postings and positions to this process's file (see :func:`_store_bytes`),
    or keep the chunk as it is when that fails."""
    big = [np.ascontiguousarray(a) for a in (chunk.post_docs, chunk.post_tf, chunk.positions)]
    stored = _store_bytes(store, big)
    if stored is None:
        return chunk
    path, starts = stored
    spans = [(at, arr.dtype.str, len(arr)) for at, arr in zip(starts, big, strict=True)]
    del big
    max_tf = int(chunk.post_tf.max()) if len(chunk.post_tf) else 0
    # this process's numbers for the terms: the main process learns each term's string once
    ids = np.fromiter(map(_WORKER_TERMS.get, chunk.terms, itertools.repeat(-1)), dtype=np.int32,
                      count=len(chunk.terms))  # fmt: skip
    new = ids < 0
    n_new = int(np.count_nonzero(new))
    if n_new:
        ids[new] = np.arange(len(_WORKER_TERMS), len(_WORKER_TERMS) + n_new, dtype=np.int32)
        strings = list(itertools.compress(chunk.terms, new.tolist()))
        _WORKER_TERMS.update(zip(strings, ids[new].tolist(), strict=True))
        _WORKER_NEW.extend(strings)
    return StoredChunk(os.getpid(), ids, chunk.doc_len, chunk.stream_len, chunk.post_df, chunk.pos_count,
                       max_tf, path, spans, chunk.tokens)  # fmt: skip


def _new_worker_terms() -> tuple[int, int, list[str]] | None:
    """The terms this process numbered since the last call (see :attr:`FileOutput.new_terms`)."""
    if not _WORKER_NEW:
        return None
    strings = _WORKER_NEW[:]
    _WORKER_NEW.clear()
    return os.getpid(), len(_WORKER_TERMS) - len(strings), strings


def _worker_start(parent: int) -> None:
    """A worker dies with the process that started it (a killed build leaves no worker behind)."""
    die_with_parent(parent)
    # glibc: a chunk's arrays (10-40 MB each) come from the heap and go back to it, not mmap'd and
    # unmapped each time: that cost as much system time (page faults) as the tokenizing itself
    # (measured: 0.5 s sys per 1.0 s user per chunk, none with these)
    mallopt((M_MMAP_THRESHOLD, 1 << 30), (M_TRIM_THRESHOLD, 1 << 31))


#: What a worker reads first (see :func:`_warm_up`): a paper in the seed format
_WARM_UP_TEXT = (
    "论文检索\n\nReinforcement Learning · Theory\n\nAda Lovelace, Alan Turing 等\n\nWe study how "
    "an agent learns a policy from rewards. Our method, Policy Gradient Search (PGS), converges faster.\n"
)


def _warm_up() -> None:
    """A worker's first task, sent while the main process still plans the work: the imports, the
    tokenizer and the parser's first use (their patterns and word lists) cost ~0.4 s once per
    process, which then overlaps the planning instead of delaying the first file. It reads a paper
    but keeps nothing of it: every output is a pure function of its input."""
    global _PROCESS_TOKENIZER
    from retrieval.corpus import _parse_text, content_digest

    if _PROCESS_TOKENIZER is None:
        _PROCESS_TOKENIZER = ChunkTokenizer()
    for record in _parse_text(_WARM_UP_TEXT, "warm-up.txt")[0]:
        content_digest(record.authors, record.abstract)


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def process_file(
    path: Path,
    display: str,
    headers: Sequence[str],
    drop: frozenset[int] = frozenset(),
    *,
    keep_tokens: bool = False,
    chunk_docs: int = CHUNK_DOCS,
    tokenizer: ChunkTokenizer | None = None,
    capture_logs: bool = False,
    piece: FilePiece | None = None,
    store: tuple[str, str] | None = None,
) -> FileOutput:
    """Parse one corpus file (or a piece of it) and make, for its records except those numbered in
    ``drop``, their catalogue part and token chunks (what
    :func:`retrieval.corpus.load_corpus` and :func:`retrieval.index.build_index` make of them).
    With ``store`` (a folder, a file name prefix), the chunks' postings and positions go to a file
    of this process there (:class:`StoredChunk`). No title is derived: a record without its own
    has an empty title field, derived when the paper is shown (see :class:`Paper.title_derived
    <retrieval.models.Paper>`)."""
    global _PROCESS_TOKENIZER
    from retrieval.corpus import author_lead, own_title, read_file, read_piece

    capture = _Capture() if capture_logs else None
    root = logging.getLogger("retrieval")
    level = root.level
    if capture is not None:
        root.addHandler(capture)
        # A worker process has no logging set up (WARNING): let INFO through to the capture, and the
        # parent, which logs each record again, decide what to show.
        root.setLevel(min(level or logging.WARNING, logging.INFO))
    try:
        bad_line, ok = None, True
        if piece is None:
            result = read_file(path, display, headers)
        else:
            result, bad_line, ok = read_piece(path, display, headers, piece)
        keys = [RecordKey(r.source, r.explicit_id, r.digest, r.key, len(r.authors), r.et_al,
                          author_lead(r.authors), tuple(r.notes)) for r in result.records]  # fmt: skip
        records = [r for i, r in enumerate(result.records) if i not in drop] if drop else result.records
        papers = []
        for r in records:
            title = own_title(r)
            papers.append(Paper(id="", title=title, authors=r.authors, et_al=r.et_al, area=r.area,
                                abstract=r.abstract, url=r.url, source=r.source,
                                title_derived=not title))  # fmt: skip
        del records
        del result.records[:]
        if tokenizer is None:
            if _PROCESS_TOKENIZER is None:
                _PROCESS_TOKENIZER = ChunkTokenizer()
            tokenizer = _PROCESS_TOKENIZER
        fields = [(p.title, p.abstract) for p in papers]  # a derived title is "" here
        chunks: list[TokenChunk | StoredChunk] = []
        for i in range(0, len(fields), chunk_docs):
            chunk = tokenizer.chunk(fields[i : i + chunk_docs], keep_tokens=keep_tokens)
            chunks.append(chunk if store is None else _store(chunk, store))
            del chunk
        catalogue = catalogue_part(papers)
        text_at = None
        if store is not None and (stored := _store_bytes(store, [catalogue.text])) is not None:
            text_at = (stored[0], stored[1][0], len(catalogue.text))
            catalogue.text = b""
    finally:
        if capture is not None:
            root.removeHandler(capture)
            root.setLevel(level)
    logs = capture.records if capture is not None else []
    return FileOutput(keys, result.skipped, result.cp1252, catalogue, chunks, logs, bad_line, ok,
                      _new_worker_terms() if store is not None else None, text_at,
                      result.rejected)  # fmt: skip


@dataclass(slots=True)
class CorpusBuild:
    """A corpus read and tokenized: the merged postings, the catalogue arrays (``paper_text``
    absent when it went to the spill file) and what the ingest report says."""

    merged: Merged | None  # None only while the merger finishes (see ``build_corpus``'s ``place``)
    catalogue: dict[str, np.ndarray]
    area_names: list[str]
    text_bytes: int
    # where the papers' text is, in order, when it went to files: (a file, None for ``spill``; where
    # it starts; its bytes)
    text_segments: tuple[tuple[str | None, int, int], ...]
    files: tuple[str, ...]
    duplicates: int
    duplicate_details: tuple[str, ...]
    skipped: tuple[SkippedBlock, ...]
    cp1252_files: tuple[str, ...]
    ignored_files: tuple[str, ...]
    blocks: int = 0
    notes: tuple[SkippedBlock, ...] = ()
    rejected: tuple[SkippedBlock, ...] = ()


def build_corpus(
    path: Path,
    headers: Sequence[str],
    *,
    spill: BinaryIO | None = None,
    postings_spill: BinaryIO | None = None,
    keep_tokens: bool = False,
    workers: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    chunk_docs: int = CHUNK_DOCS,
    split_bytes: int | None = None,
    worker_files: tuple[Path, str] | None = None,
    place: Callable[[MergedShape, CorpusBuild], Mapping[str, np.ndarray] | None] | None = None,
) -> CorpusBuild:
    """Read, de-duplicate and tokenize a corpus (see :func:`retrieval.corpus.load_corpus` for what
    is read, :func:`retrieval.index.build_index` for the arrays: both give the same).

    Args:
        path: A corpus file or folder.
        headers: Header lines of the plain-text format.
        spill: A binary file the papers' text is written to as it is read (instead of memory).
        postings_spill: A binary file (read/write) the chunks' postings wait in (see :class:`Merger`).
        keep_tokens: Keep every doc's tokens (for a rank-bm25 model).
        workers: Worker processes (default: one per core, at most :data:`MAX_WORKERS`, when the
            corpus has :data:`PARALLEL_MIN_BYTES` in two or more files; else none).
        progress: ``progress(stage, done, total)`` for the ``"parse"`` (files) stage.
        split_bytes: Split plain-text files into pieces of about this many bytes (0: never; default:
            see :data:`SPLIT_MIN_BYTES`). Any split gives the same result.
        worker_files: A folder and a file name prefix (this build's own): worker processes write
            their chunks' postings and positions and their papers' text to files there, named with
            that prefix, instead of sending them to this process (see :class:`StoredChunk`,
            ``CorpusBuild.text_segments``). The caller removes them (:func:`remove_worker_files`)
            once it has copied the text.
        place: ``place(shape, build)``: the memory the merged arrays are to be made in (see
            :meth:`Merger.finish`), given the build without them (``merged`` None) so far.

    Raises:
        CorpusError: The path is missing or holds no corpus file, or no paper could be loaded.
    """
    from retrieval.corpus import scan

    files, ignored, displays = scan(path)
    sizes = [f.stat().st_size for f in files]
    auto = workers is None
    if workers is None:
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if sum(sizes) >= PARALLEL_MIN_BYTES else 0
    if split_bytes is None:
        split_bytes = max(SPLIT_MIN_BYTES, sum(sizes) // (4 * workers)) if workers > 0 else 0
    pieces: list[list[FilePiece] | None] | None = None  # found while the workers start, if any
    if auto and workers > 0 and len(files) == 1:
        pieces = _split_files(files, sizes, headers, split_bytes)
        if pieces[0] is None:
            workers = 0  # one file, not split: nothing to share
    def plan() -> list[list[FilePiece] | None]:
        return pieces if pieces is not None else _split_files(files, sizes, headers, split_bytes)

    store = None if worker_files is None else (str(worker_files[0]), worker_files[1])
    return _build(path, files, ignored, displays, plan, headers, spill, postings_spill, keep_tokens,
                  workers, progress, chunk_docs, store, place)  # fmt: skip


def remove_worker_files(worker_files: tuple[Path, str]) -> None:
    """Remove the files the worker processes of a build wrote (see ``build_corpus``)."""
    folder, prefix = worker_files
    for leftover in Path(folder).glob(f"{glob.escape(prefix)}*.tmp"):
        leftover.unlink(missing_ok=True)


def _build(
    path: Path,
    files: Sequence[Path],
    ignored: Sequence[Path],
    displays: Sequence[str],
    plan: Callable[[], Sequence[Sequence[FilePiece] | None]],
    headers: Sequence[str],
    spill: BinaryIO | None,
    postings_spill: BinaryIO | None,
    keep_tokens: bool,
    workers: int,
    progress: Callable[[str, int, int], None] | None,
    chunk_docs: int,
    store: tuple[str, str] | None,
    place: Callable[[MergedShape, CorpusBuild], Mapping[str, np.ndarray] | None] | None = None,
) -> CorpusBuild:
    from retrieval.corpus import area_key, canonical_areas, display_path, no_paper_error

    def again(fh_list: Sequence[BinaryIO | None]) -> None:
        for fh in fh_list:
            if fh is not None:
                fh.seek(0)
                fh.truncate()

    def read(workers: int, store: tuple[str, str] | None, winners: dict[bytes, str] | None) -> _Read:
        try:
            return _read_files(files, plan, displays, headers, spill, postings_spill, keep_tokens, workers,
                               progress, chunk_docs, store, winners)  # fmt: skip
        except BrokenProcessPool as exc:
            # e.g. a script without an ``if __name__ == "__main__"`` guard (spawn re-runs it)
            log.warning("the index build's worker processes failed (%s); building in this process", exc)
            again((spill, postings_spill))
            return _read_files(files, plan, displays, headers, spill, postings_spill, keep_tokens, 0,
                               progress, chunk_docs, None, winners)  # fmt: skip

    done = read(workers, store, None)
    if done.dedup.winners is not None:
        # a fuller author list came after the record kept: read again keeping it (rare: the same
        # abstract pasted twice, the shorter list first)
        log.info("the same abstract with a fuller author list later on: reading the corpus again")
        done.merger.close()
        again((spill, postings_spill))
        done = read(workers, store, done.dedup.winners)
    builder, merger, dedup, kept, skipped, cp1252 = (
        done.builder, done.merger, done.dedup, done.kept, done.skipped, done.cp1252
    )
    if not kept:
        merger.close()
        raise no_paper_error(path, [*done.rejected, *skipped])
    content_ids = dedup.ids()

    def id_of(key: RecordKey) -> str:
        return key.explicit_id if key.explicit_id is not None else content_ids[key.digest]

    spellings = builder.raw_areas
    canonical = canonical_areas(spellings, builder.raw_area_counts().tolist())
    area_of = [canonical.get(area_key(a), a) if a else "" for a in spellings]
    catalogue, area_names = builder.finish([id_of(k) for k in kept], area_of)
    details = dedup.details(id_of)
    notes = dedup.notes(kept)
    text_bytes, text_segments = builder.text_bytes, tuple(builder.text_segments)
    content_ids.clear()  # these go before the merged arrays fill (the build's peak)
    del kept, dedup, id_of, builder
    built = CorpusBuild(
        merged=None,
        catalogue=catalogue,
        area_names=area_names,
        text_bytes=text_bytes,
        text_segments=text_segments,
        files=tuple(displays),  # every file opened (the report tells the rejected ones apart)
        duplicates=len(details),
        duplicate_details=details,
        skipped=tuple(skipped),
        cp1252_files=tuple(cp1252),
        ignored_files=tuple(display_path(f) for f in ignored),
        blocks=done.blocks,
        notes=notes,
        rejected=tuple(done.rejected),
    )
    try:
        built.merged = merger.finish(None if place is None else lambda shape: place(shape, built))
    finally:
        merger.close()
    return built


def _split_files(
    files: Sequence[Path], sizes: Sequence[int], headers: Sequence[str], split_bytes: int
) -> list[list[FilePiece] | None]:
    """Each file's pieces (see :data:`SPLIT_MIN_BYTES`), or None for a file read whole."""
    big = 1.5 * split_bytes
    return [
        split_file(f, round(size / split_bytes), headers) if split_bytes and size >= big else None
        for f, size in zip(files, sizes, strict=True)
    ]


def _read_files(
    files: Sequence[Path],
    plan: Callable[[], Sequence[Sequence[FilePiece] | None]],
    displays: Sequence[str],
    headers: Sequence[str],
    spill: BinaryIO | None,
    postings_spill: BinaryIO | None,
    keep_tokens: bool,
    workers: int,
    progress: Callable[[str, int, int], None] | None,
    chunk_docs: int,
    store: tuple[str, str] | None = None,
    winners: dict[bytes, str] | None = None,
) -> _Read:
    """Read every file (or piece) in corpus order. ``winners``: a second pass (see
    :attr:`retrieval.corpus.Dedup.winners`), whose warnings the first pass has already logged."""
    from retrieval.corpus import Dedup

    pool = (
        ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                            initializer=_worker_start, initargs=(os.getpid(),))  # fmt: skip
        if workers > 0
        else None
    )
    tokenizer = ChunkTokenizer() if pool is None else None
    # each submit starts a process (spawn): they start, and warm up, while the work is planned
    for _ in range(workers if pool is not None else 0):
        pool.submit(_warm_up)  # type: ignore[union-attr]
    pieces = plan()
    # the work, in corpus order: a file, or each piece of a split file
    units = [(i, piece) for i, split in enumerate(pieces) for piece in (split or [None])]

    def run(i: int, piece: FilePiece | None, drop: frozenset[int] = frozenset()) -> Future[FileOutput]:
        if pool is not None:
            return pool.submit(process_file, files[i], displays[i], headers, drop, keep_tokens=keep_tokens,
                               chunk_docs=chunk_docs, capture_logs=True, piece=piece,
                               store=store)  # fmt: skip
        done: Future[FileOutput] = Future()
        done.set_result(process_file(files[i], displays[i], headers, drop, keep_tokens=keep_tokens,
                                     chunk_docs=chunk_docs, tokenizer=tokenizer, piece=piece))  # fmt: skip
        return done

    builder = CatalogueBuilder(spill)
    merger = Merger(keep_tokens=keep_tokens, spill=postings_spill)
    dedup = Dedup(winners)
    kept: list[RecordKey] = []
    skipped: list[SkippedBlock] = []
    rejected: list[SkippedBlock] = []
    cp1252: list[str] = []
    blocks = 0
    window = max(1, 2 * workers)  # results waiting here stay few: bounded memory
    pending = [run(*unit) for unit in units[:window]]
    submitted = len(pending)

    def learn(out: FileOutput) -> FileOutput:
        # A worker's output may refer to terms it numbered in outputs done before it but not yet
        # taken here (a re-run is done after later tasks): those are done (one result queue, in
        # order), so their terms are learnt now
        merger.add_worker_terms(out.new_terms)
        for future in pending:
            if future.done() and not future.cancelled() and future.exception() is None:
                merger.add_worker_terms(future.result().new_terms)
        return out

    def next_output() -> FileOutput:
        nonlocal submitted
        out = pending.pop(0).result()
        if submitted < len(units):
            pending.append(run(*units[submitted]))
            submitted += 1
        return learn(out)

    try:
        for i in range(len(files)):
            outs = [(piece, next_output()) for piece in (pieces[i] or [None])]
            holds = all(out.ok for _, out in outs) and any(out.keys or out.skipped for _, out in outs)
            if pieces[i] is not None and not holds:
                log.debug("%s: the split does not hold; reading the whole file", displays[i])
                outs = [(None, learn(run(i, None).result()))]
            bad_lines = [out.bad_line for _, out in outs if out.bad_line is not None]
            # the pieces of a split file: one line, as the whole file gives (see corpus.py), and not
            # again in a second pass
            if bad_lines and winners is None:
                logging.getLogger("retrieval.corpus").info(
                    "%s:%d: not valid UTF-8; read as Windows-1252", displays[i], min(bad_lines)
                )
            if any(out.cp1252 for _, out in outs):
                cp1252.append(displays[i])
            rejected += [out.rejected for _, out in outs if out.rejected is not None]
            for piece, out in outs:
                for name, level, message in out.logs if winners is None else ():
                    logging.getLogger(name).log(level, "%s", message)
                drop = frozenset(j for j, key in enumerate(out.keys) if not dedup.keep(key))
                if drop:  # duplicates of papers read before: made again without them (rare)
                    again = learn(run(i, piece, drop).result())
                    if again.keys != out.keys:
                        raise CorpusError(f"{displays[i]} changed while it was read; load the corpus again")
                    out = again
                skipped += out.skipped
                blocks += len(out.keys) + len(out.skipped)
                kept += [key for j, key in enumerate(out.keys) if j not in drop]
                builder.add(out.catalogue, out.text_at)
                for chunk in out.chunks:
                    merger.add(chunk)
                del out
            del outs
            if progress is not None:
                progress("parse", i + 1, len(files))
    finally:
        if pool is not None:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
    return _Read(builder, merger, dedup, kept, skipped, cp1252, rejected, blocks)


@dataclass(slots=True)
class _Read:
    """What reading a corpus's files gave (see ``_read_files``)."""

    builder: CatalogueBuilder
    merger: Merger
    dedup: Any
    kept: list[RecordKey]
    skipped: list[SkippedBlock]
    cp1252: list[str]
    rejected: list[SkippedBlock]
    blocks: int
