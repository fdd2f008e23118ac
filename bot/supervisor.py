"""``paperbot run`` with ``PROCESSES=N``: one supervisor forks N bot processes over one copy of the code.

Independent processes each carry their own interpreter heap (~44 MB of imported code and objects:
discord.py, numpy, the services, the cogs) even though the index file's pages are shared. The
supervisor does the read-only work once, then forks, so the children share those pages copy-on-write:

1. it imports everything a bot process runs (:mod:`bot.app`, the cogs, the store drivers, the ranking
   kernel) and maps the corpus's current index file (:func:`bot.engine.preload`; it never builds:
   a missing or stale file is built once by the first child under the index lock, as processes
   starting together do), then ``gc.freeze()`` so no collection in a child touches those pages;
2. it forks one process per shard range (:func:`bot.settings.shard_plan`) before any event loop,
   thread, database connection or Discord client exists in it. Each child dies with the supervisor
   (``PR_SET_PDEATHSIG``), then makes its own loop, store connections and client: it is the bot
   ``paperbot run`` runs, with ``SHARD_IDS`` set to its range;
3. it waits. A child that exits while nobody asked it to is started again (after 1 s, doubling up to
   60 s while it keeps failing; a child that ran 60 s starts again after 1 s). A child whose very first
   start fails with exit code 2 (a start-up problem: token, database, corpus) stops them all with
   exit code 2, as one ``paperbot run`` would. SIGTERM or SIGINT is passed to every child, which
   closes cleanly (a second signal, or 30 s, kills what is left); the supervisor then exits 0.

Reindexing is unchanged: the children share one index through the database's index generation row
(:mod:`bot.index_share`), so a reindex in any child builds once and the others pick it up. A child
started again later maps the supervisor's index only while it is still current; before forking it the
supervisor replaces a stale one with the current file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.logs import label_process
from bot.settings import Settings, shard_plan
from retrieval._libc import die_with_parent

log = logging.getLogger(__name__)

#: A failed child's first restart delay, and the most it doubles to.
RESTART_FIRST_SECONDS = 1.0
RESTART_MAX_SECONDS = 60.0
#: A child that ran this long before it exited restarts after RESTART_FIRST_SECONDS again.
STABLE_SECONDS = 60.0
#: How long the children have to close after SIGTERM before they are killed.
STOP_GRACE_SECONDS = 30.0

_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT}

#: What a child runs: its settings in, an exit code out (``bot.app.run_bot`` by default).
ChildTarget = Callable[[Settings], int]


def shard_label(shard_ids: tuple[int, ...]) -> str:
    """``shards 0-1``, ``shard 3``, ``shards 0,2``."""
    if len(shard_ids) == 1:
        return f"shard {shard_ids[0]}"
    if list(shard_ids) == list(range(shard_ids[0], shard_ids[-1] + 1)):
        return f"shards {shard_ids[0]}-{shard_ids[-1]}"
    return "shards " + ",".join(map(str, shard_ids))


def prepare(settings: Settings) -> bool:
    """Import what every bot process runs and map the current index (the supervisor, before forking).
    Returns whether an index was mapped."""
    app = importlib.import_module("bot.app")  # discord.py, aiohttp, the services, the engine, numpy
    for name in app.EXTENSIONS:
        importlib.import_module(name)  # load_extension runs the cog file again; its imports are shared
    importlib.import_module("aiosqlite")
    if settings.database_url:
        importlib.import_module("bot.store.postgres")  # asyncpg
    from bot.engine import preload
    from retrieval.postings import compiled_kernel

    compiled_kernel()  # the C kernel's shared object, loaded once
    return preload(settings)


@dataclass
class _Slot:
    """One shard range and the process serving it."""

    shard_ids: tuple[int, ...]
    pid: int | None = None
    started: float = 0.0
    starts: int = 0
    failures: int = 0  # consecutive short-lived exits, for the backoff
    due: float | None = None  # when to start it again


class Supervisor:
    """Forks and watches the bot processes of one host; :meth:`run` returns the exit code.

    ``target`` is what each child runs (``bot.app.run_bot``: the bot, its gateway connection; tests
    pass one that opens the same bot without Discord).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        target: ChildTarget | None = None,
        restart_first: float = RESTART_FIRST_SECONDS,
        restart_max: float = RESTART_MAX_SECONDS,
        stable: float = STABLE_SECONDS,
        stop_grace: float = STOP_GRACE_SECONDS,
    ) -> None:
        self.settings = settings
        self.target = target
        self.restart_first, self.restart_max = restart_first, restart_max
        self.stable, self.stop_grace = stable, stop_grace
        self.shard_count, plan = shard_plan(settings)
        self.slots = [_Slot(ids) for ids in plan]
        self.stopping = False
        self.stop_deadline = 0.0
        self.exit_code = 0
        self._mask: set[signal.Signals] = set()

    # -- the parent ---------------------------------------------------------------------------------

    def run(self) -> int:
        """Prepare, fork every child, supervise until stopped; 0 on a clean stop, 2 on a start-up failure."""
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            mapped = prepare(self.settings)
            log.info(
                "supervisor %d: %d bot processes for shards %s of %d (%s)",
                os.getpid(),
                len(self.slots),
                " | ".join(shard_label(s.shard_ids).split(" ", 1)[1] for s in self.slots),
                self.shard_count,
                "index mapped for them" if mapped else "no current index file: the first one builds it",
            )
            for slot in self.slots:
                self._start(slot, preload=False)
            self._supervise()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        return self.exit_code

    def _supervise(self) -> None:
        while True:
            self._reap()
            now = time.monotonic()
            alive = [s for s in self.slots if s.pid is not None]
            if self.stopping:
                if not alive:
                    return
                if now >= self.stop_deadline:
                    self._kill_all(signal.SIGKILL, "did not stop in time")
                    self.stop_deadline = now + self.stop_grace
            else:
                for slot in self.slots:
                    if slot.pid is None and slot.due is not None and slot.due <= now:
                        self._start(slot, preload=True)
            waits = [s.due - now for s in self.slots if s.pid is None and s.due is not None]
            timeout = max(0.01, min([1.0, *waits]))
            info = signal.sigtimedwait(_SIGNALS, timeout)
            if info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
                if self.stopping:
                    self._kill_all(signal.SIGKILL, "a second stop signal")
                else:
                    log.info("supervisor: %s, stopping every bot process", signal.Signals(info.si_signo).name)
                    self._stop()

    def _stop(self) -> None:
        self.stopping = True
        self.stop_deadline = time.monotonic() + self.stop_grace
        self._kill_all(signal.SIGTERM, None)

    def _kill_all(self, signum: int, why: str | None) -> None:
        for slot in self.slots:
            if slot.pid is not None:
                if why:
                    log.warning(
                        "supervisor: killing %s (pid %d): %s", shard_label(slot.shard_ids), slot.pid, why
                    )
                with contextlib.suppress(ProcessLookupError):
                    os.kill(slot.pid, signum)

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            slot = next((s for s in self.slots if s.pid == pid), None)
            if slot is None:
                continue
            slot.pid = None
            code = os.waitstatus_to_exitcode(status)
            how = f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
            name = shard_label(slot.shard_ids)
            if self.stopping:
                log.info("supervisor: %s (pid %d) stopped (%s)", name, pid, how)
                continue
            lived = time.monotonic() - slot.started
            if code == 2 and slot.starts == 1:
                log.critical("supervisor: %s could not start (%s); stopping every bot process", name, how)
                self.exit_code = 2
                self._stop()
                continue
            slot.failures = 0 if lived >= self.stable else slot.failures + 1
            delay = min(self.restart_max, self.restart_first * 2 ** max(0, slot.failures - 1))
            slot.due = time.monotonic() + delay
            log.warning(
                "supervisor: %s (pid %d) exited unexpectedly (%s) after %.0f s; starting it again in %.1f s",
                name, pid, how, lived, delay,
            )  # fmt: skip

    def _start(self, slot: _Slot, *, preload: bool) -> None:
        if preload:  # a child started again: map the current index first (a reindex may have replaced it)
            from bot.engine import preload as preload_index

            preload_index(self.settings)
        settings = dataclasses.replace(
            self.settings, shard_count=self.shard_count, shard_ids=slot.shard_ids, processes=1
        )
        if threading.active_count() > 1:  # a thread's locks would be copied held into the child
            log.warning("supervisor: forking with %d threads running", threading.active_count())
        gc.freeze()  # what the children inherit stays out of their collections (and unwritten)
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._child(settings, parent, slot.shard_ids)  # never returns
        slot.pid, slot.started, slot.due = pid, time.monotonic(), None
        slot.starts += 1
        log.info("supervisor: started %s (pid %d)", shard_label(slot.shard_ids), pid)

    # -- a child ------------------------------------------------------------------------------------

    def _child(self, settings: Settings, parent: int, shard_ids: tuple[int, ...]) -> None:
        code = 1
        try:
            die_with_parent(parent)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
            label_process(shard_label(shard_ids))
            target = self.target
            if target is None:
                from bot.app import run_bot

                target = run_bot
            code = target(settings)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            log.exception("the bot process for %s failed", shard_label(shard_ids))
            code = 1
        finally:
            with contextlib.suppress(Exception):
                logging.shutdown()
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)  # never the parent's atexit handlers or buffers
