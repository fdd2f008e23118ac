"""Memory of a second bot process on one host: the index's pages are shared, not copied.

Usage: ``python bench/processes.py [--docs 100000] [--queries 300] [--work /tmp/paperbot-bench-processes]``

Builds (once, cached in ``--work``) the index of a synthetic corpus, then starts bot processes one
after the other. Each makes the bot exactly as ``paperbot run`` does and runs its setup hook (store,
the memory-mapped index, the shared-index follower, the cogs; no Discord connection) on one SQLite
file and one cache folder, runs the same queries with snippets (so the pages a serving bot touches
are resident; it prints the ranking kernel that served them) and waits. The bench reads
``/proc/PID/smaps_rollup`` of each: RSS, PSS (shared pages split between the processes that map
them) and USS (private pages), and prints what the second process adds to the host's memory:
``(PSS₁ + PSS₂ after) − PSS₁ before``, against the first one's RSS (target: at most 25 %).
It also times how long the second process takes to serve the published generation (its start).
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
from pathlib import Path

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


def child(corpus: str, cache: str, database: str, queries_file: str) -> None:
    """One bot process as ``paperbot run`` makes it, without the gateway connection: the PaperBot
    with its setup hook (the services, the cogs, the translator); prints one JSON line when warm,
    then waits for stdin to close."""
    import asyncio

    from bot.app import PaperBot
    from bot.settings import Settings
    from retrieval.postings import compiled_kernel

    async def main() -> None:
        started = time.perf_counter()
        settings = dataclasses.replace(
            Settings(), corpus_path=Path(corpus), index_cache_dir=Path(cache), database_path=Path(database)
        )
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
            "open_seconds": opened, "query_ms": served * 1000 / max(1, len(queries)),
            "generation": engine.share.generation if engine.share else None, "papers": len(engine),
            "kernel": compiled_kernel(), "cogs": len(bot.cogs),
        }), flush=True)  # fmt: skip
        await asyncio.to_thread(sys.stdin.read)
        await bot.close()

    asyncio.run(main())


def start(
    corpus: Path, cache: Path, database: Path, queries_file: Path
) -> tuple[subprocess.Popen[str], dict]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(corpus), str(cache), str(database), str(queries_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        raise SystemExit(f"a bot process failed to start (exit {proc.returncode})")
    return proc, json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", type=Path, default=Path("/tmp/paperbot-bench-processes"))
    parser.add_argument("--child", nargs=4, metavar=("CORPUS", "CACHE", "DB", "QUERIES"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
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
    for leftover in work.glob("paperbot.db*"):
        leftover.unlink()

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
    first, info1 = start(folder, cache, database, queries_file)
    print(f"process 1: open {info1['open_seconds']:.2f} s, {info1['query_ms']:.2f} ms/query "
          f"({info1['kernel']} kernel, {info1['cogs']} cogs), generation {info1['generation']}",
          flush=True)  # fmt: skip
    time.sleep(1)
    alone = memory(first.pid)
    load_alone = os.getloadavg()[0]
    second, info2 = start(folder, cache, database, queries_file)
    time.sleep(1)
    after1, after2 = memory(first.pid), memory(second.pid)
    load_after = os.getloadavg()[0]
    for proc in (first, second):
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)

    added = after1["pss"] + after2["pss"] - alone["pss"]
    share = added / alone["rss"]
    file_mb = sum(f.stat().st_size for f in cache.glob("*.pbindex")) / 2**20
    print(f"\n{info1['papers']:,} papers; index file {file_mb:.0f} MB")
    print(f"process 2: open {info2['open_seconds']:.2f} s (generation {info2['generation']}, no build), "
          f"{info2['query_ms']:.2f} ms/query ({info2['kernel']} kernel)")  # fmt: skip
    print("\n| MB | RSS | PSS | USS (private) | of which anonymous | shared | load average |")
    print("|---|---|---|---|---|---|---|")
    rows = (("process 1 alone", alone, load_alone), ("process 1 with 2", after1, load_after),
            ("process 2", after2, load_after))  # fmt: skip
    for name, m, load in rows:
        print(f"| {name} | {m['rss']:.0f} | {m['pss']:.0f} | {m['uss']:.0f} | {m['anon']:.0f} | "
              f"{m['shared']:.0f} | {load:.2f} |")  # fmt: skip
    verdict = "met" if share <= TARGET_SHARE else "NOT met"
    print(f"\nthe second process adds {added:.0f} MB (sum of PSS after − PSS before) = {share:.0%} of the "
          f"first one's RSS ({alone['rss']:.0f} MB); its private memory is {after2['uss']:.0f} MB "
          f"({after2['uss'] / alone['rss']:.0%}). Target <= {TARGET_SHARE:.0%}: {verdict}")  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
