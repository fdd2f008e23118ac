"""Memory of a second bot process on one host: the index's pages are shared, not copied.

Usage: ``python bench/processes.py [--docs 100000] [--queries 300] [--work /tmp/paperbot-bench-processes]``

Builds (once, cached in ``--work``) the index of a synthetic corpus, then measures two deployments of
two bot processes, one after the other, on one SQLite file and one cache folder:

1. ``PROCESSES=2``: the product's supervisor (bot/supervisor.py) imports the code, maps the index
   and forks the two processes, which share its heap copy-on-write;
2. two independent ``paperbot run`` processes, started one after the other (for comparison).

Each bot process is the bot ``paperbot run`` makes with its setup hook (store, the memory-mapped
index, the shared-index follower, the cogs; no Discord connection); it runs the same queries with
snippets (so the pages a serving bot touches are resident; it prints the ranking kernel that served
them) and waits. The second process opens nothing until the first is warm and measured. The bench
reads ``/proc/PID/smaps_rollup`` of every process: RSS, PSS (shared pages split between the
processes that map them) and USS (private pages), and prints what the second process adds to the
host's memory (the sum of the deployment's PSS with it − without it) against the first one's RSS
(target: at most 25 %). It also times how long the second process takes to serve.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SHARE = 0.25


def smaps(pid: int) -> dict[str, int]:
    """``/proc/PID/smaps_rollup`` in kB (Rss, Pss, Private_*, Shared_*, ...)."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def memory(pid: int) -> dict[str, float]:
    """RSS, PSS and USS (private) of a process, MB."""
    m = smaps(pid)
    return {
        "rss": m["Rss"] / 1024,
        "pss": m["Pss"] / 1024,
        "uss": (m.get("Private_Clean", 0) + m.get("Private_Dirty", 0)) / 1024,
        "shared": (m.get("Shared_Clean", 0) + m.get("Shared_Dirty", 0)) / 1024,
        "anon": m.get("Anonymous", 0) / 1024,
    }


async def _warm_bot(settings: Any, queries_file: str, wait: Callable[[], Awaitable[Any]]) -> None:
    """The bot ``paperbot run`` makes, without the gateway connection: the PaperBot with its setup hook
    (the services, the cogs, the translator). Runs the queries, prints one JSON line when warm, then
    waits (``await wait()``) and closes."""
    from bot.app import PaperBot
    from retrieval.postings import compiled_kernel

    started = time.perf_counter()
    bot = PaperBot(settings, sync_commands=False)
    await bot._async_setup_hook()  # what ``async with bot`` does before the login
    await bot.setup_hook()  # what the login runs: open_services, cogs, translator
    opened = time.perf_counter() - started
    engine = bot.services.context.engine
    queries = json.loads(Path(queries_file).read_text())
    t0 = time.perf_counter()
    for q in queries:
        engine.search(q, k=5)
    served = time.perf_counter() - t0
    print(json.dumps({
        "pid": os.getpid(), "open_seconds": opened, "query_ms": served * 1000 / max(1, len(queries)),
        "generation": engine.share.generation if engine.share else None, "papers": len(engine),
        "kernel": compiled_kernel(), "cogs": len(bot.cogs), "inherited": engine.inherited,
    }), flush=True)  # fmt: skip
    await wait()
    await bot.close()


def _settings(corpus: str, cache: str, database: str, **more: Any) -> Any:
    from bot.settings import Settings

    paths = {"corpus_path": Path(corpus), "index_cache_dir": Path(cache), "database_path": Path(database)}
    return dataclasses.replace(Settings(), **paths, **more)


def child(corpus: str, cache: str, database: str, queries_file: str) -> None:
    """One independent bot process (``paperbot run``); waits for stdin to close."""
    import asyncio

    async def wait() -> None:
        await asyncio.to_thread(sys.stdin.read)

    asyncio.run(_warm_bot(_settings(corpus, cache, database), queries_file, wait))


def supervised(corpus: str, cache: str, database: str, queries_file: str) -> None:
    """``paperbot run`` with ``PROCESSES=2``: the product's supervisor maps the index and forks the two
    bot processes (the bot above each). The second waits for the gate file (``QUERIES.gate``) before it
    opens anything, so the bench reads the deployment with one warm bot process first. SIGTERM stops
    them all."""
    import asyncio
    import signal

    from bot.logs import setup_logging
    from bot.supervisor import Supervisor

    def target(settings: Any) -> int:
        async def run() -> None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, stop.set)
            if settings.shard_ids != (0,):
                gate = Path(queries_file + ".gate")
                while not gate.exists() and not stop.is_set():
                    await asyncio.sleep(0.05)
            await _warm_bot(settings, queries_file, stop.wait)

        asyncio.run(run())
        return 0

    setup_logging("WARNING")
    raise SystemExit(Supervisor(_settings(corpus, cache, database, processes=2), target=target).run())


def _command(mode: str, *paths: Path) -> list[str]:
    return [sys.executable, __file__, mode, *map(str, paths)]


def _line(proc: subprocess.Popen[str]) -> dict:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        raise SystemExit(f"a bot process failed to start (exit {proc.returncode})")
    return json.loads(line)


def _opened(n: int, info: dict) -> str:
    where = "the supervisor's mapped index" if info["inherited"] else "its own mapping of the index"
    return (f"process {n}: open {info['open_seconds']:.2f} s, {info['query_ms']:.2f} ms/query "
            f"({info['kernel']} kernel, {info['cogs']} cogs), generation {info['generation']}, "
            f"{where}")  # fmt: skip


TABLE = (
    "| MB | RSS | PSS | USS (private) | of which anonymous | shared | load average |\n"
    "|---|---|---|---|---|---|---|"
)


def _table(rows: Sequence[tuple[str, dict[str, float], float]]) -> None:
    print("\n" + TABLE)
    for name, m, load in rows:
        print(f"| {name} | {m['rss']:.0f} | {m['pss']:.0f} | {m['uss']:.0f} | {m['anon']:.0f} | "
              f"{m['shared']:.0f} | {load:.2f} |")  # fmt: skip


def _clean(database: Path) -> None:
    for leftover in database.parent.glob(database.name + "*"):
        leftover.unlink()


def independent(folder: Path, cache: Path, database: Path, queries_file: Path) -> dict[str, float]:
    """Two ``paperbot run`` processes started one after the other."""
    _clean(database)

    def start() -> tuple[subprocess.Popen[str], dict]:
        proc = subprocess.Popen(
            _command("--child", folder, cache, database, queries_file),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        return proc, _line(proc)

    first, info1 = start()
    print(_opened(1, info1), flush=True)
    time.sleep(1)
    alone, load_alone = memory(first.pid), os.getloadavg()[0]
    second, info2 = start()
    print(_opened(2, info2), flush=True)
    time.sleep(1)
    after1, after2, load_after = memory(first.pid), memory(second.pid), os.getloadavg()[0]
    for proc in (first, second):
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    _table((("process 1 alone", alone, load_alone), ("process 1 with 2", after1, load_after),
            ("process 2", after2, load_after)))  # fmt: skip
    added = after1["pss"] + after2["pss"] - alone["pss"]
    return {"added": added, "rss": alone["rss"], "uss2": after2["uss"]}


def prefork(folder: Path, cache: Path, database: Path, queries_file: Path) -> dict[str, float]:
    """``PROCESSES=2``: the supervisor and the two processes it forks."""
    import signal

    _clean(database)
    gate = Path(f"{queries_file}.gate")
    gate.unlink(missing_ok=True)
    command = _command("--supervised", folder, cache, database, queries_file)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        info1 = _line(proc)
        print(_opened(1, info1), flush=True)
        time.sleep(1)
        first = info1["pid"]
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        (second,) = [int(pid) for pid in children if int(pid) != first]
        sup_alone, alone, idle = memory(proc.pid), memory(first), memory(second)
        load_alone = os.getloadavg()[0]
        gate.write_text("go")
        info2 = _line(proc)
        print(_opened(2, info2), flush=True)
        time.sleep(1)
        sup_after, after1, after2 = memory(proc.pid), memory(first), memory(second)
        load_after = os.getloadavg()[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        gate.unlink(missing_ok=True)
    print(f"supervisor exit code {proc.returncode} after SIGTERM")
    _table((
        ("supervisor, process 2 not started", sup_alone, load_alone), ("process 1 alone", alone, load_alone),
        ("process 2 forked, idle at its gate", idle, load_alone),
        ("supervisor, 2 processes", sup_after, load_after), ("process 1 with 2", after1, load_after),
        ("process 2", after2, load_after),
    ))  # fmt: skip
    # The host's memory is the sum of the PSS of the deployment's processes. Before its gate the
    # second process existed, forked and idle: what it held privately then is not part of "without it".
    before = sup_alone["pss"] + alone["pss"] + idle["pss"] - idle["uss"]
    after = sup_after["pss"] + after1["pss"] + after2["pss"]
    return {"added": after - before, "rss": alone["rss"], "uss2": after2["uss"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", type=Path, default=Path("/tmp/paperbot-bench-processes"))
    parser.add_argument("--child", nargs=4, metavar=("CORPUS", "CACHE", "DB", "QUERIES"))
    parser.add_argument("--supervised", nargs=4, metavar=("CORPUS", "CACHE", "DB", "QUERIES"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.supervised:
        supervised(*args.supervised)
        return
    from bench._synth import Generator, write_corpus

    work: Path = args.work
    folder, cache = work / f"corpus-{args.docs}", work / f"cache-{args.docs}"
    gen = Generator(args.docs, seed=7)
    if not (folder / ".complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        write_corpus(gen.papers(), folder)
        (folder / ".complete").write_text("ok")
        print(f"generated {args.docs:,} abstracts in {time.perf_counter() - t0:.1f} s", flush=True)
    queries_file = work / f"queries-{args.docs}.json"
    queries_file.write_text(json.dumps(gen.queries(args.queries, seed=3)))
    database = work / "paperbot.db"

    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    # Build (or find) the cache file in a process of its own: the first bot process must open the
    # file like every later one, not carry a build's leftover heap in its RSS.
    t0 = time.perf_counter()
    build = (
        "import sys; from pathlib import Path; from bot.settings import Settings; "
        "from retrieval.index import open_index; "
        "_, r = open_index(Path(sys.argv[1]), Settings().bm25, cache_dir=Path(sys.argv[2])); "
        "print('cache' if r.from_cache else 'built')"
    )
    command = [sys.executable, "-c", build, str(folder), str(cache)]
    how = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"index {how} in {time.perf_counter() - t0:.1f} s", flush=True)
    file_mb = sum(f.stat().st_size for f in cache.glob("*.pbindex")) / 2**20
    print(f"index file {file_mb:.0f} MB\n\n## PROCESSES=2: one supervisor forks both processes", flush=True)
    forked = prefork(folder, cache, database, queries_file)
    print("\n## independent processes: two `paperbot run`", flush=True)
    apart = independent(folder, cache, database, queries_file)
    print(f"\nwhat the second bot process adds to the host (sum of PSS with it − without it), against the "
          f"first one's RSS; target <= {TARGET_SHARE:.0%}:")  # fmt: skip
    for name, r in (("PROCESSES=2 (supervised)", forked), ("independent processes", apart)):
        share = r["added"] / r["rss"]
        verdict = "met" if share <= TARGET_SHARE else "NOT met"
        print(f"  {name:<25} {r['added']:4.0f} MB of {r['rss']:.0f} MB = {share:4.0%}; its private memory "
              f"{r['uss2']:.0f} MB ({r['uss2'] / r['rss']:.0%}): {verdict}")  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
