"""``paperbot db copy``: every list, note, snapshot, watch, watch pause and server reading-list entry
moves with its timestamps; counts are printed for every table; a second run writes nothing new; bad
targets, and a target that numbers other watches as the source's, are one line and exit 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot import cli, export
from bot.store import open_store
from bot.store import sql as store_sql
from tests.bot.store.test_copy import comparable, paper

USERS = (111_111_111_111_111_111, 222_222_222_222_222_222, 3)
GUILD = 1_300_000_000_000_000_001


async def fill(path: Path) -> None:
    async with await open_store(path) as store:
        for n in range(30):
            uid = USERS[n % 3]
            await store.save_paper(uid, paper(n), ["reading", "Theory 2", "日本語"][n % 3], note=f"note {n}")
        await store.save_paper(USERS[0], paper(1), "Theory 2")  # one paper in two lists
        await store.create_list(USERS[1], "empty")
        await store.reconcile([paper(n) for n in range(25)])  # five papers leave the corpus
        await export.import_file(store, USERS[2], json.dumps([{"id": "only-imported", "title": "Mine"}]))
        gap = await store.add_watch(USERS[0], "sparse autoencoders", "Theory")
        await store.add_watch(USERS[1], "diffusion", author="Lovelace")
        await store.add_watch(USERS[0], '"reward model" -survey')
        await store.remove_watch(USERS[0], gap.id)  # watch numbers 2 and 3 stay 2 and 3
        await store.pause_watches(USERS[1])
        await store.club_add(GUILD, paper(2), USERS[0], "week 1")
        await store.club_add(GUILD, paper(27), USERS[2])  # a paper that left the corpus


async def everything(target) -> tuple:
    """What users see, per user (lists with created_at, items with notes and saved_at; watches with
    their numbers), the server's reading list, and the full dump (snapshots with their first/last-seen
    times, imported records, watch pauses...): all of it must survive a copy."""
    async with await open_store(target) as store:
        seen = []
        for uid in USERS:
            items, lists = await store.export_items(uid)
            seen.append((uid, lists, items, await store.list_watches(uid)))
        return seen, await store.club_list(GUILD), await store.untold_pauses(), comparable(await store.dump())


@pytest.mark.parametrize("to", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_copy_moves_everything_and_is_safe_to_run_twice(tmp_path, capsys, request, to) -> None:
    source = tmp_path / "paperbot.db"
    asyncio.run(fill(source))
    target = str(tmp_path / "copy.db") if to == "sqlite" else request.getfixturevalue("postgres_url")

    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()[1:]
    assert len(lines) == len(store_sql.TABLES)  # one line per table copied, each named
    for table in store_sql.TABLES.values():
        assert [line.startswith(f"  {table.rows} ") for line in lines].count(True) == 1, table.rows
    for rows, n in (("saved items", 32), ("watches", 2), ("watch pauses", 1), ("club entries", 2)):
        line = next(line for line in lines if line.startswith(f"  {rows} "))
        assert line.endswith(f"{n:>8,} in the source, {n:>8,} written"), line
    assert "      32 in the source,       32 written" in out  # 30 saves, one paper in two lists, one import
    assert asyncio.run(everything(target)) == asyncio.run(everything(source))

    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0  # again: nothing new
    out = capsys.readouterr().out
    assert "      32 in the source,        0 written" in out
    assert out.count(" 0 written (the rest were there)") == len(store_sql.TABLES)
    assert asyncio.run(everything(target)) == asyncio.run(everything(source))
    if to == "postgres":
        secret = target.split(":")[2].split("@")[0]
        assert secret not in out


@pytest.mark.postgres
def test_sqlite_to_postgresql_and_back_comes_back_equal(tmp_path, capsys, postgres_url) -> None:
    """The move "Scaling out" tells a deployment to make, and back: every user's lists, watches (with
    their numbers) and pause, and the server's reading list come back, full dump equal."""
    source, back = tmp_path / "paperbot.db", tmp_path / "back.db"
    asyncio.run(fill(source))
    assert cli.main(["db", "copy", "--from", str(source), "--to", postgres_url]) == 0
    assert cli.main(["db", "copy", "--from", postgres_url, "--to", str(back)]) == 0
    assert asyncio.run(everything(back)) == asyncio.run(everything(source))
    assert asyncio.run(everything(postgres_url)) == asyncio.run(everything(source))
    assert "(the rest were there)" not in capsys.readouterr().out  # everything was new, both ways


@pytest.mark.parametrize("to", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_target_giving_other_watches_the_same_numbers_is_refused_in_one_line(
    tmp_path, capsys, request, to
) -> None:
    """Users remove a watch by its number, so a copy keeps the numbers; a target that already has
    other watches under them is refused: one line, exit 2, nothing written (not even the lists)."""
    source = tmp_path / "paperbot.db"
    asyncio.run(fill(source))  # watches 2 and 3
    target = str(tmp_path / "copy.db") if to == "sqlite" else request.getfixturevalue("postgres_url")

    async def others() -> dict:
        async with await open_store(target) as store:
            await store.add_watch(USERS[2], "somebody else's")  # 1
            await store.add_watch(USERS[2], "another")  # 2: the source's 2 is another user's
            return await store.dump()

    async def dump() -> dict:
        async with await open_store(target) as store:
            return await store.dump()

    before = asyncio.run(others())
    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"paperbot: cannot copy {source} -> ")
    assert ", nothing was written: the target already has another watch under the number 2, " in captured.err
    if to == "postgres":
        assert target.split(":")[2].split("@")[0] not in captured.err
    assert asyncio.run(dump()) == before


def test_copy_errors_are_one_line(tmp_path, capsys) -> None:
    assert (
        cli.main(["db", "copy", "--from", str(tmp_path / "missing.db"), "--to", str(tmp_path / "x.db")]) == 2
    )
    assert "no such file" in capsys.readouterr().err
    source = tmp_path / "paperbot.db"
    asyncio.run(fill(source))
    url = "postgresql://paperbot:S3cret-pw@127.0.0.1:1/paperbot"
    assert cli.main(["db", "copy", "--from", str(source), "--to", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "S3cret" not in err and "postgresql://paperbot:***@127.0.0.1:1" in err


def test_config_names_the_database_of_the_side_left_out(tmp_path, capsys, monkeypatch) -> None:
    """Issue 30 item 9: the README says every subcommand takes --config; ``db copy`` said
    "unrecognized arguments". With --config, the configured database is the side not given."""
    for name in ("DATABASE_PATH", "DATABASE_URL", "PAPERBOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    configured = tmp_path / "configured.db"
    config = tmp_path / "paperbot.toml"
    config.write_text(f'[paths]\ndatabase = "{configured.as_posix()}"\n', encoding="utf-8")
    source = tmp_path / "paperbot.db"
    asyncio.run(fill(source))
    assert cli.main(["db", "copy", "--config", str(config), "--from", str(source)]) == 0
    assert f"-> {configured}" in capsys.readouterr().out
    assert asyncio.run(everything(configured)) == asyncio.run(everything(source))
    backup = tmp_path / "backup.db"
    assert cli.main(["db", "copy", "--config", str(config), "--to", str(backup)]) == 0
    assert asyncio.run(everything(backup)) == asyncio.run(everything(source))
    # Which side is the configured one must be clear: exactly one of --from and --to with --config.
    assert cli.main(["db", "copy", "--config", str(config)]) == 2
    assert "give --from or --to (one of them)" in capsys.readouterr().err
    assert cli.main(["db", "copy", "--config", str(config), "--from", str(source), "--to", str(backup)]) == 2
    assert "not both" in capsys.readouterr().err
    assert cli.main(["db", "copy", "--config", str(config), "--from", str(configured)]) == 2
    assert "the same database" in capsys.readouterr().err
    assert cli.main(["db", "copy", "--to", str(backup)]) == 2  # without --config both are needed
    assert "--from" in capsys.readouterr().err
