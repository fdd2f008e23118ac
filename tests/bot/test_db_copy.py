"""``paperbot db copy``: every list, note, snapshot and timestamp moves; counts are printed; a second
run writes nothing new; bad targets are one line and exit 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot import cli, export
from bot.store import Store
from retrieval.models import Paper

USERS = (111_111_111_111_111_111, 222_222_222_222_222_222, 3)


def paper(i: int, **changes: object) -> Paper:
    fields: dict[str, object] = {
        "id": f"m{i:04d}",
        "title": f"Paper {i}",
        "authors": ("Ada Lovelace", "Émilie du Châtelet"),
        "et_al": i % 2 == 0,
        "area": "Theory",
        "abstract": f"Abstract {i} with $x^2$.",
        "url": f"https://example.org/{i}" if i % 3 else None,
    }
    fields.update(changes)
    return Paper(**fields)  # type: ignore[arg-type]


async def fill(path: Path) -> None:
    async with await Store.open(path) as store:
        for n in range(30):
            uid = USERS[n % 3]
            await store.save_paper(uid, paper(n), ["reading", "Theory 2", "日本語"][n % 3], note=f"note {n}")
        await store.save_paper(USERS[0], paper(1), "Theory 2")  # one paper in two lists
        await store.create_list(USERS[1], "empty")
        await store.reconcile([paper(n) for n in range(25)])  # five papers leave the corpus
        await export.import_file(store, USERS[2], json.dumps([{"id": "only-imported", "title": "Mine"}]))


async def everything(target) -> tuple:
    """What users see, per user (lists with created_at, items with notes and saved_at), and the
    snapshots with their first/last-seen times: all of it must survive a copy."""
    async with await Store.open(target) as store:
        seen = []
        for uid in USERS:
            items, lists = await store.export_items(uid)
            seen.append((uid, lists, items))
        dump = await store.dump()
        return seen, sorted(dump["papers"]), sorted(dump["imported"])


@pytest.mark.parametrize("to", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_copy_moves_everything_and_is_safe_to_run_twice(tmp_path, capsys, request, to) -> None:
    source = tmp_path / "paperbot.db"
    asyncio.run(fill(source))
    target = str(tmp_path / "copy.db") if to == "sqlite" else request.getfixturevalue("postgres_url")

    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0
    out = capsys.readouterr().out
    assert "lists" in out and "saved items" in out and "paper snapshots" in out
    assert "      32 in the source,       32 written" in out  # 30 saves, one paper in two lists, one import
    assert asyncio.run(everything(target)) == asyncio.run(everything(source))

    assert cli.main(["db", "copy", "--from", str(source), "--to", target]) == 0  # again: nothing new
    out = capsys.readouterr().out
    assert "      32 in the source,        0 written" in out
    assert asyncio.run(everything(target)) == asyncio.run(everything(source))
    if to == "postgres":
        secret = target.split(":")[2].split("@")[0]
        assert secret not in out


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
