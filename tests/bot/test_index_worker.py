"""The reindex worker dies with the bot, and what a killed build leaves behind is swept at the next
start; corpus sizing reads only the files a load would read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import bot.engine as engine_module
import retrieval.index as index_module
from bench._synth import Generator, write_corpus
from bot.engine import Engine, corpus_bytes
from bot.settings import Settings
from retrieval.index import cache_path_for

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and SIGKILL")


@pytest.fixture(scope="module")
def slow_corpus(tmp_path_factory) -> Path:
    """Big enough that a build runs for a few seconds."""
    folder = tmp_path_factory.mktemp("worker") / "corpus"
    write_corpus(Generator(12_000, seed=3).papers(), folder, per_file=4000)
    return folder


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie has died
    except OSError:
        return False


def _wait_dead(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


PARENT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    import bot.index_worker as worker
    from retrieval.index import BM25Params

    real = asyncio.create_subprocess_exec

    async def spy(*args, **kwargs):
        process = await real(*args, **kwargs)
        print(process.pid, flush=True)
        return process

    worker.asyncio.create_subprocess_exec = spy

    async def main():
        await worker.build_in_subprocess(
            Path(sys.argv[1]), BM25Params(), cache_dir=Path(sys.argv[2]), previous=None,
            progress=lambda *a: None,
        )
        print("finished", flush=True)

    asyncio.run(main())
    """
)


def test_the_worker_dies_when_the_bot_is_killed(slow_corpus, tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(slow_corpus), str(tmp_path / "cache")],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        line = parent.stdout.readline()
        worker = int(line)
        time.sleep(0.5)  # the worker is parsing now
        assert _alive(worker)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _wait_dead(worker), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


MIDDLE = textwrap.dedent(
    """
    import subprocess, sys, time
    # The grandchild inherits our stdin (whose write end the test holds, so it never sees EOF) and
    # writes to a file: only the parent-death signal can end it when we are killed.
    code = (
        "import sys, time; from bot.index_worker import die_with_parent; "
        "die_with_parent(int(sys.argv[1])); print('armed', flush=True); time.sleep(60)"
    )
    import os
    child = subprocess.Popen([sys.executable, "-c", code, str(os.getpid())], stdout=open(sys.argv[1], "w"))
    print(child.pid, flush=True)
    time.sleep(60)
    """
)


def test_the_parent_death_signal_ends_the_worker_without_the_pipe(tmp_path):
    marker = tmp_path / "armed"
    middle = subprocess.Popen(
        [sys.executable, "-c", MIDDLE, str(marker)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, cwd=ROOT,
    )
    try:
        grandchild = int(middle.stdout.readline())
        deadline = time.monotonic() + 20
        while "armed" not in (marker.read_text() if marker.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(grandchild)
        os.kill(middle.pid, signal.SIGKILL)
        middle.wait(10)
        assert _wait_dead(grandchild), "the parent-death signal did not end the worker"
    finally:
        middle.kill()
        middle.stdin.close()


def test_the_worker_exits_when_its_parent_pipe_closes(slow_corpus, tmp_path):
    # The watchdog alone (as on a system without PR_SET_PDEATHSIG): the parent stays alive but
    # closes the worker's stdin.
    worker = subprocess.Popen(
        [sys.executable, "-m", "bot.index_worker", str(slow_corpus), "--params", json.dumps({}),
         "--parent", str(os.getpid()), "--cache-dir", str(tmp_path / "cache")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    try:
        assert worker.stdout.readline().startswith(b'{"progress"')
        worker.stdin.close()
        assert worker.wait(10) != 0
        assert not list((tmp_path / "cache").glob("*.pbindex"))  # it stopped before finishing
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


async def test_a_start_sweeps_what_a_killed_build_left(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    write_corpus(Generator(50, seed=1).papers(), corpus)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    settings = Settings(corpus_path=corpus, index_cache_dir=cache_dir)
    cache = cache_path_for(corpus, settings.bm25, cache_dir)
    debris = cache_dir / f"{cache.name}.2147480000.x1y2z3.tmp"  # a pid that is not running
    debris.write_bytes(b"\0" * 4096)
    monkeypatch.setattr(index_module.tempfile, "tempdir", str(tmp_path))
    transfer = tmp_path / "paperbot-transfer-abc"
    transfer.mkdir()
    (transfer / "post_docs.npy").write_bytes(b"x")
    stale = time.time() - index_module.TRANSFER_STALE_SECONDS - 60
    os.utime(transfer, (stale, stale))
    engine = await Engine.load(settings)
    assert len(engine) == 50
    assert not debris.exists() and not transfer.exists()
    assert cache.exists()


def test_corpus_bytes_counts_only_the_files_a_load_reads(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_bytes(b"x" * 100)
    (corpus / "b.jsonl").write_bytes(b"y" * 50)
    (corpus / "paper.pdf").write_bytes(b"z" * 10_000)  # not a corpus file
    (corpus / "pdfs").mkdir()
    for i in range(50):
        (corpus / "pdfs" / f"{i}.txt").write_bytes(b"w" * 1000)  # in a subfolder: never read
    assert corpus_bytes(corpus) == 150
    assert corpus_bytes(corpus / "a.txt") == 100
    assert corpus_bytes(tmp_path / "missing") == 0


async def test_reindex_sizes_the_corpus_off_the_event_loop(harness, monkeypatch):
    import threading

    loop_thread = threading.get_ident()
    seen = []
    real = engine_module.corpus_bytes

    def spy(path):
        seen.append(threading.get_ident())
        return real(path)

    monkeypatch.setattr(engine_module, "corpus_bytes", spy)
    await harness.bot.engine.reindex()
    assert seen and all(t != loop_thread for t in seen)


async def test_a_worker_that_writes_much_to_stderr_does_not_hang_the_reindex(tmp_path, monkeypatch):
    # More than a pipe holds (64 KiB) written to stderr before the build: the parent must drain stderr
    # while it reads stdout, or the worker blocks on its write and the reindex waits for ever.
    import asyncio

    import bot.index_worker as worker
    from retrieval.index import BM25Params

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nfor i in range(4000):\n    sys.stderr.write(f'warning {i}: ' + 'x' * 80 + chr(10))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seed = sorted((ROOT / "data" / "corpus").iterdir())[0]
    (corpus / seed.name).write_bytes(seed.read_bytes())
    index, report = await asyncio.wait_for(
        worker.build_in_subprocess(corpus, BM25Params(), cache_dir=tmp_path / "cache", previous=None),
        timeout=60,
    )
    assert len(index.papers) > 0 and report.extra["worker"] == "subprocess"
