"""The derived titles of a cached index, in a file of their own beside the cache.

An index build derives no title (a derived title costs about five times what parsing its paper
does, see :attr:`Paper.title_derived <retrieval.models.Paper>`). Once the index is built and handed
over, the titles are derived and written here, off the build's path: in the background for a big
corpus (``python -m retrieval.titlewriter CACHE``, a process of its own at a low priority), at once
for a small one. Every process serving the cache maps this file when it appears; until then a
title is derived when its paper is shown.

Layout: ``PAPERBOT-TITLES\\n`` (16 bytes), the header's length and its CRC-32 (two little-endian
uint64), the header (JSON), then from the next 64-byte boundary four arrays:

* ``offsets`` (int64, papers + 1) and ``text``: every paper's title, UTF-8 (an empty field for a
  paper whose title is its source's own: the catalogue has it);
* ``fold_starts`` (int64, papers + 1) and ``fold``: every paper's title, its own or derived,
  case-folded and ended by ``\\n`` (what autocomplete scans; the catalogue's ``title_fold`` holds the
  source's own titles only).

The header names the index the titles belong to (its fingerprint, build time and number of papers)
and the title rules' version (:func:`retrieval.titles.title_rules_version`): a file of another build,
of other rules, a truncated or a damaged one is ignored (and written again). It is written to a temp
file (``<cache>.<pid>.titles.tmp``, swept like the cache's own) and renamed into place.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import multiprocessing
import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from retrieval._libc import process_alive


class Index(Protocol):
    """What this module reads of a :class:`retrieval.index.Index` (it does not import the index:
    the index imports this module)."""

    papers: Any  # retrieval.catalogue.PaperTable

    def title_identity(self) -> dict[str, object]: ...

log = logging.getLogger(__name__)

__all__ = [
    "TITLES_SUFFIX",
    "TitleFile",
    "TitleWatch",
    "derive_all",
    "ensure_titles",
    "title_file_path",
    "write_title_file",
]

TITLES_SUFFIX = ".titles"
_MAGIC = b"PAPERBOT-TITLES\n"
_PREFIX = len(_MAGIC) + 16
_FORMAT = 1
_ALIGN = 64
_SECTIONS = ("offsets", "text", "fold_starts", "fold")
#: Up to this many derived titles are written at once by the process opening the index (~0.2 ms
#: each); more are written by a process of their own in the background.
WRITE_NOW_MAX = 2_000
#: How often (seconds) a process without the file looks again whether it has appeared.
_RECHECK_SECONDS = 0.5


def title_file_path(cache_file: Path) -> Path:
    """Where the titles of the index cached in ``cache_file`` are kept."""
    return cache_file.with_name(cache_file.name + TITLES_SUFFIX)


class TitleFile:
    """An open (memory-mapped) title file: ``title(i)`` and the case-folded blob for autocomplete."""

    def __init__(self, arrays: dict[str, np.ndarray], mm: mmap.mmap) -> None:
        self._mm = mm
        self._offsets = arrays["offsets"]
        self._text = memoryview(arrays["text"])
        self.fold = memoryview(arrays["fold"])
        self.fold_starts = arrays["fold_starts"]

    def title(self, i: int) -> str:
        """Paper ``i``'s title as this file holds it ("" for a title the source gave)."""
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        return str(self._text[a:b], "utf-8", "surrogatepass")

    @classmethod
    def open(cls, path: Path, identity: dict[str, object]) -> TitleFile | None:
        """The file at ``path`` if it holds the titles ``identity`` names, whole; else None (the
        reason is logged at debug level: a missing file is the usual case before it is written)."""
        try:
            with path.open("rb") as fh:
                prefix = fh.read(_PREFIX)
                size = os.fstat(fh.fileno()).st_size
                if len(prefix) < _PREFIX or not prefix.startswith(_MAGIC):
                    return _refuse(path, "not a title file")
                length, crc = np.frombuffer(prefix[len(_MAGIC) :], dtype="<u8")[:2].tolist()
                if length > size - _PREFIX:
                    return _refuse(path, "truncated (header)")
                raw = fh.read(length)
                if zlib.crc32(raw) != crc:
                    return _refuse(path, "damaged (header checksum)")
                header = json.loads(raw.decode("utf-8"))
                if not isinstance(header, dict) or header.get("format") != _FORMAT:
                    return _refuse(path, "written by another version")
                if {k: header.get(k) for k in identity} != identity:
                    return _refuse(path, "of another build or other title rules")
                data_start = -(-(_PREFIX + length) // _ALIGN) * _ALIGN
                if size != data_start + int(header["data_bytes"]):
                    return _refuse(path, f"truncated ({size} bytes)")
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return _refuse(path, f"unreadable ({type(exc).__name__}: {exc})")
        try:
            view = memoryview(mm)
            arrays: dict[str, np.ndarray] = {}
            for name in _SECTIONS:
                spec = header["sections"][name]
                dtype = np.dtype(spec["dtype"])
                start, count = data_start + int(spec["offset"]), int(spec["count"])
                if dtype.hasobject or count < 0 or start + count * dtype.itemsize > size:
                    return _refuse(path, f"damaged ({name} out of the file)")
                arrays[name] = np.frombuffer(view, dtype=dtype, count=count, offset=start)
            if zlib.crc32(view[data_start:]) != int(header["data_crc"]):
                return _refuse(path, "damaged (data checksum)")
            n = int(identity["papers"])  # type: ignore[call-overload]
            for starts, blob in (("offsets", "text"), ("fold_starts", "fold")):
                s = arrays[starts]
                if len(s) != n + 1 or int(s[0]) != 0 or int(s[-1]) != len(arrays[blob]):
                    return _refuse(path, f"damaged ({starts})")
                if n and bool((np.diff(s) < 0).any()):
                    return _refuse(path, f"damaged ({starts} out of order)")
        except (ValueError, KeyError, TypeError) as exc:
            return _refuse(path, f"damaged ({type(exc).__name__}: {exc})")
        return cls(arrays, mm)


def _refuse(path: Path, why: str) -> None:
    log.debug("title file %s is %s: titles are derived when shown until it is written again", path, why)
    return None


class TitleWatch:
    """The title file of one open index, looked for when a title is needed: found once, it is kept;
    until then the file is looked for again at most every half second (a stat)."""

    def __init__(self, path: Path, identity: dict[str, object]) -> None:
        self.path = path
        self._identity = identity
        self._found: TitleFile | None = None
        self._next = 0.0
        self._lock = threading.Lock()

    def look_again(self) -> None:
        """Look for the file at the next :meth:`get` (it was just written)."""
        self._next = 0.0

    def get(self) -> TitleFile | None:
        """The title file, once it is there and whole."""
        found = self._found
        if found is not None:
            return found
        now = time.monotonic()
        if now < self._next:
            return None
        with self._lock:
            if self._found is None and now >= self._next:
                self._found = TitleFile.open(self.path, self._identity)
                self._next = time.monotonic() + _RECHECK_SECONDS
        return self._found


def derive_all(index: Index, workers: int = 1) -> list[str]:
    """Every paper's derived title, in corpus order ("" for a paper whose source gave its title), by
    ``workers`` processes forked from this one (they share the memory-mapped index; where fork is
    not available, or for a small corpus, this process derives them all)."""
    n = len(index.papers)
    if workers <= 1 or n < 2 * _CHUNK or "fork" not in multiprocessing.get_all_start_methods():
        return _derive_range(index, 0, n)
    global _forked
    _forked = index
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            chunks = [(a, min(a + _CHUNK, n)) for a in range(0, n, _CHUNK)]
            return [t for part in pool.imap(_derive_chunk, chunks) for t in part]
    finally:
        _forked = None


_CHUNK = 2_000  # papers a worker derives at a time
_forked: Index | None = None  # the index the forked workers read (set in the parent before forking)


def _derive_range(index: Index, start: int, stop: int) -> list[str]:
    from retrieval.titles import derive_title

    papers = index.papers
    derived = papers.title_is_derived
    return [derive_title(papers.abstract(i)) if derived(i) else "" for i in range(start, stop)]


def _derive_chunk(bounds: tuple[int, int]) -> list[str]:
    assert _forked is not None  # noqa: S101 - set before the pool forks
    return _derive_range(_forked, *bounds)


def _tmp_path(path: Path, pid: int | None = None) -> Path:
    pid = os.getpid() if pid is None else pid
    return path.with_name(f"{path.name.removesuffix(TITLES_SUFFIX)}.{pid}.titles.tmp")


def write_title_file(
    index: Index,
    path: Path,
    titles: Sequence[str] | None = None,
    still_current: Callable[[], bool] | None = None,
    workers: int = 1,
) -> bool:
    """Derive (unless given; by ``workers`` processes) and write the titles of ``index`` to ``path``,
    atomically. When
    ``still_current()`` says, once the titles are derived, that the cache holds another build now,
    nothing is written. Returns whether the file was written.

    Raises:
        OSError: The file could not be written (the temp file is removed).
    """
    papers = index.papers
    tmp = _tmp_path(path)
    tmp.touch()  # tells another opener that this process is writing the file
    try:
        titles = derive_all(index, workers) if titles is None else titles
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    text = [t.encode("utf-8", "surrogatepass") for t in titles]
    fold = [
        (t if t else papers.title(i)).casefold().replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n"
        for i, t in enumerate(titles)
    ]
    arrays = {
        "offsets": _starts(text),
        "text": np.frombuffer(b"".join(text), dtype=np.uint8),
        "fold_starts": _starts(fold),
        "fold": np.frombuffer(b"".join(fold), dtype=np.uint8),
    }
    # The data: each array, then zeros to the next 64-byte boundary; written (and its CRC taken)
    # array by array, with no copy of the whole.
    sections: dict[str, dict[str, object]] = {}
    pieces: list[memoryview | bytes] = []
    at = data_crc = 0
    for name in _SECTIONS:
        arr = arrays[name]
        sections[name] = {"dtype": arr.dtype.str, "count": len(arr), "offset": at}
        end = -(-(at + arr.nbytes) // _ALIGN) * _ALIGN
        for piece in (memoryview(arr).cast("B"), bytes(end - at - arr.nbytes)):
            data_crc = zlib.crc32(piece, data_crc)
            pieces.append(piece)
        at = end
    header = dict(index.title_identity(), format=_FORMAT, sections=sections, data_bytes=at,
                  data_crc=data_crc)  # fmt: skip
    raw = json.dumps(header).encode("utf-8")
    prefix = _MAGIC + np.array([len(raw), zlib.crc32(raw)], dtype="<u8").tobytes()
    pad = b"\0" * (-(-(_PREFIX + len(raw)) // _ALIGN) * _ALIGN - _PREFIX - len(raw))
    try:
        with tmp.open("wb") as fh:
            fh.write(prefix + raw + pad)
            for piece in pieces:
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        if still_current is not None and not still_current():
            tmp.unlink()
            return False
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return True


def _writer_alive(path: Path) -> bool:
    """Whether another live process is writing the title file ``path`` (its temp file is there)."""
    prefix = path.name.removesuffix(TITLES_SUFFIX) + "."
    try:
        names = [p.name for p in path.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return False
    for name in names:
        pid = name[len(prefix) :].removesuffix(".titles.tmp")
        if not (name.endswith(".titles.tmp") and pid.isdigit()):
            continue
        if int(pid) != os.getpid() and process_alive(int(pid)):
            return True
    return False


def _starts(pieces: Sequence[bytes]) -> np.ndarray:
    starts = np.zeros(len(pieces) + 1, dtype=np.int64)
    if pieces:
        np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=starts[1:])
    return starts


#: Background writers started by this process, by title file: one at a time per file.
_WRITERS: dict[Path, subprocess.Popen[bytes]] = {}
_WRITERS_LOCK = threading.Lock()


def ensure_titles(index: Index, cache_file: Path, *, background: bool = True) -> TitleWatch:
    """Watch the title file of ``index`` (cached in ``cache_file``) and, when it is missing or stale,
    have it written: here and now for up to :data:`WRITE_NOW_MAX` derived titles (or when
    ``background`` is False), else by ``python -m retrieval.titlewriter`` in the background. A file
    that cannot be written (a read-only folder) leaves titles derived when shown; never raises."""
    path = title_file_path(cache_file)
    watch = TitleWatch(path, index.title_identity())
    if watch.get() is not None:
        return watch
    papers = index.papers
    derived = papers.derived_count()
    if not derived:
        return watch
    try:
        if derived <= WRITE_NOW_MAX or not background:
            write_title_file(index, path)
            watch.look_again()
        else:
            _start_writer(cache_file, path)
    except OSError as exc:
        log.warning("could not write the titles file %s (%s); titles are derived when shown", path, exc)
    return watch


def _start_writer(cache_file: Path, path: Path) -> None:
    with _WRITERS_LOCK:
        running = _WRITERS.get(path)
        if (running is not None and running.poll() is None) or _writer_alive(path):
            return  # that writer starts again if the cache holds another build by the time it is done
        command = [sys.executable, "-m", "retrieval.titlewriter", str(cache_file)]
        _WRITERS[path] = subprocess.Popen(  # noqa: S603 - our own module, our own arguments
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=str(Path(__file__).resolve().parents[1]), start_new_session=True,
        )  # fmt: skip
        pid = _WRITERS[path].pid
        with contextlib.suppress(OSError):  # the writer's temp file, now: another opener sees it at once
            _tmp_path(path, pid).touch()
        log.info("deriving the titles of %s in the background (pid %d)", cache_file.name, pid)


def wait_for_writers(timeout: float | None = None) -> None:
    """Wait for the background writers this process started (tests, benchmarks)."""
    with _WRITERS_LOCK:
        running = list(_WRITERS.values())
    for process in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
