"""Child process of the SIGKILL test: saves papers forever, reporting each one once it is committed.

Usage: ``python _store_child.py TARGET START [COUNT]`` (TARGET: a SQLite path or a
PostgreSQL URL). Prints ``ready`` once the store is open, then ``<user_id> <paper_id>`` per save, only
after ``save_paper`` returned (the commit is done); with COUNT it stops after that many saves, 50 at a
time. The parent kills it with SIGKILL at an arbitrary moment and checks every reported save survived.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

# Run as a script: make the project root importable without relying on the caller's environment.
sys.path.insert(0, str(next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())))

from bot.store import Store  # noqa: E402
from retrieval.models import Paper  # noqa: E402


def make(i: int) -> tuple[int, Paper]:
    paper = Paper(f"k{i:07d}", f"Title {i}", ("Ada Lovelace",), False, "Area", "Abstract text. " * 30)
    return 1000 + i % 7, paper


async def main(path: str, start: int, count: int | None) -> None:
    store = await Store.open(path, max_saved_per_user=10_000_000)
    print("ready", flush=True)
    if count is not None:  # 50 concurrent saves at a time, then a clean exit

        async def one(i: int) -> None:
            user_id, paper = make(i)
            await store.save_paper(user_id, paper, list_name=f"list {i % 3}", note=f"note {i}")
            print(user_id, paper.id, flush=True)

        for batch in range(start, start + count, 50):
            await asyncio.gather(*(one(i) for i in range(batch, min(batch + 50, start + count))))
        await store.close()
        return
    i = start
    while True:
        paper_id = f"k{i:07d}"
        user_id = 1000 + i % 7
        paper = Paper(paper_id, f"Title {i}", ("Ada Lovelace",), False, "Area", "Abstract text. " * 30)
        await store.save_paper(user_id, paper, list_name=f"list {i % 3}", note=f"note {i}")
        print(user_id, paper_id, flush=True)
        i += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else None))
