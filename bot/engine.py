"""The serving index and its atomic replacement.

``bot.engine`` is the only way cogs reach retrieval::

    results = bot.engine.search("sparse autoencoders", k=5, offset=0, area=None)   # sync, milliseconds
    report = await bot.engine.reindex(progress=on_progress)   # builds off the loop, swaps atomically

Reads are plain method calls on the current :class:`~retrieval.index.Index` (immutable, memory-mapped,
fast), so they run on the event loop. Building is slow, so :meth:`Engine.reindex` runs it in a worker
thread (or, for a large corpus, a child process that writes the cache file this process then maps);
nothing that touches the file system runs on the loop. The new
index replaces the old one with a single attribute assignment, and a search that already holds the old
object finishes on it. A failed build leaves the old index serving.

Several processes on one database serve one index (:mod:`bot.index_share`): a reindex holds the index
lock across processes and publishes what it built; the other processes :meth:`Engine.adopt` it.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.errors import ReindexFailed, ReindexInProgress
from bot.store import StoreError
from bot.threads import to_thread_releasing
from retrieval._libc import M_MMAP_THRESHOLD, mallopt
from retrieval.corpus import corpus_files
from retrieval.errors import RetrievalError, UnknownPaperError
from retrieval.index import Index, cache_is_current, open_current_cache, open_index, sweep_leftovers
from retrieval.models import Answer, Hit, IngestReport, Paper, SearchResults
from retrieval.postings import KERNEL_STALE, KERNEL_UNAVAILABLE
from retrieval.tokenize import SERVING_MEMO_MAX, memo_limit

if TYPE_CHECKING:
    from bot.index_share import IndexShare
    from bot.settings import Settings
    from bot.store import ReconcileResult, Store

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], Awaitable[None] | None]

#: Corpora at least this big (bytes on disk, ~6k abstracts) are rebuilt in a child process: in a
#: thread, a few long GIL-holding calls stall the event loop past 100 ms at 100k abstracts.
SUBPROCESS_MIN_BYTES = 8_000_000


def corpus_bytes(path: Path) -> int:
    """Total size of the files the corpus ``path`` stands for — only those a load would read (a
    folder's own ``.txt``/``.jsonl`` files, not its subfolders); 0 when it cannot be read. It touches
    the file system: call it in a worker thread, never on the event loop."""
    try:
        return sum(f.stat().st_size for f in corpus_files(path))
    except (OSError, RetrievalError):
        return 0


#: The index a preforking parent mapped for the processes it forks (bot/supervisor.py): ``(key, index,
#: report)``; None in every other process. Engine.load takes it (and clears it) when it is still current.
_preloaded: tuple[tuple[Any, ...], Index, IngestReport] | None = None


def _preload_key(settings: Settings) -> tuple[Any, ...]:
    return (Path(settings.corpus_path), settings.bm25, settings.index_cache_dir, settings.corpus_headers)


def _current(index: Index, settings: Settings) -> bool:
    return cache_is_current(
        index,
        settings.corpus_path,
        settings.bm25,
        cache_dir=settings.index_cache_dir,
        headers=settings.corpus_headers,
    )


def preload(settings: Settings) -> bool:
    """Map the corpus's current cache file in this process, for the processes it forks next.

    Never builds (a missing or stale cache file is left to the forked processes, which build it once
    under the index lock). An index preloaded earlier is kept while it is still current and replaced
    by the current file otherwise (a reindex in a child rewrote it). Returns whether one is preloaded.
    Synchronous: called before any event loop exists.
    """
    global _preloaded
    key = _preload_key(settings)
    if _preloaded is not None and _preloaded[0] == key and _current(_preloaded[1], settings):
        return True
    _preloaded = None
    opened = open_current_cache(
        settings.corpus_path,
        settings.bm25,
        cache_dir=settings.index_cache_dir,
        headers=settings.corpus_headers,
    )
    if opened is not None:
        _preloaded = (key, *opened)
    return opened is not None


def _take_preloaded(settings: Settings) -> tuple[Index, IngestReport] | None:
    """The preloaded index for these settings (forgotten by this process either way: a replaced index
    must not stay alive through this module)."""
    global _preloaded
    found, _preloaded = _preloaded, None
    if found is None or found[0] != _preload_key(settings):
        return None
    return found[1], found[2]


#: How many removed papers' titles a reindex keeps for its report.
REMOVED_TITLES_KEPT = 10


class Engine:
    """Holds the serving index; cogs call its thin read wrappers and admins call :meth:`reindex`."""

    def __init__(
        self, settings: Settings, index: Index, report: IngestReport, *, store: Store | None = None
    ) -> None:
        self.settings = settings
        self.index = index
        self.report = report
        self.store = store
        self.corpus_path: Path = Path(settings.corpus_path)
        self.loaded_at = time.time()
        self._areas: list[tuple[str, int]] = index.areas()
        self._lock = asyncio.Lock()
        self.subprocess_min_bytes = SUBPROCESS_MIN_BYTES
        #: What the store's reconcile changed after the last successful reindex (None before any, and
        #: without a store): the saved paper ids that left the corpus or came back.
        self.last_reconcile: ReconcileResult | None = None
        #: Titles of the first papers the last reindex removed (and of the saved ones that left), read
        #: from the old index before it is released, so a report can name them without keeping it alive.
        self.last_removed_titles: dict[str, str] = {}
        #: The shared index across processes (bot/index_share.py), once the services started it.
        self.share: IndexShare | None = None
        #: True when this process serves the index its preforking parent mapped (bot/supervisor.py).
        self.inherited = False

    @classmethod
    async def load(cls, settings: Settings, *, store: Store | None = None) -> Engine:
        """Open (build or load from cache) the corpus index in a worker thread.

        Leftovers of a build that was killed (a ``.tmp`` cache file, old transfer folders) are
        swept first.

        Raises:
            CorpusError: The corpus cannot be read at all.
        """
        await asyncio.to_thread(sweep_leftovers, Path(settings.corpus_path), settings.index_cache_dir)
        inherited = _take_preloaded(settings)
        if inherited is not None and await asyncio.to_thread(_current, inherited[0], settings):
            index, report = inherited
            how = "mapped by the supervisor before the fork"
        else:
            inherited = None
            index, report = await asyncio.to_thread(
                open_index,
                settings.corpus_path,
                settings.bm25,
                cache_dir=settings.index_cache_dir,
                headers=settings.corpus_headers,
            )
            how = "cache" if report.from_cache else "built"
        log.info(
            "index ready: %d papers from %d file(s) (%s, %.2f s)",
            len(index),
            len(report.files_read),
            how,
            report.build_seconds,
        )
        # Serving: bound the word memos (a build in this process filled them with the whole corpus).
        memo_limit(SERVING_MEMO_MAX)
        _fixed_mmap_threshold()
        _freeze_heap()
        if KERNEL_UNAVAILABLE and not KERNEL_STALE:  # a stale build: retrieval.postings warned already
            log.warning("ranking with the numpy kernel, about 4x slower: %s", KERNEL_UNAVAILABLE)
        engine = cls(settings, index, report, store=store)
        engine.inherited = inherited is not None
        return engine

    # -- state -------------------------------------------------------------------------------------

    @property
    def areas(self) -> list[tuple[str, int]]:
        """``(area, paper count)`` of the serving index, most common first."""
        return self._areas

    @property
    def reindexing(self) -> bool:
        """True while a reindex is running."""
        return self._lock.locked()

    def __len__(self) -> int:
        return len(self.index)

    # -- reads (fast, on the loop) --------------------------------------------------------------

    def search(
        self, query: str, k: int = 5, *, offset: int = 0, area: str | None = None, author: str | None = None
    ) -> SearchResults:
        """A page of ranked hits (raises QueryError / EmptyQueryError for a bad query)."""
        return self.index.search(query, k, offset=offset, area=area or None, author=author or None)

    def similar(self, paper_id: str, k: int = 5) -> list[Hit]:
        """Papers most like ``paper_id`` (raises UnknownPaperError)."""
        return self.index.similar(paper_id, k)

    def answer(self, question: str, k: int | None = None) -> Answer:
        """An extractive answer to ``question``."""
        return self.index.answer(question, k)

    def get(self, paper_id: str) -> Paper | None:
        """The paper with this id, or None."""
        return self.index.get(paper_id)

    def require(self, paper_id: str) -> Paper:
        """The paper with this id (raises UnknownPaperError)."""
        paper = self.index.get(paper_id.strip())
        if paper is None:
            raise UnknownPaperError(paper_id.strip())
        return paper

    def complete_areas(self, prefix: str, limit: int = 25) -> list[str]:
        """Areas starting with (or containing) ``prefix``, for autocomplete."""
        return self.index.complete_areas(prefix, limit)

    def complete_ids(self, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
        """``(id, title)`` pairs matching ``prefix``, for autocomplete."""
        return self.index.complete_ids(prefix, limit)

    def nearest_areas(self, text: str, n: int = 3) -> list[str]:
        """The areas whose names are closest to ``text`` (for 'did you mean')."""
        return list(self.index.nearest_areas(text, n))

    # -- reindex --------------------------------------------------------------------------------

    async def reindex(self, path: str | Path | None = None, progress: Progress | None = None) -> IngestReport:
        """Rebuild from ``path`` (default: the current corpus) off the loop, then swap atomically.

        ``progress(stage, done, total)`` is called on the event loop (never from the worker thread), may
        be a coroutine function, and sees only the latest update when it falls behind.

        Raises:
            ReindexInProgress: Another reindex is running.
            ReindexFailed: The build failed; the old index keeps serving. ``str()`` gives the reason.
        """
        if self._lock.locked():
            raise ReindexInProgress()
        async with self._lock:
            # Across processes: the one index lock. Never wait for it: another process is building.
            shared_lock = None
            if self.share is not None:
                try:
                    shared_lock = await self.share.try_lock()
                except StoreError as exc:
                    why = f"Reindex failed, the previous index is still serving: {exc}"
                    raise ReindexFailed(why) from exc
                if shared_lock is None:
                    raise ReindexInProgress(
                        "A reindex is already running in another of the bot's processes; try again when "
                        "it has finished."
                    )
            try:
                return await self._reindex_locked(path, progress)
            finally:
                if shared_lock is not None:
                    await shared_lock.release()

    async def _reindex_locked(self, path: str | Path | None, progress: Progress | None) -> IngestReport:
        corpus = Path(path).expanduser() if path is not None else self.corpus_path
        loop = asyncio.get_running_loop()
        relay = _ProgressRelay(loop, progress) if progress is not None else None
        previous = self.index
        started = time.perf_counter()
        callback = relay.from_thread if relay is not None else None
        try:
            # ``previous`` is passed by name, never kept in ``options``: a dict still holding it after the
            # build would keep the old index alive and stop _release from taking it apart.
            options = {
                "cache_dir": self.settings.index_cache_dir,
                "progress": callback,
                "headers": self.settings.corpus_headers,
            }
            if await asyncio.to_thread(corpus_bytes, corpus) >= self.subprocess_min_bytes:
                from bot.index_worker import build_in_subprocess

                index, report = await build_in_subprocess(
                    corpus, self.settings.bm25, previous=previous, **options
                )
            else:
                index, report = await to_thread_releasing(
                    open_index, corpus, self.settings.bm25, previous=previous, **options
                )
        except (RetrievalError, OSError, ValueError, RuntimeError) as exc:
            log.warning("reindex of %s failed, keeping the old index: %s", corpus, exc)
            raise ReindexFailed(f"Reindex failed, the previous index is still serving: {exc}") from exc
        finally:
            if relay is not None:
                await relay.drain()
        self._swap(index, report, corpus)
        log.info(
            "reindexed %s: %d papers (+%d −%d) in %.2f s",
            corpus,
            report.papers,
            len(report.added),
            len(report.removed),
            time.perf_counter() - started,
        )
        self.last_reconcile = None  # never report an earlier reindex's ids for this one
        if self.store is not None:
            try:
                if self.share is not None:
                    # The other processes pick it up; the reconcile commits with the publication.
                    self.last_reconcile = await self.share.publish(self)
                else:
                    self.last_reconcile = await self.store.reconcile(index.papers)
            except StoreError:
                # The new index is serving; a failed reconcile only delays the "no longer in the
                # corpus" marks until the next reindex or restart. It must not turn the swap into
                # a reported failure.
                log.exception("reconciling saved lists after the reindex of %s failed", corpus)
            else:
                log.info("saved lists reconciled with the new corpus: %s", self.last_reconcile)
        gone = self.last_reconcile.gone if self.last_reconcile is not None else []
        self.last_removed_titles = {
            pid: paper.title
            for pid in [*list(report.removed)[:REMOVED_TITLES_KEPT], *list(gone)[:REMOVED_TITLES_KEPT]]
            if (paper := previous.get(pid)) is not None and paper.title
        }
        await _release(previous)
        previous = None  # noqa: F841
        return report

    def _swap(self, index: Index, report: IngestReport, corpus: Path) -> None:
        """Serve ``index``: one assignment each. Readers that already hold the old one finish on it."""
        self.index, self.report, self._areas = index, report, index.areas()
        _freeze_heap()
        self.corpus_path = corpus
        self.loaded_at = time.time()

    async def adopt(
        self, index: Index, report: IngestReport, corpus: Path, swapped: Callable[[], None] | None = None
    ) -> bool:
        """Serve an index another process built (:mod:`bot.index_share`); False while a reindex of
        this process runs (the next poll tries again). ``swapped`` is called at the swap itself,
        before the old index is let go of (which awaits), so that what the caller records of the new
        index (its generation) is never seen to lag behind the index being served."""
        if self._lock.locked():
            return False
        async with self._lock:
            previous = self.index
            self._swap(index, report, corpus)
            self.last_reconcile, self.last_removed_titles = None, {}
            if swapped is not None:
                swapped()
            await _release(previous)
            previous = None  # noqa: F841
        return True

    async def close(self) -> None:
        """Stop following the shared index (the store is closed by its owner). Idempotent."""
        if self.share is not None:
            await self.share.close()


async def _release(previous: Index) -> None:
    """Let go of a replaced index.

    Freeing a 100k-paper index in one go holds the GIL for ~100 ms. Reads are synchronous on the
    loop, so nobody is inside the old index now; if nothing else references it either (callers read
    what they need of it through last_removed_titles), take it apart in small pieces in a thread.
    """
    if sys.getrefcount(previous) <= 3:  # the caller's local, our argument, getrefcount's argument
        await asyncio.to_thread(_dismantle, previous)


def _dismantle(index: Index, step: int = 2000) -> None:
    """Free an unreferenced index a few thousand objects at a time (run in a worker thread).

    Between pieces ``time.sleep(0)`` lets the event loop take the GIL, so no single deallocation
    cascade (a 100k tuple of papers, a 200k-term dict) blocks it for long.
    """
    try:
        state = vars(index)
    except TypeError:  # a slotted Index: nothing to take apart, let refcounting do it
        return
    for key in list(state):
        value = state.pop(key)
        if isinstance(value, dict) and len(value) > step:
            while value:
                for _ in range(min(step, len(value))):
                    value.popitem()
                time.sleep(0)
        elif isinstance(value, list | tuple) and len(value) > step:
            items = list(value)
            value = None  # the container goes; its items survive in ``items`` until sliced away
            while items:
                del items[-step:]
                time.sleep(0)
        value = None


def _fixed_mmap_threshold() -> None:
    """Keep glibc's malloc from parking freed query buffers in the heap.

    A search allocates score arrays of 8 bytes per paper (~800 kB at 100k). glibc raises its mmap
    threshold to the size of each large block freed, so these blocks soon come from the heap and
    their pages stay resident (private to this process) after the search. A fixed threshold (the
    default 128 kB) gives them back at ``free``: ~7 MB less private memory after 300 searches at
    100k (bench/processes.py), at no measured cost per search. Nothing happens off glibc.
    """
    mallopt((M_MMAP_THRESHOLD, 128 * 1024))  # glibc's default, no longer raised by frees


def _freeze_heap() -> None:
    """Move the index's millions of objects out of the cyclic GC's reach.

    A full collection over them holds the GIL for 100+ ms at 100k papers and stalls the event loop.
    Papers and arrays hold no reference cycles, so refcounting still frees a replaced index.
    """
    gc.freeze()  # no gc.collect() first: that full pass is the very stall being avoided


class _ProgressRelay:
    """Carries progress calls from the worker thread to the loop, keeping only the latest one."""

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Progress) -> None:
        self.loop = loop
        self.callback = callback
        self.latest: tuple[str, int, int] | None = None
        self.wakeup = asyncio.Event()
        self.done = False
        self.task = loop.create_task(self._run(), name="paperbot-reindex-progress")

    def from_thread(self, stage: str, done: int, total: int) -> None:
        self.loop.call_soon_threadsafe(self._push, (stage, done, total))

    def _push(self, item: tuple[str, int, int]) -> None:
        self.latest = item
        self.wakeup.set()

    async def _run(self) -> None:
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            item, self.latest = self.latest, None
            if item is not None:
                try:
                    result: Any = self.callback(*item)
                    if inspect.isawaitable(result):
                        await result
                except Exception:  # a broken progress display must not break the reindex
                    log.exception("progress callback failed")
            if self.done and self.latest is None:
                return

    async def drain(self) -> None:
        # Let the calls already queued by the thread land before the last update is delivered.
        await asyncio.sleep(0)
        self.done = True
        self.wakeup.set()
        await self.task
