"""Benchmark of bot.store on real databases: durable saves/s from several processes, paging a big list.

Run: ``python bench/store.py [--backend sqlite|postgres] [--saves 2000] [--items 10000] [--url URL]``

``--backend postgres`` measures PostgreSQL *beside* SQLite in the same run (the machine is noisy:
compare the two columns, not runs). PostgreSQL is ``--url`` (a database the bench may fill and
empty; never point it at production), else ``PAPERBOT_BENCH_POSTGRES_URL``, else a throwaway
cluster started from Debian's binaries (``tests/support/postgres.py``). Every save is durable:
SQLite commits with ``synchronous=FULL`` in WAL mode, PostgreSQL with ``fsync`` and
``synchronous_commit`` on (its defaults).

Printed: saves/s from 1, 2 and 4 processes, each with 50 concurrent users saving (each user's saves
one after another, through ``Store.save_paper``, the call /save and the Save buttons make), with the
mean number of saves per commit (saves of different users arriving together share one transaction:
bot/store/batch.py), then for a list of ``--items`` items: the first, middle and last page, the
user's lists, saved ids, exports and a reconcile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.export import export_text, import_file  # noqa: E402
from bot.store import DatabaseBusyError, open_store  # noqa: E402
from retrieval.models import Paper  # noqa: E402

ABSTRACT = (
    "We study $O(n \\log n)$ methods for offline reinforcement learning with \\textit{flow matching}; "
    "experiments on 50% of the benchmarks show gains & robustness. "
) * 6
USERS = 50
PROCESSES = (1, 2, 4)


def make_paper(i: int) -> Paper:
    return Paper(
        id=f"{i:08x}",
        title=f"A study of benchmark paper number {i}",
        authors=("Ada Lovelace", "Alan Turing", "Grace Hopper"),
        et_al=i % 3 == 0,
        area="Reinforcement Learning · Batch/Offline",
        abstract=ABSTRACT,
        url=f"https://example.org/{i}",
    )


# ------------------------------------------------------------------------------ save throughput


async def worker(target: str, first: int, count: int) -> None:
    """One process: open, say ready, wait for "go", then 50 users save ``count`` papers in all."""
    store = await open_store(target, max_saved_per_user=10_000_000)
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    per_user = count // USERS
    refused = 0

    async def user(u: int) -> None:
        nonlocal refused
        for k in range(per_user):
            i = first + u * per_user + k
            try:
                await store.save_paper(1 + u, make_paper(i), note="bench")
            except DatabaseBusyError:  # waited longer than the busy timeout: counted, not a save
                refused += 1

    start = time.time()
    await asyncio.gather(*(user(u) for u in range(USERS)))
    end = time.time()
    commits, _ = getattr(store, "save_batches", (0, 0))
    await store.close()
    saved = per_user * USERS - refused
    print(f"done {start} {end} {saved} {commits or saved} {refused}", flush=True)


def throughput(target: str, processes: int, saves: int) -> tuple[float, float]:
    """Durable saves/s of ``processes`` processes saving ``saves`` papers each, all at once, and the
    mean saves per commit (group commit, bot/store/batch.py)."""
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", target, str(n * 10_000_000), str(saves), str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(processes)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    spans = []
    for child in children:
        out, _ = child.communicate(timeout=600)
        _, start, end, done, commits, refused = out.split()
        spans.append((float(start), float(end), int(done), int(commits)))
        assert child.returncode == 0
        if int(refused):
            print(f"  ({target}: {processes} processes: {refused} saves refused as busy)", file=sys.stderr)
    total = sum(s[2] for s in spans)
    return total / (max(s[1] for s in spans) - min(s[0] for s in spans)), total / sum(s[3] for s in spans)


# --------------------------------------------------------------------------------- a big list


async def timed(make: Callable[[], Awaitable[Any]], repeat: int = 1) -> tuple[float, Any]:
    """Median ms of ``make()`` over ``repeat`` runs, and the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = await make()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, result


async def big_list(target: str, items: int) -> dict[str, float]:
    """Milliseconds of each read of a user's ``items``-item list (and of filling it)."""
    out: dict[str, float] = {}
    async with await open_store(target, max_saved_per_user=items + 10) as store:
        big_user = 999
        document = {
            "lists": [
                {
                    "name": "big",
                    "items": [
                        {
                            "id": f"big{i:06d}",
                            "title": f"Big list paper {i}",
                            "authors": ["Ada Lovelace", "Alan Turing"],
                            "area": "Theory",
                            "abstract": ABSTRACT,
                            "saved_at": f"2024-01-01T00:00:{i // 1_000_000:02d}.{i % 1_000_000:06d}+00:00",
                        }
                        for i in range(items)
                    ],
                }
            ]
        }
        data = json.dumps(document)
        out[f"import {items} items ({len(data) / 1e6:.1f} MB)"], result = await timed(
            lambda: import_file(store, big_user, data)
        )
        assert result.added == items, result
        ms, page = await timed(lambda: store.get_list(big_user, "big", offset=0, limit=10), repeat=50)
        assert page.total == items
        out["get_list first page (10)"] = ms
        out["get_list middle page"], _ = await timed(
            lambda: store.get_list(big_user, "big", offset=items // 2, limit=10), repeat=50
        )
        out["get_list last page"], page = await timed(
            lambda: store.get_list(big_user, "big", offset=max(0, items - 10), limit=10), repeat=50
        )
        assert len(page.items) == min(10, items)
        out["list_lists"], _ = await timed(lambda: store.list_lists(big_user), repeat=50)
        out["saved_ids"], _ = await timed(lambda: store.saved_ids(big_user), repeat=10)
        for fmt in ("json", "md", "bib"):
            out[f"export {fmt}"], _ = await timed(lambda fmt=fmt: export_text(store, big_user, fmt), repeat=3)
        corpus = [make_paper(i) for i in range(2 * items)]
        snapshots = (await store.stats()).snapshots
        out[f"reconcile ({len(corpus)} papers, {snapshots} snapshots)"], _ = await timed(
            lambda: store.reconcile(corpus)
        )
        out["stats"], _ = await timed(store.stats, repeat=10)
    return out


# ------------------------------------------------------------------------------------- targets


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[Callable[[], str]]:
    """A maker of fresh PostgreSQL databases (dropped at the end)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.postgres import PostgresServer, create_database, drop_database, postgres_server

    made: list[str] = []
    with contextlib.ExitStack() as stack:
        server = PostgresServer(url, None) if url else stack.enter_context(postgres_server())
        if server is None:
            raise SystemExit("bench: no PostgreSQL (give --url, or install Debian's postgresql package)")

        def fresh() -> str:
            name = f"bench_{len(made)}_{os.getpid()}"
            asyncio.run(drop_database(server, name))
            made.append(name)
            return asyncio.run(create_database(server, name))

        try:
            yield fresh
        finally:
            for name in made:
                with contextlib.suppress(Exception):
                    asyncio.run(drop_database(server, name))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--saves", type=int, default=2000, help="saves per process")
    parser.add_argument("--items", type=int, default=10_000, help="size of the big list")
    parser.add_argument("--url", default=os.environ.get("PAPERBOT_BENCH_POSTGRES_URL") or None)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)  # target, first, count, parent pid
    args = parser.parse_args()
    if args.worker:
        # A killed bench must not leave its workers saving: each dies with the bench (on Linux the
        # kernel kills it when its parent dies; PR_SET_PDEATHSIG, as the index build's workers do).
        from retrieval._libc import die_with_parent

        die_with_parent(int(args.worker[3]))
        asyncio.run(worker(args.worker[0], int(args.worker[1]), int(args.worker[2])))
        return

    backends = ["sqlite"] + (["postgres"] if args.backend == "postgres" else [])
    print(
        f"{os.cpu_count()} CPUs; {USERS} concurrent users per process, {args.saves} durable saves per process"
    )
    with tempfile.TemporaryDirectory(prefix="paperbot-bench-") as folder, contextlib.ExitStack() as stack:
        counter = iter(range(1000))
        makers: dict[str, Callable[[], str]] = {
            "sqlite": lambda: str(Path(folder) / f"bench{next(counter)}.db")
        }
        if "postgres" in backends:
            makers["postgres"] = stack.enter_context(postgres(args.url))
        rates = {b: [throughput(makers[b](), n, args.saves) for n in PROCESSES] for b in backends}
        print(f"\n{'durable saves/s (saves per commit)':<44}" + "".join(f"{b:>16}" for b in backends))
        for k, n in enumerate(PROCESSES):
            print(
                f"  {n} process{'es' if n > 1 else '':<2} x {USERS} users{'':<22}"
                + "".join(f"{rates[b][k][0]:>9,.0f} ({rates[b][k][1]:>4.1f})" for b in backends)
            )
        reads = {b: asyncio.run(big_list(makers[b](), args.items)) for b in backends}
        print(f"\n{f'a list of {args.items:,} items (ms)':<44}" + "".join(f"{b:>12}" for b in backends))
        for label in reads["sqlite"]:
            print(f"  {label:<42}" + "".join(f"{reads[b].get(label, float('nan')):>12.2f}" for b in backends))


if __name__ == "__main__":
    main()
