"""Group commit for saves: concurrent saves of *different* users written in one transaction.

A save is a few small writes and one durable commit; on a busy bot the commit (an fsync, and on a
server the round trips around it) costs far more than the writes. :class:`SaveBatcher` queues the
saves callers make at the same time and hands them to the driver in batches: one transaction, one
commit, then every caller is told its own outcome — created, already there, the list is full, too
many lists — exactly as if it had saved alone.

Design notes (the *why*):

* **One save per user per batch, in arrival order.** A user's saves are read-modify-writes of that
  user's rows (the cap, the list): keeping them one per batch, and never letting a later save of a
  user overtake an earlier one, gives the same results as saving one after another.
* **No waiting at low load.** A batch starts as soon as a worker is free; only saves that arrive
  while ``workers`` batches are already running wait, and they go together in the next one. One
  lone save is written at once, as before.
* **Per-save outcomes.** The driver returns a result or an exception per request; one user's list at
  its cap fails that save only. An error of the whole transaction (the server went away, the disk is
  full) is given to every caller of that batch, and the batcher carries on with the next one.
* **Cancellation.** A caller cancelled while its save waits in the queue is dropped, never written.
  Once its batch has started the save completes (or not) with the others, like a save whose answer
  was lost on the way: the caller only stops waiting.
* **Durability is unchanged:** a caller is answered only after the batch's commit returned.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.store.errors import DatabaseError
from bot.store.records import SaveResult
from retrieval.models import Paper

log = logging.getLogger("bot.store")


@dataclass(slots=True, eq=False)
class SaveRequest:
    """One caller's save, validated: ``name`` is the normalised list name, ``key`` its lookup key,
    ``snapshot`` the paper's stored columns (:func:`bot.store.sql.snapshot_values`)."""

    user_id: int
    paper: Paper
    name: str
    key: str
    note: str | None
    snapshot: tuple[Any, ...]
    future: asyncio.Future[SaveResult] = field(init=False, repr=False)


#: Runs one batch in one transaction: a result or an exception per request, in order; raises when the
#: whole transaction failed.
BatchRunner = Callable[[Sequence[SaveRequest]], Awaitable[Sequence[SaveResult | BaseException]]]


def _for_one_caller(exc: BaseException) -> BaseException:
    """A copy of a batch-wide error for each caller (one exception object raised in several tasks
    would collect all their tracebacks)."""
    try:
        clone = copy.copy(exc)
    except Exception:  # noqa: BLE001 - an exception class that cannot be copied: share it
        return exc
    clone.__cause__ = exc
    return clone


class SaveBatcher:
    """Queues saves and writes them in batches through ``run`` (see the module notes)."""

    def __init__(self, run: BatchRunner, *, workers: int = 2, max_batch: int = 64, target: str = "") -> None:
        self._run = run
        self.workers = workers
        self.max_batch = max_batch
        self._target = target
        self._queue: deque[SaveRequest] = deque()
        self._busy: set[int] = set()  # users with a save in a running batch
        self._tasks: set[asyncio.Task[None]] = set()
        # Workers that have not yet decided to stop (counted by the worker itself: a finished task
        # leaves ``_tasks`` only in a later loop step, after a caller may have queued a save).
        self._working = 0
        self._closed = False
        #: Sizes of the batches written so far (the bench and the tests read it).
        self.batches = 0
        self.saves = 0

    async def save(self, request: SaveRequest) -> SaveResult:
        """Queue ``request`` and wait for its batch's commit; returns or raises its own outcome."""
        if self._closed:
            raise DatabaseError("The saved-papers store is closed.", target=self._target)
        request.future = asyncio.get_running_loop().create_future()
        self._queue.append(request)
        self._start_workers()
        # Cancelling the caller cancels the future: a queued request is then skipped (see notes).
        return await request.future

    def _start_workers(self) -> None:
        while self._working < self.workers and self._working < len(self._queue):
            self._working += 1
            task = asyncio.get_running_loop().create_task(self._work(), name="paperbot-save-batch")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _take(self) -> list[SaveRequest]:
        """The next batch: the oldest waiting save of each user not already in a running batch."""
        batch: list[SaveRequest] = []
        users: set[int] = set()
        kept: deque[SaveRequest] = deque()
        while self._queue:
            request = self._queue.popleft()
            if request.future.done():  # cancelled while waiting: never written
                continue
            uid = request.user_id
            if uid in users or uid in self._busy or len(batch) >= self.max_batch:
                kept.append(request)
                continue
            users.add(uid)
            batch.append(request)
        self._queue = kept
        return batch

    async def _work(self) -> None:
        try:
            await self._work_batches()
        finally:
            self._working -= 1

    async def _work_batches(self) -> None:
        # Let the callers that are ready to run queue their saves first, so they share this batch.
        await asyncio.sleep(0)
        while True:
            batch = self._take()
            if not batch:
                return  # (the caller's finally counts this worker out before any other task runs)
            users = {r.user_id for r in batch}
            self._busy |= users
            try:
                outcomes = await self._run(batch)
            except asyncio.CancelledError:
                for request in batch:
                    request.future.cancel()
                raise
            except BaseException as exc:  # noqa: BLE001 - every caller of the batch is told, then carry on
                if not isinstance(exc, Exception):
                    for request in batch:
                        request.future.cancel()
                    raise
                log.debug("%s: a batch of %d saves failed: %r", self._target, len(batch), exc)
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(_for_one_caller(exc))
            else:
                self.batches += 1
                self.saves += len(batch)
                for request, outcome in zip(batch, outcomes, strict=True):
                    if request.future.done():
                        continue
                    if isinstance(outcome, BaseException):
                        request.future.set_exception(outcome)
                    else:
                        request.future.set_result(outcome)
            finally:
                self._busy -= users

    async def close(self) -> None:
        """Refuse new saves and wait for the queued and running ones to be written."""
        self._closed = True
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
