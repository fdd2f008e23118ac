"""The titles an index build derived, kept beside its cache file for the next build to reuse.

Deriving a title is most of the cost of reading an abstract (``bench/parse.py``: about five times
the parsing itself), and a reindex mostly reads abstracts it has read before: a new file added to a
folder, a few papers changed. So a build writes, beside its cache file, every title it derived
(``retrieval.text.derive_title`` of a paper's abstract) keyed by the paper's content digest
(:func:`retrieval.corpus.content_digest`: the same digest means the same authors and abstract), and
the next build takes a paper's title from there instead of deriving it again. A title is a pure
function of the abstract and the title rules, so a reused title is the one derivation would give;
the file records the title rules' version (``TITLE_RULES_VERSION``) and is not used by rules of
another version. It only saves time: a missing, foreign, stale, truncated or damaged file (its CRC
is checked before a build uses it) is passed over and the titles are derived.

Format (little-endian): ``PBTITLE1``, a u32 length and that many bytes of JSON (the rules'
version, the entry count, the blob's bytes, a CRC-32 of everything after the header), zero padding
to 8 bytes, then ``n`` digests of 32 bytes sorted (a binary search finds one), ``n`` int32s (the
entry of each sorted digest), ``n + 1`` int64 offsets into the blob by entry, and the titles in
UTF-8 one after the other. Memory-mapped: a worker process reads only the pages it looks up.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import secrets
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["MemoParts", "TitleMemo", "memo_path_for", "write_memo"]

MAGIC = b"PBTITLE1"
SUFFIX = ".titles"
DIGEST_BYTES = 32
_DIGEST = np.dtype(f"S{DIGEST_BYTES}")


def memo_path_for(cache_file: Path) -> Path:
    """Where the title memo of a cache file lives: beside it."""
    return cache_file.with_name(cache_file.name + SUFFIX)


def _rules() -> str:
    from retrieval.text import TITLE_RULES_VERSION

    return TITLE_RULES_VERSION


@dataclass(slots=True)
class MemoParts:
    """Derived titles gathered during a build, a file (or piece) at a time: digests and the UTF-8
    titles, each part three arrays (no Python object per title)."""

    digests: list[np.ndarray] = field(default_factory=list)  # S32 per title
    lengths: list[np.ndarray] = field(default_factory=list)  # int64 bytes per title
    blobs: list[bytes] = field(default_factory=list)

    def add(self, digests: Sequence[bytes], titles: Sequence[str]) -> None:
        """Add titles derived for the papers with these digests."""
        if not digests:
            return
        encoded = [t.encode("utf-8", "surrogatepass") for t in titles]
        self.digests.append(np.array(digests, dtype=_DIGEST))
        self.lengths.append(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
        self.blobs.append(b"".join(encoded))

    def extend(self, other: MemoParts) -> None:
        self.digests += other.digests
        self.lengths += other.lengths
        self.blobs += other.blobs

    def __len__(self) -> int:
        return sum(len(d) for d in self.digests)


def write_memo(path: Path, parts: MemoParts) -> bool:
    """Write the memo of ``parts`` to ``path`` (a temp file renamed over it: a reader sees the old
    file or the new one). True when written; a failure (an unwritable folder, a full disk) is
    logged and leaves no temp file: the memo only saves time."""
    n = len(parts)
    if n == 0:
        path.unlink(missing_ok=True)
        return False
    digests = np.concatenate(parts.digests)
    lengths = np.concatenate(parts.lengths)
    order = np.argsort(digests, kind="stable").astype(np.int32)
    sorted_digests = digests[order]
    if n > 1 and bool(np.any(sorted_digests[1:] == sorted_digests[:-1])):
        # one digest twice would be one paper read twice (the build keeps one of each): keep the first
        first = np.concatenate(([True], sorted_digests[1:] != sorted_digests[:-1]))
        order, sorted_digests = order[first], sorted_digests[first]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    body = [sorted_digests.tobytes(), order.astype("<i4").tobytes(), offsets.astype("<i8").tobytes()]
    crc = 0
    for piece in (*body, *parts.blobs):
        crc = zlib.crc32(piece, crc)
    header = json.dumps({"rules": _rules(), "n": len(order), "entries": len(lengths),
                         "blob": int(offsets[-1]), "crc": crc}).encode()  # fmt: skip
    head = MAGIC + struct.pack("<I", len(header)) + header
    head += b"\0" * (-len(head) % 8)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        # private, as the cache file is (titles are the corpus's text)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
            fh.write(head)
            for piece in (*body, *parts.blobs):
                fh.write(piece)
        os.replace(tmp, path)
    except OSError as exc:
        log.info("not keeping the derived titles for the next build: %s", exc)
        tmp.unlink(missing_ok=True)
        return False
    return True


class TitleMemo:
    """A memo file opened read-only (memory-mapped). :meth:`open` returns None for a file that
    cannot serve (missing, another version of the title rules, wrong size, bad CRC with ``check``)."""

    def __init__(self, path: Path, mm: mmap.mmap, data_start: int, n: int, entries: int) -> None:
        self.path = path
        self._mm = mm
        at = data_start
        self._digests = np.frombuffer(mm, dtype=_DIGEST, count=n, offset=at)
        at += n * DIGEST_BYTES
        self._order = np.frombuffer(mm, dtype="<i4", count=n, offset=at)
        at += 4 * n
        self._offsets = np.frombuffer(mm, dtype="<i8", count=entries + 1, offset=at)
        at += 8 * (entries + 1)
        self._blob_at = at

    @classmethod
    def open(cls, path: Path, *, check: bool = False) -> TitleMemo | None:
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < 16:
                    return None
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        try:
            return cls._parse(path, mm, size, check)
        except (ValueError, KeyError, TypeError, struct.error, json.JSONDecodeError) as exc:
            log.debug("title memo %s passed over: %s", path, exc)
            mm.close()
            return None

    @classmethod
    def _parse(cls, path: Path, mm: mmap.mmap, size: int, check: bool) -> TitleMemo | None:
        if mm[:8] != MAGIC:
            raise ValueError("not a title memo")
        (length,) = struct.unpack_from("<I", mm, 8)
        header = json.loads(bytes(mm[12 : 12 + length]))
        data_start = 12 + length + (-(12 + length) % 8)
        n, entries, blob = int(header["n"]), int(header["entries"]), int(header["blob"])
        if header["rules"] != _rules():
            raise ValueError(f"title rules {header['rules']}, not {_rules()}")
        if not 0 <= n <= entries or data_start + n * (DIGEST_BYTES + 4) + 8 * (entries + 1) + blob != size:
            raise ValueError("its size is not what its header says")
        if check and zlib.crc32(memoryview(mm)[data_start:]) != header["crc"]:
            raise ValueError("damaged (CRC)")
        memo = cls(path, mm, data_start, n, entries)
        if n and not (0 <= int(memo._order.min()) and int(memo._order.max()) < entries):
            raise ValueError("damaged (entries)")
        return memo

    def __len__(self) -> int:
        return len(self._digests)

    def get_many(self, digests: Sequence[bytes]) -> list[str | None]:
        """The title memoised for each digest, or None."""
        if not digests or not len(self._digests):
            return [None] * len(digests)
        wanted = np.array(digests, dtype=_DIGEST)
        at = np.searchsorted(self._digests, wanted)
        at_ok = np.minimum(at, len(self._digests) - 1)
        found = (at < len(self._digests)) & (self._digests[at_ok] == wanted)
        entry = self._order[at_ok]
        starts, ends = self._offsets[entry], self._offsets[entry + 1]
        out: list[str | None] = []
        mm, base = self._mm, self._blob_at
        for hit, s, e in zip(found.tolist(), starts.tolist(), ends.tolist(), strict=True):
            out.append(mm[base + s : base + e].decode("utf-8", "surrogatepass") if hit else None)
        return out

    def release(self) -> None:
        """Give back the pages look-ups read (they stay in the page cache, a later look-up maps them
        again): a build's worker holds the memo's pages of one file at a time, not the whole memo."""
        madvise = getattr(self._mm, "madvise", None)
        if madvise is not None and hasattr(mmap, "MADV_DONTNEED"):
            try:
                madvise(mmap.MADV_DONTNEED)
            except OSError:
                pass

    def close(self) -> None:
        self._digests = self._order = self._offsets = None  # type: ignore[assignment]
        try:
            self._mm.close()
        except BufferError:  # a view still refers to it: the map goes with the last one
            pass
