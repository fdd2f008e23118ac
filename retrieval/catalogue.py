"""The catalogue of an index: the papers' text (made into :class:`Paper` objects only on demand),
ids, areas, authors, autocomplete and "did you mean".

Everything is a few flat arrays (memory-mapped from the cache file when served), so opening a
catalogue of a million papers creates no per-paper Python object:

* ``paper_text`` — one UTF-8 blob holding, per paper, its title, authors (joined by U+001F),
  abstract, url and source; ``paper_offsets[5 * i + f]`` is where field ``f`` of paper ``i``
  starts; ``paper_flags`` bit 0 is ``et_al``, bit 1 "has a url", bit 2 "the title is derived": the
  source gave none, the field is empty and :class:`PaperTable` reads the title from the index's
  title file (:mod:`retrieval.titlefile`), or derives it from the abstract until that file is
  written (an index holds no derived title: building one derives none). The ids
  have a blob of their own (``id_text``/``id_offsets``), so listing every id reads a few MB, not
  every abstract's page.
* ``doc_area`` — per paper, its area's number in ``area_names`` (kept in the file's header).
* ``id_order`` / ``fold_order`` — papers sorted by id, and (stably) by case-folded id: exact and
  case-insensitive look-ups and id-prefix autocomplete are binary searches.
* ``title_fold`` / ``title_starts`` — every case-folded title the source gave in one blob (a derived
  title is an empty line), for autocomplete by title words (a substring scan in C, then a check of
  the few candidates; :meth:`retrieval.index.Index.complete_ids` finds derived titles).
* ``author_text`` / ``author_starts`` / ``author_indptr`` / ``author_docs`` — distinct normalised
  author names in one blob (substring search) and a CSR author -> papers table.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import os
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, overload

import numpy as np
import numpy.typing as npt

from retrieval.corpus import area_key, normalize_name
from retrieval.models import AREA_SEPARATOR, Paper

if TYPE_CHECKING:
    from retrieval.titlefile import TitleFile, TitleWatch

__all__ = [
    "ARRAYS",
    "Catalogue",
    "CatalogueBuilder",
    "CataloguePart",
    "IdList",
    "IdSet",
    "PaperTable",
    "catalogue_arrays",
    "catalogue_part",
]

IntArray = npt.NDArray[np.int32]

#: The catalogue's arrays and their kinds ("u" bytes, "i" integer), as the cache file stores them.
ARRAYS: dict[str, str] = {
    "paper_text": "u",
    "paper_offsets": "i",
    "id_text": "u",
    "id_offsets": "i",
    "paper_flags": "u",
    "doc_area": "i",
    "id_order": "i",
    "fold_order": "i",
    "title_fold": "u",
    "title_starts": "i",
    "author_text": "u",
    "author_starts": "i",
    "author_indptr": "i",
    "author_docs": "i",
}
_FIELDS = 5  # title, authors, abstract, url, source
_AUTHOR_SEP = "\x1f"
_ET_AL, _HAS_URL, _DERIVED = 1, 2, 4
#: Derived titles a :class:`PaperTable` keeps (about 100 bytes each); past it, it starts afresh.
DERIVED_TITLES_KEPT = 50_000


@dataclass(slots=True)
class CataloguePart:
    """The catalogue of a chunk of papers, before ids and canonical areas are known (see
    :class:`CatalogueBuilder`). Areas and author names are numbered in order of first appearance."""

    text: bytes  # title, authors, abstract, url and source of each paper, UTF-8, concatenated
    text_len: np.ndarray  # int64, 5 per paper: the byte length of each field
    flags: np.ndarray  # uint8 per paper
    area_names: list[str]
    area: np.ndarray  # int64 per paper, into area_names
    title_fold: bytes  # case-folded titles, each followed by "\n"
    title_len: np.ndarray  # int64 per paper: its bytes in title_fold
    author_names: list[str]  # normalised names
    author_count: np.ndarray  # int64 per paper
    author_ids: np.ndarray  # int64 per (paper, author) in order, into author_names


def _order(keys: list[str]) -> np.ndarray:
    """``sorted(range(len(keys)), key=keys.__getitem__)`` as int32 (stable): for ASCII keys without
    NUL a numpy sort of their bytes (the same order: bytes compare as code points, and numpy pads a
    shorter key with NULs, which sort first, as a prefix does)."""
    joined = "".join(keys)
    if keys and joined.isascii() and "\x00" not in joined:
        width = max(map(len, keys)) or 1
        return np.argsort(np.array(keys, dtype=f"S{width}"), kind="stable").astype(np.int32)
    return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int32)


def catalogue_part(papers: Iterable[Paper]) -> CataloguePart:
    """The catalogue part of some papers (their ``id`` is not used; their ``area`` as given)."""
    pieces: list[bytes] = []
    flags = array("B")
    areas: dict[str, int] = {}
    area = array("q")
    titles: list[bytes] = []
    names: dict[str, int] = {}
    norm_cache: dict[str, str] = {}
    author_count = array("q")
    author_ids = array("q")
    for p in papers:
        authors = _AUTHOR_SEP.join(a.replace(_AUTHOR_SEP, " ") for a in p.authors)
        title = p.indexed_title
        pieces += [s.encode("utf-8", "surrogatepass") for s in
                   (title, authors, p.abstract, p.url or "", p.source)]  # fmt: skip
        flags.append((_ET_AL if p.et_al else 0) | (_HAS_URL if p.url is not None else 0)
                     | (_DERIVED if p.title_derived else 0))  # fmt: skip
        area.append(areas.setdefault(p.area, len(areas)))
        titles.append(title.casefold().replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n")
        for name in p.authors:
            norm = norm_cache.get(name)
            if norm is None:
                norm = norm_cache[name] = normalize_name(name).replace("\n", " ")
            author_ids.append(names.setdefault(norm, len(names)))
        author_count.append(len(p.authors))
    return CataloguePart(
        text=b"".join(pieces),
        text_len=np.asarray([len(x) for x in pieces], dtype=np.int64),
        flags=np.frombuffer(flags, dtype=np.uint8).copy() if len(flags) else np.zeros(0, np.uint8),
        area_names=list(areas),
        area=_int64(area),
        title_fold=b"".join(titles),
        title_len=np.asarray([len(t) for t in titles], dtype=np.int64),
        author_names=list(names),
        author_count=_int64(author_count),
        author_ids=_int64(author_ids),
    )


def numbered(numbers: dict[str, int], names: list[str], dtype: type = np.int64) -> np.ndarray:
    """The numbers of distinct ``names`` in ``numbers``, new ones numbered next in their order (and
    added): C-level look-ups and one dict update, no Python call per name."""
    ids = np.fromiter(map(numbers.get, names, itertools.repeat(-1)), dtype=dtype, count=len(names))
    new = ids < 0
    n_new = int(np.count_nonzero(new))
    if n_new:
        ids[new] = np.arange(len(numbers), len(numbers) + n_new, dtype=dtype)
        numbers.update(zip(itertools.compress(names, new.tolist()), ids[new].tolist(), strict=True))
    return ids


def _read_at(path: str, offset: int, nbytes: int) -> bytes:
    with open(path, "rb") as fh:
        data = os.pread(fh.fileno(), nbytes, offset)
    if len(data) != nbytes:
        raise OSError(f"{path} is shorter than what was written to it")
    return data


def _int64(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=np.int64).copy() if len(values) else np.zeros(0, np.int64)


class CatalogueBuilder:
    """Joins :class:`CataloguePart` s (in corpus order) into the catalogue arrays.

    Args:
        spill: Where the papers' text goes as parts arrive (a file opened for binary writing): a big
            corpus's text then never sits in memory; ``None`` keeps it in memory.
    """

    def __init__(self, spill: BinaryIO | None = None) -> None:
        self._spill = spill
        self._text: list[bytes] = []
        self._text_bytes = 0
        self._segments: list[tuple[str | None, int, int]] = []
        self._spilled_elsewhere = 0  # text bytes not in the spill (they are in other files)
        self._text_len: list[np.ndarray] = []
        self._flags: list[np.ndarray] = []
        self._raw_areas: dict[str, int] = {}
        self._area: list[np.ndarray] = []
        self._titles: list[bytes] = []
        self._title_len: list[np.ndarray] = []
        self._names: dict[str, int] = {}
        self._author_count: list[np.ndarray] = []
        self._author_ids: list[np.ndarray] = []

    @property
    def text_bytes(self) -> int:
        """Bytes of the papers' text so far."""
        return self._text_bytes

    @property
    def raw_areas(self) -> list[str]:
        """Every area as the papers gave it, in order of first appearance."""
        return list(self._raw_areas)

    def raw_area_counts(self) -> np.ndarray:
        """Papers per raw area (numbered as :attr:`raw_areas`)."""
        return np.bincount(np.concatenate(self._area), minlength=len(self._raw_areas)) if self._area else (
            np.zeros(0, np.int64)
        )

    @property
    def text_segments(self) -> list[tuple[str | None, int, int]]:
        """Where the papers' text is, in order, when it went to files: (a file given to :meth:`add`,
        or None for the spill; where it starts; its bytes). Empty when it is in memory."""
        return self._segments

    def add(self, part: CataloguePart, text_at: tuple[str, int, int] | None = None) -> None:
        """Add a part; ``text_at``: its text is not in the part but in a file (the file, where it
        starts, its bytes)."""
        if text_at is not None and self._spill is not None:
            self._add_segment(text_at)
            self._text_bytes += text_at[2]
        else:
            text = part.text if text_at is None else _read_at(*text_at)
            if self._spill is not None:
                self._spill.write(text)
                self._add_segment((None, self._text_bytes - self._spilled_elsewhere, len(text)))
            else:
                self._text.append(text)
            self._text_bytes += len(text)
        self._text_len.append(part.text_len)
        self._flags.append(part.flags)
        local = numbered(self._raw_areas, part.area_names)
        self._area.append(local[part.area] if len(part.area) else np.zeros(0, np.int64))
        self._titles.append(part.title_fold)
        self._title_len.append(part.title_len)
        local = numbered(self._names, part.author_names)
        self._author_count.append(part.author_count)
        self._author_ids.append(local[part.author_ids] if len(part.author_ids) else np.zeros(0, np.int64))

    def _add_segment(self, segment: tuple[str | None, int, int]) -> None:
        path, start, nbytes = segment
        if path is not None:
            self._spilled_elsewhere += nbytes
        last = self._segments[-1] if self._segments else None
        if last is not None and last[0] == path and last[1] + last[2] == start:  # one after the other
            self._segments[-1] = (path, last[1], last[2] + nbytes)
        else:
            self._segments.append(segment)

    def finish(self, ids: Sequence[str], area_of: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """The catalogue arrays and the area names they refer to.

        Args:
            ids: Every paper's id, in order.
            area_of: The display area of each raw area (numbered as :attr:`raw_areas`).

        Returns:
            The arrays (``paper_text`` is absent when it was spilled: it is the spill file's
            content) and the area names.
        """
        n = len(ids)
        # areas: numbered by first appearance of the display area over the papers
        names = list(dict.fromkeys(area_of))
        number = {a: i for i, a in enumerate(names)}
        display = np.asarray([number[a] for a in area_of], dtype=np.int64)
        raw = np.concatenate(self._area) if self._area else np.zeros(0, np.int64)
        per_doc = display[raw] if len(raw) else np.zeros(0, np.int64)
        seen, first = np.unique(per_doc, return_index=True)
        ordered = seen[np.argsort(first)]
        renumber = np.zeros(len(names) + 1, dtype=np.int32)
        renumber[ordered] = np.arange(len(ordered), dtype=np.int32)
        doc_area = renumber[per_doc].astype(np.int32)
        area_names = [names[i] for i in ordered.tolist()]

        offsets = np.zeros(n * _FIELDS + 1, dtype=np.int64)
        if self._text_len:
            np.cumsum(np.concatenate(self._text_len), out=offsets[1:])
        id_bytes = [i.encode("utf-8", "surrogatepass") for i in ids]
        id_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(x) for x in id_bytes], out=id_offsets[1:])
        id_order = _order(ids)
        fold_order = _order([i.casefold() for i in ids])  # stable
        title_starts = np.zeros(n + 1, dtype=np.int64)
        if self._title_len:
            np.cumsum(np.concatenate(self._title_len), out=title_starts[1:])
        arrays: dict[str, np.ndarray] = {
            "paper_offsets": offsets,
            "id_text": _bytes_array(b"".join(id_bytes)),
            "id_offsets": id_offsets,
            "paper_flags": np.concatenate(self._flags) if self._flags else np.zeros(0, np.uint8),
            "doc_area": doc_area,
            "id_order": id_order,
            "fold_order": fold_order,
            "title_fold": _bytes_array(b"".join(self._titles)),
            "title_starts": title_starts,
            **self._author_arrays(n),
        }
        if self._spill is None:
            arrays = {"paper_text": _bytes_array(b"".join(self._text)), **arrays}
        return arrays, area_names

    def _author_arrays(self, n: int) -> dict[str, np.ndarray]:
        counts = np.concatenate(self._author_count) if self._author_count else np.zeros(0, np.int64)
        a = np.concatenate(self._author_ids) if self._author_ids else np.zeros(0, np.int64)
        docs = np.repeat(np.arange(n, dtype=np.int32), counts)
        names = list(self._names)
        order = np.argsort(a, kind="stable")
        indptr = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(np.bincount(a, minlength=len(names)), out=indptr[1:])
        starts = np.zeros(len(names), dtype=np.int64)
        if names:
            np.cumsum([len(n) + 1 for n in names[:-1]], out=starts[1:])
        return {
            "author_text": _bytes_array("\n".join(names).encode("utf-8", "surrogatepass")),
            "author_starts": starts,  # in characters of the decoded text
            "author_indptr": indptr,
            "author_docs": docs[order],
        }


def catalogue_arrays(papers: Sequence[Paper]) -> tuple[dict[str, np.ndarray], list[str]]:
    """The catalogue arrays of ``papers`` (in corpus order) and the area names they refer to."""
    builder = CatalogueBuilder()
    builder.add(catalogue_part(papers))
    return builder.finish([p.id for p in papers], builder.raw_areas)


def _bytes_array(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


class FileBlob:
    """A blob read from a file with ``os.pread`` when sliced (``blob[a:b]`` -> bytes).

    The papers' text is read so rather than through the memory map: a shown paper is a few hundred
    bytes at a random place, and a mapped read would page in (and count in the process's RSS) the
    64 KB around it that the kernel maps on each fault.
    """

    def __init__(self, path: str | os.PathLike[str], offset: int, length: int) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - lives as long as the index
        self._fd = self._file.fileno()
        self._offset = offset
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, key: slice) -> bytes:
        start, stop, _ = key.indices(self._length)
        if stop <= start:
            return b""
        return os.pread(self._fd, stop - start, self._offset + start)


Buffer = bytes | memoryview | FileBlob


class PaperTable(Sequence[Paper]):
    """The papers of an index in corpus order; each :class:`Paper` is made when asked for.

    Indexing, slicing and iteration work as on a tuple (``table[3]``, ``table[:5]``, ``for p in
    table``); ``table.id(i)`` and ``table.title(i)`` read one field without making the paper. A
    title the source did not give is derived from the abstract the first time it is asked for
    (:func:`retrieval.titles.derive_title`, about a millisecond) and kept (at most
    :data:`DERIVED_TITLES_KEPT`).
    """

    def __init__(self, text: Buffer, offsets: np.ndarray, ids: Buffer, id_offsets: np.ndarray,
                 flags: np.ndarray, doc_area: np.ndarray, area_names: list[str],
                 id_order: np.ndarray | None = None) -> None:  # fmt: skip
        self._text = text
        self._offsets = offsets
        self._ids = ids
        self._id_offsets = id_offsets
        self._flags = flags
        self._doc_area = doc_area
        self._areas = area_names
        self._n = len(flags)
        # Positions sorted by id (the catalogue's ``id_order``): exact look-ups without an id dict.
        self._id_order = id_order
        self._derived: dict[int, str] = {}  # paper -> its derived title, once asked for
        # the title file of the cached index (retrieval/titlefile.py), once an opener attaches it
        self._title_watch: TitleWatch | None = None

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Paper: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Paper, ...]: ...
    def __getitem__(self, i: int | slice) -> Paper | tuple[Paper, ...]:
        if isinstance(i, slice):
            return tuple(self._paper(j) for j in range(*i.indices(self._n)))
        j = int(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError("paper index out of range")
        return self._paper(j)

    def __iter__(self) -> Iterator[Paper]:
        for j in range(self._n):
            yield self._paper(j)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PaperTable | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _field(self, i: int, f: int) -> str:
        k = i * _FIELDS + f
        return str(self._text[int(self._offsets[k]) : int(self._offsets[k + 1])], "utf-8", "surrogatepass")

    def text_bytes(self) -> int:
        """Size of the papers' text blob."""
        return int(self._offsets[-1])

    def id(self, i: int) -> str:
        """The id of paper ``i``."""
        a, b = int(self._id_offsets[i]), int(self._id_offsets[i + 1])
        return str(self._ids[a:b], "utf-8", "surrogatepass")

    def ids(self) -> list[str]:
        """Every id, in corpus order (reads only the ids' blob)."""
        text = str(self._ids, "utf-8", "surrogatepass")
        bounds = self._id_offsets.tolist()
        if text.isascii():  # byte offsets are character offsets
            return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        return [self.id(i) for i in range(self._n)]

    def find(self, paper_id: str) -> int | None:
        """The position of the paper whose id is exactly ``paper_id``, or None (a binary search over
        the mapped ids: no Python object per paper)."""
        order = self._id_order
        if order is None:
            raise TypeError("this paper table has no id order")
        if not isinstance(paper_id, str):
            return None
        j = bisect.bisect_left(range(len(order)), paper_id, key=lambda k: self.id(int(order[k])))
        if j < len(order) and self.id(int(order[j])) == paper_id:
            return int(order[j])
        return None

    def id_list(self) -> IdList:
        """Every id in corpus order, as a tuple-like sequence read from the mapped ids on demand
        (what :meth:`ids` returns, without a string per paper held)."""
        return IdList(self)

    def id_set(self) -> IdSet:
        """The ids of these papers as a set-like container (``pid in table.id_set()``), read from the
        mapped ids (:meth:`find`): it holds no Python object per paper."""
        return IdSet(self)

    def title(self, i: int) -> str:
        """The title of paper ``i`` (derived from its abstract when the source gave none)."""
        if int(self._flags[i]) & _DERIVED:
            return self.derived_title(i)
        return self._field(i, 0)

    def title_is_derived(self, i: int) -> bool:
        """Whether paper ``i``'s title is derived from its abstract (the source gave none)."""
        return bool(int(self._flags[i]) & _DERIVED)

    def abstract(self, i: int) -> str:
        """The abstract of paper ``i``."""
        return self._field(i, 2)

    def derived_title_known(self, i: int) -> bool:
        """Whether paper ``i``'s derived title is at hand without deriving it (in the title file, or
        derived before and kept)."""
        return i in self._derived or self.title_file() is not None

    def derived_count(self) -> int:
        """How many papers' titles are derived from their abstracts."""
        return int(np.count_nonzero(np.bitwise_and(self._flags, _DERIVED))) if self._n else 0

    def attach_titles(self, watch: TitleWatch | None) -> None:
        """Read derived titles from the title file ``watch`` finds, once it is there
        (:mod:`retrieval.titlefile`); until then they are derived when asked for."""
        self._title_watch = watch

    def title_file(self) -> TitleFile | None:
        """The title file attached to this table, when it is there and whole."""
        watch = self._title_watch
        return None if watch is None else watch.get()

    def derived_title(self, i: int, abstract: str | None = None) -> str:
        """Paper ``i``'s title derived from its abstract (``abstract``, when the caller has read it):
        read from the title file when there is one, else derived once and then kept."""
        watch = self._title_watch
        if watch is not None:
            found = watch.get()
            if found is not None:
                return found.title(i)
        known = self._derived.get(i)
        if known is None:
            from retrieval.titles import derive_title

            known = derive_title(self._field(i, 2) if abstract is None else abstract)
            if len(self._derived) >= DERIVED_TITLES_KEPT:
                self._derived.clear()
            self._derived[i] = known
        return known

    def _paper(self, i: int) -> Paper:
        k = i * _FIELDS
        o = self._offsets[k : k + _FIELDS + 1].tolist()
        data = bytes(self._text[o[0] : o[-1]]) if o[-1] > o[0] else b""  # one read per paper
        base = o[0]
        if data.isascii():  # byte offsets are character offsets
            raw = data.decode("ascii")
            f = [raw[a - base : b - base] for a, b in zip(o, o[1:], strict=False)]
        else:
            pairs = zip(o, o[1:], strict=False)
            f = [str(data[a - base : b - base], "utf-8", "surrogatepass") for a, b in pairs]
        flags = int(self._flags[i])
        derived = bool(flags & _DERIVED)
        title = self.derived_title(i, f[2]) if derived else f[0]
        return Paper(
            id=self.id(i), title=title, authors=tuple(f[1].split(_AUTHOR_SEP)) if f[1] else (),
            et_al=bool(flags & _ET_AL), area=self._areas[int(self._doc_area[i])], abstract=f[2],
            url=f[3] if flags & _HAS_URL else None, source=f[4], title_derived=derived,
        )  # fmt: skip


class IdSet:
    """The ids of a :class:`PaperTable` as an immutable set-like container: ``in`` (exact, a binary
    search over the mapped ids), ``len`` and iteration in id order. Nothing per paper is held."""

    __slots__ = ("_table",)

    def __init__(self, table: PaperTable) -> None:
        self._table = table

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and self._table.find(paper_id) is not None

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[str]:
        table = self._table
        order = table._id_order
        assert order is not None  # noqa: S101 - IdSet is made by PaperTable.id_set only
        for k in order:
            yield table.id(int(k))

    def __repr__(self) -> str:
        return f"<IdSet of {len(self)} paper ids>"


class IdList(Sequence[str]):
    """The ids of a :class:`PaperTable` in corpus order, read on demand: indexing, slicing (a tuple),
    iteration and ``==`` against a tuple or list work as on ``tuple(table.ids())``."""

    __slots__ = ("_table",)

    def __init__(self, table: PaperTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        n = len(self._table)
        if isinstance(i, slice):
            return tuple(self._table.id(j) for j in range(*i.indices(n)))
        j = int(i)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError("id index out of range")
        return self._table.id(j)

    def __iter__(self) -> Iterator[str]:
        table = self._table
        for j in range(len(table)):
            yield table.id(j)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdList | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<IdList of {len(self)} paper ids>"

    def __reduce__(self) -> tuple[type[tuple[str, ...]], tuple[tuple[str, ...]]]:
        return tuple, (tuple(self),)  # pickles as the tuple it stands for (the table cannot travel)


class Catalogue:
    """Papers, ids, areas and authors of an index (immutable, thread-safe).

    Args:
        arrays: The arrays of :data:`ARRAYS` (from :func:`catalogue_arrays` or the cache file).
        area_names: The area names ``doc_area`` refers to.
        text: Where to read ``paper_text`` from instead of its array (a served cache file).
    """

    def __init__(
        self, arrays: dict[str, np.ndarray], area_names: list[str], text: FileBlob | None = None
    ) -> None:
        for name in ARRAYS:
            if arrays[name].flags.writeable:
                arrays[name].flags.writeable = False
        self._arrays = {name: arrays[name] for name in ARRAYS}
        a = self._arrays
        self.papers = PaperTable(
            text if text is not None else memoryview(a["paper_text"]), a["paper_offsets"],
            memoryview(a["id_text"]), a["id_offsets"],
            a["paper_flags"], a["doc_area"], area_names, a["id_order"],
        )
        self.doc_area: IntArray = a["doc_area"]
        self.area_names = area_names
        self.area_counts = np.bincount(self.doc_area, minlength=len(area_names))
        # Filter keys per area: the whole area, its top level and its sub-area.
        self.area_keys: list[tuple[str, str, str]] = []
        for name in area_names:
            top, _, sub = name.partition(AREA_SEPARATOR)
            self.area_keys.append((area_key(name), area_key(top), area_key(sub)))
        self._id_order = a["id_order"]
        self._fold_order = a["fold_order"]
        self._titles = memoryview(a["title_fold"])
        self._title_starts = a["title_starts"]
        self._author_text: str | None = None

    def __len__(self) -> int:
        return len(self.papers)

    def arrays(self) -> dict[str, np.ndarray]:
        """The catalogue's arrays by name (read-only), as saved in the cache."""
        return dict(self._arrays)

    # -- ids ---------------------------------------------------------------------------------------

    def _find(self, order: np.ndarray, key: str, fold: bool) -> int:
        """The first slot of ``order`` whose (folded) id is >= ``key``."""
        papers = self.papers

        def at(j: int) -> str:
            pid = papers.id(int(order[j]))
            return pid.casefold() if fold else pid

        return bisect.bisect_left(range(len(order)), key, key=at)

    def position(self, paper_id: str) -> int | None:
        """The corpus position of a paper id (exact, then case-insensitive), or None.

        Case-insensitively, a paper whose id *is* the folded text wins, else the first in corpus order.
        """
        if not isinstance(paper_id, str):
            return None
        papers = self.papers
        exact = papers.find(paper_id)
        if exact is not None:
            return exact
        folded = paper_id.strip().casefold()
        if not folded:
            return None
        order = self._fold_order
        j = self._find(order, folded, fold=True)
        first: int | None = None
        while j < len(order):
            doc = int(order[j])
            pid = papers.id(doc)
            if pid.casefold() != folded:
                break
            if pid == folded:
                return doc
            if first is None:
                first = doc  # the stable sort keeps corpus order among equal folded ids
            j += 1
        return first

    def get(self, paper_id: str) -> Paper | None:
        """The paper with this id (exact match first, then case-insensitive), or None."""
        pos = self.position(paper_id)
        return None if pos is None else self.papers[pos]

    def complete_ids(
        self, prefix: str, limit: int = 25, titles: tuple[memoryview, np.ndarray] | None = None
    ) -> list[tuple[str, str]]:
        """``(id, title)`` pairs for autocomplete: ids starting with ``prefix`` (case-insensitive,
        corpus order), then papers whose title, as the source gave it, contains every word of
        ``prefix`` (derived titles are not stored: :meth:`retrieval.index.Index.complete_ids` adds
        those).

        Args:
            prefix: What the user typed so far.
            limit: At most this many pairs.
            titles: Every paper's case-folded title, derived ones included (a title file's
                ``fold`` and ``fold_starts``), to search instead of the source's own.
        """
        limit = max(limit, 0)
        papers = self.papers
        text = (prefix or "").strip().casefold()
        if not text:
            return [(papers.id(i), papers.title(i)) for i in range(min(limit, len(papers)))]
        order = self._fold_order
        found: list[int] = []
        j = self._find(order, text, fold=True)
        while j < len(order) and len(found) < limit and papers.id(int(order[j])).casefold().startswith(text):
            found.append(int(order[j]))
            j += 1
        found.sort()
        if len(found) < limit:
            seen = set(found)
            for doc in self._title_matches(text.split(), titles):
                if doc not in seen:
                    found.append(doc)
                    if len(found) >= limit:
                        break
        return [(papers.id(i), papers.title(i)) for i in found]

    def _title_matches(
        self, words: list[str], titles: tuple[memoryview, np.ndarray] | None = None
    ) -> Iterator[int]:
        """Papers (corpus order) whose case-folded title contains every one of ``words``."""
        needles = sorted({w.encode("utf-8", "surrogatepass") for w in words if w}, key=len, reverse=True)
        if not needles:
            return
        blob, starts = titles if titles is not None else (self._titles, self._title_starts)
        first, rest = re.compile(re.escape(needles[0])), needles[1:]
        match = first.search(blob)  # a scan in C over the memory-mapped blob, no copy
        while match is not None:
            doc = int(np.searchsorted(starts, match.start(), side="right")) - 1
            end = int(starts[doc + 1])
            if all(w in blob[int(starts[doc]) : end - 1].tobytes() for w in rest):
                yield doc
            match = first.search(blob, end)

    # -- areas -------------------------------------------------------------------------------------

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

    def nearest_areas(self, text: str, n: int = 3) -> list[str]:
        """Area names closest in spelling to ``text`` (for a "did you mean" message)."""
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

    def area_mask(self, values: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Per-area bool array: areas matching EVERY value (substring of area, top or sub key)."""
        ok = np.ones(len(self.area_names), dtype=np.bool_)
        for value in values:
            key = area_key(value)
            for i, keys in enumerate(self.area_keys):
                if ok[i] and not (key and any(key in k for k in keys)):
                    ok[i] = False
        return ok

    # -- authors -----------------------------------------------------------------------------------

    def author_docs(self, value: str) -> IntArray:
        """Sorted doc ids with an author whose normalised name contains ``value``'s."""
        needle = " ".join(normalize_name(value).split())
        if not needle:
            return np.zeros(0, dtype=np.int32)
        joined = self._author_text
        if joined is None:  # decoded once, on the first author filter
            raw = memoryview(self._arrays["author_text"])
            joined = self._author_text = str(raw, "utf-8", "surrogatepass")
        starts, indptr, docs = (self._arrays[k] for k in ("author_starts", "author_indptr", "author_docs"))
        found: set[int] = set()
        pos = joined.find(needle)
        while pos >= 0:
            found.add(int(np.searchsorted(starts, pos, side="right") - 1))
            pos = joined.find(needle, pos + 1)
        if not found:
            return np.zeros(0, dtype=np.int32)
        parts = [docs[indptr[a] : indptr[a + 1]] for a in found]
        return np.unique(np.concatenate(parts)).astype(np.int32)
