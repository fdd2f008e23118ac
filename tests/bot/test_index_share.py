"""One index for every process (bot/index_share.py): real processes on a real SQLite file and a real
PostgreSQL server, each opening the services as ``paperbot run`` does (tests/bot/_index_child.py).

What must hold: a reindex in one process is built once and served by the others within 10 s; N
processes starting together build once and reconcile once; a builder killed mid-build frees the lock
and nothing half-built is ever served; a process that cannot open a published file keeps serving
the old index with one warning.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import bot.engine as bot_engine
from bot.services.registry import open_services
from bot.store import open_store
from retrieval.models import Paper

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("_index_child.py")
#: What the issue allows for a reindex to reach every process.
PICK_UP_SECONDS = 10.0
#: Start-up of a child (imports, store, index) on a loaded 2-core machine.
START_SECONDS = 90.0
RECONCILED = "reconciled "  # bot.store's line when a reconcile really ran


def paper_row(i: int, extra: str = "") -> dict[str, Any]:
    words = ["sparse", "autoencoder", "reward", "model", "diffusion", "policy", "graph", "kernel"]
    text = " ".join(words[(i + k) % len(words)] for k in range(40))
    return {
        "id": f"p{i:04d}",
        "title": f"Paper number {i}",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "abstract": f"We study {text} in setting number {i} {extra}.".replace(" .", "."),
        "area": "Theory" if i % 2 else "Vision",
    }


def write_corpus(path: Path, ids: range, extra: dict[int, str] | None = None) -> None:
    extra = extra or {}
    rows = [paper_row(i, extra.get(i, "")) for i in ids]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


class Child:
    """One bot process (its services), with its stdout events collected by a thread."""

    def __init__(self, env: dict[str, str], err: Path) -> None:
        self.err = err
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err.open("wb"),
            env=env,
            cwd=ROOT,
            text=True,
        )
        self.events: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.events.append(event)
            self._queue.put(event)
        self._queue.put(None)

    def wait_for(self, key: str, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {key!r} from the child in {timeout} s; stderr:\n{self.stderr()}")
            try:
                event = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                raise AssertionError(f"the child ended before {key!r}; stderr:\n{self.stderr()}")
            if key in event:
                return event[key]

    def ask(self, command: str, key: str, timeout: float = 60.0) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.wait_for(key, timeout)

    def stderr(self) -> str:
        try:
            return self.err.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    @property
    def builds(self) -> int:
        return sum(1 for e in self.events if "built" in e)

    @property
    def reconciles(self) -> int:
        return sum(1 for e in self.events if e.get("log", "").startswith(RECONCILED))

    def warnings(self, text: str) -> int:
        return sum(1 for e in self.events if e.get("level") == "WARNING" and text in e.get("log", ""))

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def deployment(store_target, tmp_path):
    """``spawn(**env)`` starts one more bot process on the shared database, corpus and cache folder."""
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, range(30))
    cache = tmp_path / "cache"
    children: list[Child] = []

    def spawn(**extra: str) -> Child:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "PAPERBOT_"))}
        env.update(CORPUS_PATH=str(corpus), INDEX_CACHE_DIR=str(cache), LOG_LEVEL="INFO")
        if isinstance(store_target, Path):
            env["DATABASE_PATH"] = str(store_target)
        else:
            env["DATABASE_URL"] = store_target
        env.update(extra)
        child = Child(env, tmp_path / f"child{len(children)}.err")
        children.append(child)
        return child

    spawn.corpus = corpus  # type: ignore[attr-defined]
    spawn.cache = cache  # type: ignore[attr-defined]
    spawn.target = store_target  # type: ignore[attr-defined]
    try:
        yield spawn
    finally:
        for child in children:
            child.close()


def wait_until_served(child: Child, fingerprint: str, timeout: float) -> float:
    """Seconds until ``child`` serves the index with ``fingerprint`` (fails after ``timeout``)."""
    started = time.monotonic()
    while True:
        seen = child.ask("state", "state")
        if seen["fingerprint"] == fingerprint:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"still serving {seen} after {timeout} s")
        time.sleep(0.1)


async def test_a_reindex_in_one_process_is_served_by_the_other_within_10_s(deployment):
    a = deployment()
    first = a.wait_for("ready", START_SECONDS)
    b = deployment()
    second = b.wait_for("ready", START_SECONDS)
    assert (a.builds, b.builds) == (1, 0)  # b opened the file a built
    assert first["fingerprint"] == second["fingerprint"] and first["generation"] == second["generation"] == 1
    assert a.reconciles + b.reconciles == 1

    # Someone saved p0029, which the next corpus drops.
    async with await open_store(deployment.target) as store:
        await store.save_paper(7, Paper("p0029", "Paper number 29", ("Ada Lovelace",), False, "Theory", "x"))
    write_corpus(deployment.corpus, range(29), extra={3: "zyxquokka"})
    outcome = a.ask("reindex", "reindex", timeout=120)
    assert outcome == {"papers": 29, "gone": ["p0029"]}
    new = a.ask("state", "state")
    assert new["generation"] == 2 and new["fingerprint"] != first["fingerprint"]

    took = wait_until_served(b, new["fingerprint"], PICK_UP_SECONDS)
    assert took < PICK_UP_SECONDS
    assert b.ask("search zyxquokka", "search") == ["p0003"]
    state = b.ask("state", "state")
    assert (state["generation"], state["papers"]) == (2, 29)
    # Built once (by a), reconciled once per generation (at a's start and with a's reindex).
    assert (a.builds, b.builds) == (2, 0)
    assert a.reconciles + b.reconciles == 2
    assert b.warnings("cannot serve index generation") == 0
    async with await open_store(deployment.target) as store:
        page = await store.get_list(7)
        assert [(item.paper_id, item.in_corpus) for item in page.items] == [("p0029", False)]


async def test_processes_starting_together_build_once_and_reconcile_once(deployment):
    children = [deployment() for _ in range(3)]
    states = [child.wait_for("ready", START_SECONDS) for child in children]
    assert sum(child.builds for child in children) == 1
    assert sum(child.reconciles for child in children) == 1
    assert len({s["fingerprint"] for s in states}) == 1
    assert [s["generation"] for s in states] == [1, 1, 1]
    # A restart of one of them follows the published index: no build, no reconcile.
    children[1].close()
    again = deployment()
    assert again.wait_for("ready", START_SECONDS)["generation"] == 1
    assert (again.builds, again.reconciles) == (0, 0)


async def test_a_builder_killed_mid_build_frees_the_lock_and_nothing_half_built_is_served(deployment):
    b = deployment()
    old = b.wait_for("ready", START_SECONDS)
    a = deployment(PAPERBOT_TEST_SLOW_BUILD="120")  # its builds take two minutes
    assert a.wait_for("ready", START_SECONDS)["fingerprint"] == old["fingerprint"]  # opened b's file
    write_corpus(deployment.corpus, range(31))
    assert a.proc.stdin is not None
    a.proc.stdin.write("reindex\n")
    a.proc.stdin.flush()
    a.wait_for("building", 60)
    # While a builds, no other process may: b's reindex is refused, and b keeps serving.
    refused = b.ask("reindex", "reindex")
    assert "already running in another" in refused["error"], refused
    a.kill()
    # The lock went with a: b can reindex at once (the server may take a moment to see a's session end).
    deadline = time.monotonic() + 20
    while True:
        outcome = b.ask("reindex", "reindex", timeout=120)
        if "error" not in outcome or time.monotonic() > deadline:
            break
        assert "already running in another" in outcome["error"], outcome
        time.sleep(0.2)
    assert outcome["papers"] == 31, outcome
    state = b.ask("state", "state")
    assert state["generation"] == 2 and state["fingerprint"] != old["fingerprint"]
    assert b.builds == 2  # its start and this reindex; a never published anything
    leftovers = [p.name for p in deployment.cache.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


@contextlib.asynccontextmanager
async def builder_and_follower(store_target, settings_factory, tmp_path):  # noqa: ANN001, ANN201
    """Two processes' services in one process (two stores on one database) on a corpus of 30 papers
    at ``tmp_path / "corpus.jsonl"``: the builder, and the follower with its watcher stopped (only
    explicit ``follow()`` calls move it)."""
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, range(30))
    fields: dict[str, Any] = {"corpus_path": corpus, "index_cache_dir": tmp_path / "cache"}
    if isinstance(store_target, Path):
        fields["database_path"] = store_target
    else:
        fields["database_url"] = store_target
    builder = await open_services(settings_factory(**fields))
    follower = await open_services(settings_factory(**fields))
    try:
        await follower.context.engine.share.close()
        yield builder, follower
    finally:
        await follower.close()
        await builder.close()


async def test_a_process_that_cannot_open_the_new_file_keeps_serving_with_one_warning(
    store_target, settings_factory, tmp_path, caplog
):
    """Two processes' services in one process (two stores on one database); the follower is driven by
    hand. A published file that is missing, then damaged, then fine."""
    corpus = tmp_path / "corpus.jsonl"
    async with builder_and_follower(store_target, settings_factory, tmp_path) as (builder, follower):
        engine, share = follower.context.engine, follower.context.engine.share
        serving = engine.index
        write_corpus(corpus, range(31))
        moved = tmp_path / "moved.pbindex"
        await builder.context.engine.reindex()
        published = await builder.context.store.index_generation()
        Path(published.cache_file).rename(moved)  # the file went missing
        caplog.set_level(logging.WARNING, logger="bot.index_share")
        for _ in range(3):
            assert await share.follow() is False
        assert engine.index is serving and share.generation == 1
        lines = [r for r in caplog.records if "cannot serve index generation 2" in r.getMessage()]
        assert len(lines) == 1 and "still serving the previous index" in lines[0].getMessage()
        damaged = Path(published.cache_file)
        damaged.write_bytes(moved.read_bytes()[: moved.stat().st_size // 2])  # half a file
        assert await share.follow() is False and engine.index is serving
        os.replace(moved, damaged)
        assert await share.follow() is True
        assert engine.index is not serving and len(engine) == 31 and share.generation == 2
        assert engine.index.fingerprint == builder.context.engine.index.fingerprint
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name == "bot.index_share"]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]  # the damaged file: no second one


async def test_the_generation_served_is_recorded_at_the_swap(
    store_target, settings_factory, tmp_path, monkeypatch
):
    """Letting go of the old index awaits (a worker thread takes it apart): meanwhile the new index is
    served, and the generation this process reports must already be the new one."""
    corpus = tmp_path / "corpus.jsonl"
    async with builder_and_follower(store_target, settings_factory, tmp_path) as (builder, follower):
        engine, share = follower.context.engine, follower.context.engine.share
        serving = engine.index
        write_corpus(corpus, range(31))
        await builder.context.engine.reindex()
        seen: list[tuple[bool, int]] = []
        release = bot_engine._release

        async def slow_release(previous):  # noqa: ANN001, ANN202
            seen.append((engine.index is not serving, share.generation))
            await release(previous)

        monkeypatch.setattr(bot_engine, "_release", slow_release)
        assert await share.follow() is True
        assert seen == [(True, 2)] and share.generation == 2
