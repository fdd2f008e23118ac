"""Numbered schema migrations, one folder per backend: ``sqlite/0001_base.sql``, ``postgres/0001_base.sql``…

File ``NNNN_name.sql`` takes a database from schema ``NNNN - 1`` to ``NNNN``. Append only: never edit
a file that has shipped; a new table or column is a new file in *each* backend's folder. Statements
are separated by a ``;`` at the end of a line; ``--`` lines are comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered step: ``version`` is the schema it produces."""

    version: int
    name: str
    statements: tuple[str, ...]


def split_statements(text: str) -> tuple[str, ...]:
    """The statements of a migration file (comment lines dropped, split at ``;`` ending a line)."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return tuple(part.strip() for part in re.split(r";[ \t]*(?:\n|$)", body) if part.strip())


@cache
def load(backend: str) -> tuple[Migration, ...]:
    """Every migration of ``backend`` (``"sqlite"`` or ``"postgres"``), in order, numbered 1, 2, 3…"""
    folder = resources.files(__package__).joinpath(backend)
    steps: list[Migration] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        match = _NAME.match(entry.name)
        if match is None:
            continue
        steps.append(Migration(int(match[1]), match[2], split_statements(entry.read_text("utf-8"))))
    numbers = [m.version for m in steps]
    if numbers != list(range(1, len(steps) + 1)):
        raise RuntimeError(f"{backend} migrations are not numbered 1..{len(steps)}: {numbers}")
    return tuple(steps)
