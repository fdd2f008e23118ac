"""The PostgreSQL driver on a real server: start-up errors in one line with the password masked,
migrations run once by processes starting together, and a server lost under a running bot (users are
told to try again; the pool reconnects by itself once the server is back)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

import pytest

from bot.settings import PROJECT_ROOT
from bot.store import DatabaseError, DatabaseUnavailableError, open_store
from bot.store.postgres import SCHEMA_VERSION
from retrieval.models import Paper

pytestmark = pytest.mark.postgres


def paper(i: int) -> Paper:
    return Paper(f"g{i:04d}", f"Paper {i}", ("Ada Lovelace",), False, "Area", f"Abstract {i}.")


def with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.mark.parametrize(
    ("make_url", "cause"),
    [
        (lambda url: with_password(url, "wrong-Secret-42"), "refused the password"),
        (lambda url: "postgresql://postgres:wrong-Secret-42@127.0.0.1:1/paperbot", "connection refused"),
        (lambda url: "postgresql://postgres:wrong-Secret-42@127.0.0.1:notaport/paperbot", "not a usable"),
        (lambda url: url.rsplit("/", 1)[0] + "/no_such_db", "no such database"),
    ],
    ids=["wrong password", "server down", "bad URL", "unknown database"],
)
async def test_open_errors_are_one_line_with_the_password_masked(postgres_url, make_url, cause) -> None:
    url = make_url(postgres_url)
    with pytest.raises(DatabaseError) as caught:
        await open_store(url)
    message = str(caught.value)
    assert cause in message and "\n" not in message
    assert "wrong-Secret-42" not in message and "wrong-Secret-42" not in str(caught.value.target)
    secret = urlsplit(postgres_url).password
    assert secret not in message


def test_run_bot_with_the_server_down_exits_2_in_one_line(settings_factory, caplog) -> None:
    from bot.app import run_bot
    from tests.bot.test_app import FAKE_TOKEN, start_up_line

    url = "postgresql://paperbot:Hunter2-secret@127.0.0.1:1/paperbot"
    line = start_up_line(settings_factory(discord_token=FAKE_TOKEN, database_url=url), caplog)
    assert line.startswith(
        "paperbot cannot start: cannot open the database postgresql://paperbot:***@127.0.0.1:1"
    )
    assert "connection refused" in line and "Hunter2" not in caplog.text
    assert run_bot  # (imported to show the path under test)


def test_processes_starting_together_migrate_once(postgres_url) -> None:
    script = (
        "import asyncio, sys\n"
        "from bot.store import open_store\n"
        "async def main():\n"
        "    s = await open_store(sys.argv[1])\n"
        "    await s.close()\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script, postgres_url], env=env, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err

    async def versions() -> list[int]:
        import asyncpg

        conn = await asyncpg.connect(postgres_url)
        try:
            return [r[0] for r in await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")]
        finally:
            await conn.close()

    assert asyncio.run(versions()) == list(range(1, SCHEMA_VERSION + 1))


async def test_newer_schema_is_refused(postgres_url) -> None:
    async with await open_store(postgres_url):
        pass
    import asyncpg

    conn = await asyncpg.connect(postgres_url)
    await conn.execute(
        "INSERT INTO schema_migrations (version, name) VALUES ($1, 'future')", SCHEMA_VERSION + 1
    )
    await conn.close()
    with pytest.raises(DatabaseError, match="newer paperbot"):
        await open_store(postgres_url)


async def test_server_lost_and_back_under_a_running_store(postgres_url, pg_server) -> None:
    if pg_server.cluster is None:
        pytest.skip("needs the throwaway cluster these tests start (an external server is not stopped)")
    async with await open_store(postgres_url) as store:
        await store.save_paper(1, paper(1))
        await asyncio.to_thread(pg_server.cluster.stop)
        try:
            with pytest.raises(
                DatabaseUnavailableError, match="^The database is unavailable, try again in a moment.$"
            ):
                await store.save_paper(1, paper(2))
            with pytest.raises(DatabaseUnavailableError):
                await store.saved_ids(1)
        finally:
            await asyncio.to_thread(pg_server.cluster.start)
        # Back: the pool replaces its dead connections by itself.
        await store.save_paper(1, paper(3))
        assert await store.saved_ids(1) == {"g0001", "g0003"}


async def test_the_bot_tells_users_to_retry_while_the_server_is_down(
    make_harness, postgres_url, pg_server
) -> None:
    """Through discord.py: /save while the server is stopped, then again once it is back."""
    if pg_server.cluster is None:
        pytest.skip("needs the throwaway cluster these tests start (an external server is not stopped)")
    h = await make_harness(database_url=postgres_url)
    pid = next(iter(h.bot.engine.index.papers)).id
    await asyncio.to_thread(pg_server.cluster.stop)
    try:
        ex = await h.run_command("save", {"id": pid}, user=h.alice)
        assert "The database is unavailable, try again in a moment." in ex.content
    finally:
        await asyncio.to_thread(pg_server.cluster.start)
    ex = await h.run_command("save", {"id": pid}, user=h.alice)
    assert "Saved" in ex.content
    assert pid in await h.bot.store.saved_ids(h.alice.id if hasattr(h.alice, "id") else int(h.alice["id"]))


async def test_a_failed_rollback_never_masks_the_error_that_caused_it(postgres_url, monkeypatch) -> None:
    """The server going away mid-statement can leave the connection looking open with its protocol
    stuck, so the rollback raises asyncpg's InternalClientError ("cannot switch to state 12; another
    operation (2) is in progress"); callers must still be told the database is unavailable, and the
    store must go on working on fresh connections."""
    import asyncpg

    from bot.store.postgres import RETRIES

    async with await open_store(postgres_url) as store:
        await store.save_paper(1, paper(1))

        async def stuck_rollback(self) -> None:  # noqa: ANN001
            raise asyncpg.exceptions.InternalClientError(
                "cannot switch to state 12; another operation (2) is in progress"
            )

        monkeypatch.setattr(asyncpg.transaction.Transaction, "rollback", stuck_rollback)
        attempts = 0

        async def lost(tx) -> None:  # noqa: ANN001
            nonlocal attempts
            attempts += 1
            raise asyncpg.exceptions.ConnectionDoesNotExistError(
                "connection was closed in the middle of operation"
            )

        unavailable = "^The database is unavailable, try again in a moment.$"
        with pytest.raises(DatabaseUnavailableError, match=unavailable):
            await store._run(lost, write=True)
        assert attempts == RETRIES + 1  # each attempt got the connection error, not the rollback's
        monkeypatch.undo()
        await store.save_paper(1, paper(2))
        assert await store.saved_ids(1) == {"g0001", "g0002"}


def _stuck() -> Exception:
    import asyncpg

    message = "cannot switch to state 12; another operation (2) is in progress"
    return asyncpg.exceptions.InternalClientError(message)


async def test_a_statement_on_a_connection_the_server_left_stuck_runs_again_on_a_fresh_one(
    postgres_url,
) -> None:
    """After the server went away during one statement, asyncpg can raise InternalClientError from
    the *next* statement on that connection (seen under load when a fast shutdown hit a batch of
    saves): the connection is dropped and the transaction runs again; when it keeps happening the
    caller is told the database is unavailable, never asyncpg's internal message."""
    from bot.store.postgres import RETRIES

    async with await open_store(postgres_url) as store:
        backends = []

        async def once(tx) -> int:  # noqa: ANN001
            backends.append(tx.conn.get_server_pid())
            if len(backends) == 1:
                raise _stuck()
            return await tx.fetchval("SELECT 41 + 1")

        assert await store._run(once, write=True) == 42
        assert len(backends) == 2 and backends[0] != backends[1]
        for _ in range(250):  # the stuck connection is closed, not given back to the pool
            if not await store._run(
                lambda tx: tx.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", backends[0]),
                write=False,
            ):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the stuck connection's backend is still there")
        attempts = 0

        async def always(tx) -> None:  # noqa: ANN001
            nonlocal attempts
            attempts += 1
            raise _stuck()

        unavailable = "^The database is unavailable, try again in a moment.$"
        with pytest.raises(DatabaseUnavailableError, match=unavailable):
            await store._run(always, write=True)
        assert attempts == RETRIES + 1
        await store.save_paper(1, paper(1))  # and the store goes on working
        assert await store.saved_ids(1) == {"g0001"}


async def test_a_save_whose_connection_fails_to_reset_after_the_commit_is_reported_saved(
    postgres_url, monkeypatch
) -> None:
    """The pool resets a connection when it is given back; if that fails after COMMIT, the save is
    durable, so its caller is told it was saved (not "unavailable", not an error that invites a retry
    of something already done)."""
    import asyncpg

    async with await open_store(postgres_url) as store:
        await store.save_paper(1, paper(1))
        real_reset = asyncpg.connection.Connection.reset
        failed = 0

        async def failing_reset(self, *, timeout=None) -> None:  # noqa: ANN001
            nonlocal failed
            if failed == 0:
                failed += 1
                raise _stuck()
            await real_reset(self, timeout=timeout)

        monkeypatch.setattr(asyncpg.connection.Connection, "reset", failing_reset)
        result = await store.save_paper(1, paper(2))
        assert failed == 1
        assert result.created
        monkeypatch.undo()
        assert await store.saved_ids(1) == {"g0001", "g0002"}
        assert await store.save_paper(1, paper(2)) == type(result)(False, result.list_name, False)
