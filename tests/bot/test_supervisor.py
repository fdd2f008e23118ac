"""The preforking supervisor (bot/supervisor.py, ``PROCESSES=N``): real processes, a real SQLite file,
no Discord (the children open the bot as ``paperbot run`` does, through tests/bot/_prefork_parent.py).

What must hold (the first scenario on SQLite and PostgreSQL): one child per shard range, each forked
from the supervisor and serving the index the supervisor mapped; a child that dies is started again
(the others untouched); a reindex in one child builds once and every child serves it, a child started
after it too; SIGTERM closes every child cleanly and the supervisor exits 0; children die with a
killed supervisor; a child that cannot start at all stops the deployment with exit code 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.settings import SettingsError, load_settings, shard_plan
from retrieval.index import open_index
from tests.bot.test_index_share import write_corpus

ROOT = Path(__file__).resolve().parents[2]
PARENT = Path(__file__).with_name("_prefork_parent.py")
#: Start-up of the deployment (imports, store, index, cogs) on a loaded 2-core machine.
START_SECONDS = 90.0
PICK_UP_SECONDS = 10.0  # what the issue allows for a reindex to reach every process
PROBE = "zyxquokka"


def test_the_shards_of_a_host_are_split_in_ranges() -> None:
    def plan(**env: str) -> tuple[int, list[tuple[int, ...]]]:
        return shard_plan(load_settings(env=env, config_path=ROOT / "config" / "paperbot.toml"))

    assert plan() == (1, [(0,)])
    assert plan(PROCESSES="2") == (2, [(0,), (1,)])  # one shard each without SHARD_COUNT
    assert plan(PROCESSES="2", SHARD_COUNT="4") == (4, [(0, 1), (2, 3)])
    assert plan(PROCESSES="2", SHARD_COUNT="5") == (5, [(0, 1, 2), (3, 4)])
    assert plan(PROCESSES="3", SHARD_COUNT="8", SHARD_IDS="0-4") == (8, [(0, 1), (2, 3), (4,)])
    assert plan(PROCESSES="2", SHARD_COUNT="8", SHARD_IDS="1,3,5") == (8, [(1, 3), (5,)])
    with pytest.raises(SettingsError, match="PROCESSES=3 needs at least as many shards"):
        plan(PROCESSES="3", SHARD_COUNT="2")
    with pytest.raises(SettingsError, match="PROCESSES must be between 1 and 64"):
        plan(PROCESSES="0")


class Deployment:
    """``python tests/bot/_prefork_parent.py`` and the state files its children write."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.state = tmp_path / "state"
        self.state.mkdir(parents=True)
        self.corpus = tmp_path / "corpus.jsonl"
        if not self.corpus.exists():
            write_corpus(self.corpus, range(30))
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PAPERBOT_", "SHARD_", "DATABASE_"))},
            "CORPUS_PATH": str(self.corpus), "INDEX_CACHE_DIR": str(tmp_path / "cache"),
            "DATABASE_PATH": str(tmp_path / "paperbot.db"), "LOG_LEVEL": "INFO",
            "PAPERBOT_TEST_PROBE": PROBE, "PAPERBOT_CONFIG": str(ROOT / "config" / "paperbot.toml"),
            **env,
        }  # fmt: skip
        self.err = tmp_path / "supervisor.err"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        self.proc = subprocess.Popen(
            [sys.executable, str(PARENT), str(self.state)], env=self.env, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=self.err.open("wb"),
        )  # fmt: skip
        return self.proc

    def log(self) -> str:
        return self.err.read_text(errors="replace")

    def children(self) -> dict[int, dict[str, Any]]:
        """The state of every live child of this supervisor, by pid."""
        out = {}
        assert self.proc is not None
        for path in self.state.glob("*.json"):
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if state["ppid"] == self.proc.pid and alive(state["pid"]):
                out[state["pid"]] = state
        return out

    def wait(self, what: str, check: Callable[[dict[int, dict[str, Any]]], bool], timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            children = self.children()
            if check(children):
                return children
            assert self.proc is not None and self.proc.poll() is None, f"supervisor exited\n{self.log()}"
            time.sleep(0.1)
        raise AssertionError(f"{what}: not within {timeout} s; children {self.children()}\n{self.log()}")

    def by_shards(self, children: dict[int, dict[str, Any]]) -> dict[tuple[int, ...], dict[str, Any]]:
        return {tuple(c["shard_ids"]): c for c in children.values()}

    def stop(self) -> None:
        """Kill whatever is left (the supervisor and any child)."""
        pids = [s["pid"] for s in self.children().values()] if self.proc else []
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """True for a running process (not a zombie waiting to be reaped)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Callable[..., Deployment]]:
    made: list[Deployment] = []

    def make(**env: str) -> Deployment:
        made.append(Deployment(tmp_path / f"d{len(made)}", **env))
        return made[-1]

    yield make
    for d in made:
        d.stop()


def _prebuild(d: Deployment) -> str:
    settings = load_settings(env=d.env, dotenv=False)
    index, _ = open_index(settings.corpus_path, settings.bm25, cache_dir=settings.index_cache_dir)
    return index.fingerprint


def test_children_serve_their_shards_restart_follow_a_reindex_and_stop_on_sigterm(
    deployment: Callable[..., Deployment], store_target: str | Path
) -> None:
    database = {"DATABASE_URL": store_target} if isinstance(store_target, str) else {}
    d = deployment(PROCESSES="2", SHARD_COUNT="4", **database)
    first = _prebuild(d)
    proc = d.start()

    # One child per shard range, forked from the supervisor, serving the index it mapped.
    kids = d.wait("two children", lambda c: len(c) == 2, START_SECONDS)
    shards = d.by_shards(kids)
    assert sorted(shards) == [(0, 1), (2, 3)]
    for state in kids.values():
        assert state["shard_count"] == 4 and state["processes"] == 1
        assert state["inherited"] is True and state["builds"] == 0
        assert state["fingerprint"] == first and state["papers"] == 30 and state["probe"] == 0
        assert state["cogs"] == 7

    # A child that dies is started again for the same shards; the other one is untouched.
    victim, other = shards[(0, 1)]["pid"], shards[(2, 3)]["pid"]
    os.kill(victim, signal.SIGKILL)
    kids = d.wait("the dead child started again", lambda c: len(c) == 2 and victim not in c, START_SECONDS)
    shards = d.by_shards(kids)
    assert shards[(2, 3)]["pid"] == other
    assert shards[(0, 1)]["inherited"] is True and shards[(0, 1)]["fingerprint"] == first
    assert "exited unexpectedly (signal SIGKILL)" in d.log()

    # A reindex in one child builds once; every child serves the new index.
    write_corpus(d.corpus, range(30), extra={3: PROBE})
    (d.state / f"{other}.reindex").write_text("")
    kids = d.wait("the reindex", lambda c: (d.by_shards(c).get((2, 3)) or {}).get("reindexed"), START_SECONDS)
    assert d.by_shards(kids)[(2, 3)]["reindexed"] == {"papers": 30}
    kids = d.wait(
        "every child on the new index",
        lambda c: len(c) == 2 and all(s["probe"] == 1 for s in c.values()),
        PICK_UP_SECONDS,
    )
    fingerprints = {s["fingerprint"] for s in kids.values()}
    assert len(fingerprints) == 1 and first not in fingerprints
    assert sorted(s["builds"] for s in kids.values()) == [0, 1]  # built once, by the reindexing child
    (second,) = fingerprints

    # A child started after the reindex maps the new file the supervisor mapped for it: no build.
    os.kill(other, signal.SIGKILL)
    kids = d.wait("the builder started again", lambda c: len(c) == 2 and other not in c, START_SECONDS)
    again = d.by_shards(kids)[(2, 3)]
    assert again["inherited"] is True and again["builds"] == 0
    assert again["fingerprint"] == second and again["probe"] == 1
    assert {s["generation"] for s in kids.values()} == {again["generation"]}

    # SIGTERM: every child closes the bot and exits; the supervisor exits 0.
    pids = list(kids)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, d.log()
    for pid in pids:
        assert (d.state / f"{pid}.closed").exists(), d.log()
        assert not alive(pid)
    assert "SIGTERM, stopping every bot process" in d.log()


def test_children_die_with_a_killed_supervisor_and_build_once_without_a_cache(
    deployment: Callable[..., Deployment],
) -> None:
    d = deployment(PROCESSES="3")
    proc = d.start()
    kids = d.wait("three children", lambda c: len(c) == 3, START_SECONDS)
    assert sorted(tuple(s["shard_ids"]) for s in kids.values()) == [(0,), (1,), (2,)]
    assert {s["shard_count"] for s in kids.values()} == {3}
    # No cache file when the supervisor started: nothing to map, one child built, the others opened it.
    assert sum(s["builds"] for s in kids.values()) == 1
    assert not any(s["inherited"] for s in kids.values())
    assert len({s["fingerprint"] for s in kids.values()}) == 1

    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in kids if alive(pid)], "children outlived their supervisor"


def test_a_child_that_cannot_start_stops_the_deployment_with_exit_code_2(
    deployment: Callable[..., Deployment], tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    d = deployment(PROCESSES="2", DATABASE_PATH=str(blocked / "paperbot.db"))
    proc = d.start()
    assert proc.wait(timeout=START_SECONDS) == 2, d.log()
    assert "could not start (exit code 2); stopping every bot process" in d.log()


async def test_a_process_serves_the_preloaded_index_only_while_it_is_current(tmp_path: Path) -> None:
    import dataclasses

    import bot.engine as engine_module
    from bot.engine import Engine, preload
    from bot.settings import Settings

    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, range(30))
    settings = dataclasses.replace(Settings(), corpus_path=corpus, index_cache_dir=tmp_path / "cache")
    assert preload(settings) is False  # no cache file yet: nothing is built here
    assert not list(tmp_path.glob("**/*.pbindex"))
    built = await Engine.load(settings)
    assert built.inherited is False and built.report.from_cache is False

    assert preload(settings) is True
    mapped = engine_module._preloaded[1]  # type: ignore[index]
    assert preload(settings) is True and engine_module._preloaded[1] is mapped  # still current: kept
    served = await Engine.load(settings)
    assert served.inherited is True and served.index is mapped
    assert engine_module._preloaded is None  # the process lets go of it: a swap can free it

    # Another corpus path, or a corpus changed since the supervisor mapped it: the process opens its own.
    assert preload(settings) is True
    write_corpus(tmp_path / "other.jsonl", range(5))
    other = dataclasses.replace(settings, corpus_path=tmp_path / "other.jsonl")
    assert (await Engine.load(other)).inherited is False
    assert engine_module._preloaded is None
    assert preload(settings) is True
    write_corpus(corpus, range(30), extra={3: PROBE})
    fresh = await Engine.load(settings)
    assert fresh.inherited is False and fresh.search(PROBE).total == 1
    # The supervisor replaces a stale preloaded index with the current file before its next fork.
    assert preload(settings) is True
    assert engine_module._preloaded[1].fingerprint == fresh.index.fingerprint  # type: ignore[index]
    engine_module._preloaded = None


def test_paperbot_run_with_processes_identifies_every_shard_once_and_stops_on_sigterm(tmp_path: Path) -> None:
    """The real run_bot in each child (login, gateway) against the fake Discord: PROCESSES=2 with
    SHARD_COUNT=4 identifies shards 0-1 from one process and 2-3 from the other, each once."""
    from tests.bot.test_app import FAKE_TOKEN, fake_in_thread

    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, range(30))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PAPERBOT_", "SHARD_", "DATABASE_"))},
        "CORPUS_PATH": str(corpus), "INDEX_CACHE_DIR": str(tmp_path / "cache"),
        "DATABASE_PATH": str(tmp_path / "paperbot.db"),
        "PAPERBOT_CONFIG": str(ROOT / "config" / "paperbot.toml"), "DISCORD_TOKEN": FAKE_TOKEN,
        "PROCESSES": "2", "SHARD_COUNT": "4", "LOG_LEVEL": "INFO",
    }  # fmt: skip
    err = tmp_path / "supervisor.err"
    with fake_in_thread() as fake:
        env.update(PAPERBOT_TEST_API=fake.base_url, PAPERBOT_TEST_GATEWAY=str(fake.gateway_url))
        proc = subprocess.Popen(
            [sys.executable, str(PARENT.with_name("_prefork_run.py"))], env=env, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=err.open("wb"),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + START_SECONDS
            while len(fake.identified_shards) < 4 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert sorted(fake.identified_shards) == [(0, 4), (1, 4), (2, 4), (3, 4)], err.read_text()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, err.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    log = err.read_text()
    assert log.count("database closed") == 2, log
    assert "[shards 0-1]" in log and "[shards 2-3]" in log
    assert FAKE_TOKEN not in log
