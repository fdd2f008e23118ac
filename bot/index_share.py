"""One index for every process on one database: built once, picked up by all, reconciled once.

Several bot processes (each with its own shard range) share one ``DATABASE_URL`` or one SQLite file
and one index cache folder. The database holds one ``index_generation`` row (:class:`IndexGeneration`)
naming the index they all serve: its corpus, its memory-mapped ``.pbindex`` file and the fingerprint
that file must carry.

* **Build once.** Whoever builds holds the store's *index lock* (a PostgreSQL session advisory lock on
  a connection of its own; with SQLite an ``flock`` beside the database file): a start waits for it,
  so N processes starting together build once (the first builds, the others open its file); an
  ``/admin reindex`` takes it without waiting, so a reindex running in another process is refused.
  The kernel or the server drops the lock when its holder dies, however it dies: another process
  can retry at once. A killed build leaves only ``.tmp`` files beside the cache (its own and its
  worker processes' spills, named with its pid; the next start sweeps them), which nobody opens:
  only a complete file, renamed into place, is ever published.
* **Publish.** The builder writes the next generation and reconciles the saved snapshots with the new
  corpus **in one transaction** (:meth:`Store.publish_index_generation`): a published generation is a
  reconciled one, so the reconcile runs once per generation, never once per process. With
  PostgreSQL the same transaction sends ``NOTIFY paperbot_index``.
* **Pick up.** Every process listens (PostgreSQL ``LISTEN``) and polls the row every
  :data:`POLL_SECONDS` (both backends; the poll is the only signal with SQLite and the fallback when the
  listening connection drops). A newer generation is opened from its file (``mmap``: milliseconds,
  and the pages are the ones the other processes already share through the page cache) and swapped in
  with one assignment, as a local reindex is. A process that cannot open it (a missing, damaged or
  replaced file) keeps serving the old index and says so in one warning per generation.
* **Start.** A starting process serves the configured corpus, as before: if the row already names
  that very index it follows it (no build, no reconcile); otherwise it publishes it, and the others
  follow. The newest start or reindex wins, so every process converges on one index.

Why the database, not only the cache folder: the row is transactional (the generation and its
reconcile commit together), it reaches processes on other hosts, and PostgreSQL delivers it at
once. The file itself still travels through the cache folder (``INDEX_CACHE_DIR``), which processes
must share (one host, or one shared volume) to share the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.store import StoreError
from retrieval.index import Index, open_cache_file
from retrieval.models import IngestReport

if TYPE_CHECKING:
    from bot.settings import Settings
    from bot.store import IndexGeneration, ReconcileResult, Store
    from bot.store.base import IndexLock

log = logging.getLogger(__name__)

#: How often every process reads the generation row (seconds). Pick-up takes at most this long
#: (plus opening the file) with SQLite, or when PostgreSQL's notification is lost.
POLL_SECONDS = 2.0


class Engine(Protocol):
    """What this module needs of :class:`bot.engine.Engine` (which imports this module, not back)."""

    settings: Settings
    index: Index
    report: IngestReport
    corpus_path: Path
    share: Any

    async def adopt(
        self, index: Index, report: IngestReport, corpus: Path, swapped: Callable[[], None] | None = None
    ) -> bool: ...


def _absolute(path: object) -> str:
    """``path`` made absolute, symlinks resolved (it touches the file system: call it in a thread)."""
    return str(Path(str(path)).expanduser().resolve())


def process_name() -> str:
    """``host:pid`` of this process (recorded as a generation's builder)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class IndexShare:
    """This process's side of the shared index: the lock, the generation it serves, the watcher."""

    def __init__(self, store: Store, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.store = store
        self.poll_seconds = poll_seconds
        #: The generation this process serves (0: none yet).
        self.generation = 0
        self.engine: Engine | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stop_listening: Callable[[], Awaitable[None]] | None = None
        #: The generation whose failed pick-up was already logged (one warning each).
        self._warned = 0
        #: Set when this process built an index whose publication failed (the database was away):
        #: the watcher publishes it once the database answers, unless another one was published since.
        self._unpublished = False

    # -- the lock ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def building(self) -> AsyncIterator[None]:
        """Hold the index lock, waiting for it (a start: another process may be building)."""
        lock = await self.store.acquire_index_lock(wait=True)
        assert lock is not None  # noqa: S101 - wait=True always returns a lock
        try:
            yield
        finally:
            await lock.release()

    async def try_lock(self) -> IndexLock | None:
        """The index lock if no other process holds it (a reindex must not wait for another)."""
        return await self.store.acquire_index_lock(wait=False)

    # -- publishing ----------------------------------------------------------------------------

    async def settle(self, engine: Engine) -> ReconcileResult | None:
        """At start, holding the lock: follow the published generation when it is this very index,
        else publish this one. Reconciles unless that generation already was (then None)."""
        self.engine = engine
        row = await self.store.index_generation()
        if row is not None and await self._is_served(row, engine):
            self.generation = row.generation
            return await self.store.reconcile_generation(engine.index.papers, row.generation)
        return await self.publish(engine)

    async def publish(self, engine: Engine) -> ReconcileResult:
        """Publish the engine's index as the next generation and reconcile with it (one transaction).

        Raises:
            StoreError: The database could not be written; the index keeps serving here and the
                watcher publishes it when the database is back.
        """
        index = engine.index
        cache = engine.report.extra.get("cache")
        if not cache:
            # Built but not saved (an unwritable cache folder): nobody else can open it.
            log.warning("the index could not be saved to a file, so other processes cannot share it")
            return await self.store.reconcile(index.papers)
        corpus_path = await asyncio.to_thread(_absolute, engine.corpus_path)
        cache_file = await asyncio.to_thread(_absolute, cache)
        try:
            row, result = await self.store.publish_index_generation(
                index.papers,
                corpus_path=corpus_path,
                params=index.params.key(),
                cache_file=cache_file,
                fingerprint=index.fingerprint,
                built_by=process_name(),
            )
        except StoreError:
            self._unpublished = True
            raise
        self._unpublished = False
        self.generation = row.generation
        log.info(
            "published index generation %d: %d papers from %s (%s)",
            row.generation, row.papers, row.corpus_path, row.cache_file,
        )  # fmt: skip
        return result

    @staticmethod
    async def _is_served(row: IndexGeneration, engine: Engine) -> bool:
        """True when ``row`` names the index ``engine`` serves (same corpus, settings and content)."""
        index = engine.index
        if row.fingerprint != index.fingerprint or row.params != index.params.key():
            return False
        return row.corpus_path == await asyncio.to_thread(_absolute, engine.corpus_path)

    # -- following -----------------------------------------------------------------------------

    async def start(self, engine: Engine) -> None:
        """Start following the published generation (LISTEN where the backend can, and a poll)."""
        self.engine = engine
        engine.share = self
        try:
            self._stop_listening = await self.store.listen_index_generations(self._wake.set)
        except StoreError as exc:
            log.warning("cannot listen for new indexes (%s); polling every %.0f s", exc, self.poll_seconds)
        self._task = asyncio.get_running_loop().create_task(self._watch(), name="paperbot-index-share")

    async def close(self) -> None:
        """Stop following. Idempotent."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        stop, self._stop_listening = self._stop_listening, None
        if stop is not None:
            with contextlib.suppress(StoreError, OSError):
                await stop()

    async def _watch(self) -> None:
        failing = False
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_seconds)
            self._wake.clear()
            try:
                await self.follow()
            except StoreError as exc:
                if not failing:  # one line per outage, not one per poll
                    log.warning("cannot read the published index generation: %s", exc)
                failing = True
            except Exception:
                log.exception("following the published index failed")
            else:
                failing = False

    async def follow(self) -> bool:
        """Serve the published generation if it is newer than ours; True when the index changed."""
        engine = self.engine
        if engine is None:
            return False
        if self._unpublished:
            await self._publish_late(engine)
        row = await self.store.index_generation()
        if row is None or row.generation <= self.generation:
            return False
        if await self._is_served(row, engine):  # published again (a reindex that changed nothing)
            await self.store.reconcile_generation(engine.index.papers, row.generation)
            self.generation = row.generation
            return False
        if row.params != engine.settings.bm25.key():
            self._warn_once(row, f"it was built with other ranking settings ({row.params})")
            return False
        try:
            index, report = await asyncio.to_thread(
                open_cache_file, row.cache_file, engine.settings.bm25, fingerprint=row.fingerprint,
                previous=engine.index,
            )  # fmt: skip
        except (ValueError, OSError) as exc:
            self._warn_once(row, str(exc))
            return False
        # This process's idea of the corpus first (and the reconcile, if its builder died before it
        # could: normally None), then the swap: a save in between is judged by the new corpus.
        result = await self.store.reconcile_generation(index.papers, row.generation)
        if result is not None:
            log.info("reconciled saved lists with index generation %d: %s", row.generation, result)
        def serving() -> None:  # at the swap: the generation never lags behind the index served
            self.generation = row.generation

        swapped = await engine.adopt(index, report, Path(row.corpus_path), serving)
        if swapped:
            log.info(
                "picked up index generation %d from %s: %d papers (%s)",
                row.generation, row.built_by, len(index), row.cache_file,
            )  # fmt: skip
        return swapped

    async def _publish_late(self, engine: Engine) -> None:
        lock = await self.try_lock()
        if lock is None:
            return
        try:
            row = await self.store.index_generation()
            if row is not None and row.generation > self.generation:
                self._unpublished = False  # another index was published since: follow that one
                return
            result = await self.publish(engine)
            log.info("published the index built while the database was away: %s", result)
        finally:
            await lock.release()

    def _warn_once(self, row: IndexGeneration, why: str) -> None:
        if self._warned != row.generation:
            self._warned = row.generation
            log.warning(
                "cannot serve index generation %d published by %s, still serving the previous index: %s",
                row.generation, row.built_by, why,
            )  # fmt: skip
