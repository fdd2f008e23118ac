"""Benchmark of bot.store on a real SQLite file in a temporary folder.

Run: ``PYTHONPATH=. python bench/store.py [--saves 2000] [--items 10000]``

Prints saves per second (sequential, and concurrent through one Store from 50 users), then the cost
of reading a list of ``--items`` items: first, middle and last page, list_lists, saved_ids, the three
export formats, and a reconcile of a corpus twice that size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot.export import export_text, import_file
from bot.store import Store
from retrieval.models import Paper

ABSTRACT = (
    "We study $O(n \\log n)$ methods for offline reinforcement learning with \\textit{flow matching}; "
    "experiments on 50% of the benchmarks show gains & robustness. "
) * 6


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


async def timed(label: str, make: Callable[[], Awaitable[Any]], repeat: int = 1) -> Any:
    """Run ``make()`` ``repeat`` times; print the median time in ms; return the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = await make()
        times.append(time.perf_counter() - start)
    print(
        f"  {label:<42} {statistics.median(times) * 1000:9.2f} ms"
        + (f"  (median of {repeat})" if repeat > 1 else "")
    )
    return result


async def bench(folder: Path, saves: int, items: int) -> None:
    path = folder / "bench.db"
    async with await Store.open(path, max_saved_per_user=max(items, saves) + 10) as store:
        print(f"database: {path}")

        start = time.perf_counter()
        for i in range(saves):
            await store.save_paper(1 + i % 50, make_paper(i), note="bench")
        elapsed = time.perf_counter() - start
        print(f"sequential saves:  {saves / elapsed:9.0f} saves/s  ({saves} saves, {elapsed:.2f} s)")

        start = time.perf_counter()
        await asyncio.gather(
            *(store.save_paper(1 + i % 50, make_paper(i), "concurrent") for i in range(saves, 2 * saves))
        )
        elapsed = time.perf_counter() - start
        print(
            f"concurrent saves:  {saves / elapsed:9.0f} saves/s  "
            f"({saves} saves from 50 users, {elapsed:.2f} s)"
        )

        # A big list for one user, filled through import (one transaction) to keep the bench short.
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
                            "saved_at": f"2024-01-01T00:00:00.{i:06d}+00:00",
                        }
                        for i in range(items)
                    ],
                }
            ]
        }
        data = json.dumps(document)
        print(f"list of {items} items:")
        result = await timed(
            f"import_json ({len(data) / 1e6:.1f} MB)", lambda: import_file(store, big_user, data)
        )
        assert result.added == items, result
        last_offset = max(0, items - 10)
        page = await timed(
            "get_list first page", lambda: store.get_list(big_user, "big", offset=0, limit=10), repeat=50
        )
        assert page.total == items
        await timed(
            "get_list middle page",
            lambda: store.get_list(big_user, "big", offset=items // 2, limit=10),
            repeat=50,
        )
        page = await timed(
            "get_list last page",
            lambda: store.get_list(big_user, "big", offset=last_offset, limit=10),
            repeat=50,
        )
        assert len(page.items) == min(10, items)
        await timed("list_lists", lambda: store.list_lists(big_user), repeat=50)
        await timed("saved_ids", lambda: store.saved_ids(big_user), repeat=10)
        for fmt in ("json", "md", "bib"):
            text = await timed(
                f"export {fmt} (all lists)", lambda fmt=fmt: export_text(store, big_user, fmt), repeat=3
            )
            assert text
        corpus = [make_paper(i) for i in range(2 * saves)]
        corpus += [make_paper(i) for i in range(10_000_000, 10_000_000 + 2 * items)]
        snapshots = (await store.stats()).snapshots
        await timed(
            f"reconcile ({len(corpus)} papers, {snapshots} snapshots)", lambda: store.reconcile(corpus)
        )
        await timed("stats", store.stats, repeat=10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--saves", type=int, default=2000, help="saves per save benchmark")
    parser.add_argument("--items", type=int, default=10_000, help="size of the big list")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paperbot-bench-") as folder:
        asyncio.run(bench(Path(folder), args.saves, args.items))


if __name__ == "__main__":
    main()
