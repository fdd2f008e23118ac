"""Child process of the SIGKILL test: saves papers forever, reporting each one once it is committed.

Usage: ``python _store_child.py TARGET START [COUNT]`` (TARGET: a SQLite path or a
PostgreSQL URL). Prints ``ready`` once the store is open, then ``<user_id> <paper_id>`` per save, only
after ``save_paper`` returned (the commit is done); with COUNT it stops after that many saves, 50 at a
time. The parent kills it with SIGKILL at an arbitrary moment and checks every reported save survived.

Each line is one ``os.write`` of the whole line, newline included (:func:`say`): ``print`` writes its
arguments and the newline separately when stdout is unbuffered (``PYTHONUNBUFFERED``, ``-u``), so a
SIGKILL could land between them and leave ``1000`` alone in the pipe. A write of under ``PIPE_BUF``
bytes to a pipe is atomic: a line is in the pipe whole or not at all.

``STORE_CHILD_FAKE_EVERY=N`` (for the test that proves the parent's check can fail): every Nth
paper is reported without being saved.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

# Run as a script: make the project root importable without relying on the caller's environment.
sys.path.insert(0, str(next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())))

from bot.store import Store, open_store  # noqa: E402
from retrieval.models import Paper  # noqa: E402

FAKE_EVERY = int(os.environ.get("STORE_CHILD_FAKE_EVERY", "0"))


def say(*fields: object) -> None:
    """One line on stdout in one write (atomic on a pipe), after everything before it."""
    line = (" ".join(map(str, fields)) + "\n").encode()
    if len(line) >= 512:  # PIPE_BUF is at least 512 (POSIX): shorter writes to a pipe are atomic
        raise ValueError(f"line too long for one atomic write: {line!r}")
    if os.write(1, line) != len(line):  # a blocking pipe takes it whole; anything else is a bug here
        raise OSError(f"short write of {line!r}")


async def save(store: Store, user_id: int, paper: Paper, i: int) -> None:
    if FAKE_EVERY and i % FAKE_EVERY == FAKE_EVERY - 1:
        return  # reported but never saved: the parent must notice
    await store.save_paper(user_id, paper, list_name=f"list {i % 3}", note=f"note {i}")


def make(i: int) -> tuple[int, Paper]:
    paper = Paper(f"k{i:07d}", f"Title {i}", ("Ada Lovelace",), False, "Area", "Abstract text. " * 30)
    return 1000 + i % 7, paper


async def main(path: str, start: int, count: int | None) -> None:
    store = await open_store(path, max_saved_per_user=10_000_000)
    say("ready")
    if count is not None:  # 50 concurrent saves at a time, then a clean exit

        async def one(i: int) -> None:
            user_id, paper = make(i)
            await save(store, user_id, paper, i)
            say(user_id, paper.id)

        for batch in range(start, start + count, 50):
            await asyncio.gather(*(one(i) for i in range(batch, min(batch + 50, start + count))))
        await store.close()
        return
    i = start
    while True:
        user_id, paper = make(i)
        await save(store, user_id, paper, i)
        say(user_id, paper.id)
        i += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else None))
