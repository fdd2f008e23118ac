"""Child process of the SIGKILL test: saves papers forever, reporting each one once it is committed.

Usage: ``python tests/bot/_store_child.py DB_PATH START``. Prints ``ready`` once the store is open,
then ``<user_id> <paper_id>`` per save, only after ``save_paper`` returned (the commit is done).
The parent kills it with SIGKILL at an arbitrary moment and checks every reported save survived.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

# Run as a script: make the project root importable without relying on the caller's environment.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.store import Store  # noqa: E402
from retrieval.models import Paper  # noqa: E402


async def main(path: str, start: int) -> None:
    store = await Store.open(path, max_saved_per_user=10_000_000)
    print("ready", flush=True)
    i = start
    while True:
        paper_id = f"k{i:07d}"
        user_id = 1000 + i % 7
        paper = Paper(paper_id, f"Title {i}", ("Ada Lovelace",), False, "Area", "Abstract text. " * 30)
        await store.save_paper(user_id, paper, list_name=f"list {i % 3}", note=f"note {i}")
        print(user_id, paper_id, flush=True)
        i += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
