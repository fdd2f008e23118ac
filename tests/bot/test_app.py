"""PaperBot start-up, shutdown, sync payload, admin check and the test seams (the canaries for the
private discord.py names the fake Discord relies on are in tests/bot/test_discord_canaries.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time

import discord
import pytest
from discord import app_commands

from bot.app import PaperBot, run_bot
from bot.engine import Engine
from bot.store import DatabaseError, open_store
from retrieval.models import Paper
from tests.bot import openapi_check
from tests.support.fake_discord import GUILD_ID, FakeDiscord, NetworkBlocked, loopback_only_trace

FAKE_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gabcde.fake-token-never-logged-0123456789"


# -- start-up -----------------------------------------------------------------------------------


async def test_setup_hook_wires_everything(harness):
    bot = harness.bot
    assert bot.store is not None and bot.engine is not None and len(bot.engine) == 40
    assert {"Search", "Ask"} <= set(bot.cogs)
    assert {"search", "paper", "similar", "ask"} <= {c.name for c in bot.tree.get_commands()}
    assert bot.started_at.tzinfo is not None
    assert bot.tree.translator is not None
    # No DEV_GUILD_ID: nothing is synced on start (global sync is /admin sync's job).
    assert not [r for r in harness.requests if r.method == "PUT"]
    paths = [r.path for r in harness.requests]
    assert paths[:2] == ["/users/@me", "/oauth2/applications/@me"]


async def test_intents_are_not_privileged_and_mentions_are_off(harness):
    intents = harness.bot.intents
    assert intents.guilds and intents.guild_messages and intents.dm_messages
    assert not intents.message_content and not intents.members and not intents.presences
    mentions = harness.bot.allowed_mentions
    assert mentions.to_dict() == {"parse": []}


async def test_dev_guild_sync_on_start_is_guild_only(make_harness):
    h = await make_harness(dev_guild_id=GUILD_ID)
    puts = [r for r in h.requests if r.method == "PUT"]
    assert len(puts) == 1
    assert puts[0].path == f"/applications/{h.fake.application_id}/guilds/{GUILD_ID}/commands"
    assert {c["name"] for c in puts[0].json} >= {"search", "paper", "similar", "ask"}


async def test_sync_payload_is_valid_and_translated(harness):
    [put] = [r for r in await harness.sync(guild=False) if r.method == "PUT"]
    assert put.path == f"/applications/{harness.fake.application_id}/commands"
    assert openapi_check.command_problems(put.json) == []
    assert openapi_check.schema_errors(put) == []

    def walk(node, where):
        assert 1 <= len(node["description"]) <= 100, where
        assert node.get("description_localizations", {}).get("zh-CN"), f"{where} has no zh-CN description"
        for option in node.get("options") or []:
            walk(option, f"{where} {option['name']}")

    for command in put.json:
        walk(command, "/" + command["name"])


async def test_is_admin_owner_and_listed_users(make_harness):
    listed = 1600000000000000001
    h = await make_harness(admin_user_ids=frozenset({listed}))
    bot = h.bot
    assert await bot.is_admin(discord.Object(id=h.fake.owner_id))
    assert await bot.is_admin(discord.Object(id=listed))
    assert not await bot.is_admin(discord.Object(id=int(h.bob["id"])))


async def test_http_trace_refuses_non_loopback_hosts(harness):
    session = harness.bot.http._HTTPClient__session
    with pytest.raises(NetworkBlocked):
        await session.get("https://discord.com/api/v10/gateway")


async def test_close_closes_the_database(settings_factory):
    from tests.support.fake_discord import Harness

    h = await Harness.start(settings_factory())
    store = h.bot.store
    await h.close()
    with pytest.raises(Exception):  # noqa: B017 - any store error: the connection is gone
        await store.saved_ids(1)


# -- run_bot ------------------------------------------------------------------------------------


@contextlib.contextmanager
def fake_in_thread():
    """A FakeDiscord on its own loop in a thread, so run_bot (which owns the main loop) can use it."""
    loop = asyncio.new_event_loop()
    fake = FakeDiscord()
    ready = threading.Event()

    def serve():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(fake.start())
        ready.set()
        loop.run_forever()
        loop.run_until_complete(fake.server.close())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    fake.install()
    try:
        yield fake
    finally:
        fake.uninstall()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def test_run_bot_connects_then_stops_cleanly_on_sigterm(settings_factory, caplog):
    settings = settings_factory(discord_token=FAKE_TOKEN)
    with fake_in_thread() as fake:

        running = threading.Event()

        def stop_when_ready():
            fake.identified.wait(30)
            # Never signal pytest itself once run_bot has returned (its handler would be gone).
            if running.is_set():
                os.kill(os.getpid(), signal.SIGTERM)

        running.set()
        threading.Thread(target=stop_when_ready, daemon=True).start()
        try:
            with caplog.at_level(logging.DEBUG):
                code = run_bot(settings, http_trace=loopback_only_trace())
        finally:
            running.clear()
    assert fake.identified.is_set(), "the bot never identified on the fake gateway"
    assert code == 0
    assert "database closed" in caplog.text
    for record in caplog.records:
        assert FAKE_TOKEN not in record.getMessage()
        assert FAKE_TOKEN not in repr(record.args)
    assert FAKE_TOKEN not in caplog.text


def run_until_identified(settings, fake, shards: int) -> int:
    """run_bot until ``shards`` IDENTIFYs reached the fake gateway, then SIGTERM; the exit code."""
    running = threading.Event()

    def stop_when_ready():
        deadline = time.monotonic() + 60
        while len(fake.identified_shards) < shards and time.monotonic() < deadline:
            time.sleep(0.05)
        if running.is_set():
            os.kill(os.getpid(), signal.SIGTERM)

    running.set()
    threading.Thread(target=stop_when_ready, daemon=True).start()
    try:
        return run_bot(settings, http_trace=loopback_only_trace())
    finally:
        running.clear()


def test_unset_shards_let_discord_decide(settings_factory):
    """No SHARD_COUNT: discord.py asks GET /gateway/bot (the fake says 1) and opens that one shard."""
    with fake_in_thread() as fake:
        code = run_until_identified(settings_factory(discord_token=FAKE_TOKEN), fake, 1)
    assert code == 0
    assert fake.identified_shards == [(0, 1)]
    assert any(r.path == "/gateway/bot" for r in fake.requests)


def test_shard_settings_pick_this_process_shards(settings_factory):
    """SHARD_COUNT=4, SHARD_IDS=2-3: this process identifies as shards 2 and 3 of 4, and no other."""
    settings = settings_factory(discord_token=FAKE_TOKEN, shard_count=4, shard_ids=(2, 3))
    with fake_in_thread() as fake:
        code = run_until_identified(settings, fake, 2)
    assert code == 0
    assert sorted(fake.identified_shards) == [(2, 4), (3, 4)]


def test_run_bot_with_a_corrupt_database_exits_2_in_one_line(settings_factory, tmp_path, caplog):
    db = tmp_path / "broken.db"
    db.write_bytes(b"this is not a sqlite file" * 100)
    settings = settings_factory(discord_token=FAKE_TOKEN, database_path=db)
    with fake_in_thread(), caplog.at_level(logging.INFO):
        code = run_bot(settings, http_trace=loopback_only_trace())
    assert code == 2
    [record] = [r for r in caplog.records if r.levelno >= logging.CRITICAL]
    assert "cannot open the database" in record.getMessage()
    assert "\n" not in record.getMessage() and record.exc_info is None
    assert db.read_bytes().startswith(b"this is not a sqlite file")  # left untouched


@contextlib.contextmanager
def immutable(path):
    """``chattr +i`` on ``path`` for the block (even root cannot write it); skips where unsupported."""
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a file system that supports it)")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)


@contextlib.contextmanager
def tmpfs(folder, options):
    """A small tmpfs mounted at ``folder`` for the block; skips where mounting is not permitted."""
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def start_up_line(settings, caplog) -> str:
    """Run the bot against the fake Discord; it must exit 2 with one CRITICAL line: return that line."""
    with fake_in_thread(), caplog.at_level(logging.INFO):
        code = run_bot(settings, http_trace=loopback_only_trace())
    assert code == 2
    [record] = [r for r in caplog.records if r.levelno >= logging.CRITICAL]
    assert "\n" not in record.getMessage() and record.exc_info is None
    return record.getMessage()


def make_database(path) -> None:
    async def build() -> None:
        async with await open_store(path) as store:
            await store.save_paper(1, Paper("seed1", "Seed", ("A B",), False, "Area", "Text."))

    asyncio.run(build())


def test_run_bot_with_an_immutable_database_exits_2_in_one_line(settings_factory, tmp_path, caplog):
    db = tmp_path / "saved.db"
    make_database(db)
    with immutable(db):
        line = start_up_line(settings_factory(discord_token=FAKE_TOKEN, database_path=db), caplog)
    assert f"cannot open the database {db}: the file is read-only" in line


def fill(folder) -> None:
    """Write a file into ``folder`` until its file system is full."""
    with contextlib.suppress(OSError), (folder / "filler").open("wb") as fh:
        while True:
            fh.write(b"x" * 4096)
            fh.flush()


def test_a_disk_that_fills_before_the_reconcile_exits_2(settings_factory, tmp_path, caplog, monkeypatch):
    """The open succeeds, the first real write (the reconcile in setup_hook) fails: one line, exit 2."""
    with tmpfs(tmp_path / "disk", "size=1m") as folder:
        db = folder / "saved.db"
        make_database(db)  # its paper is not in the bundled corpus: the reconcile must write
        real_load = Engine.load

        async def load_then_fill(*args, **kwargs):
            engine = await real_load(*args, **kwargs)
            fill(folder)
            return engine

        monkeypatch.setattr(Engine, "load", load_then_fill)
        settings = settings_factory(discord_token=FAKE_TOKEN, database_path=db)
        line = start_up_line(settings, caplog)
    assert f"cannot write the database {db}: the disk is full" in line


def test_run_bot_on_a_full_disk_exits_2_in_one_line(settings_factory, tmp_path, caplog):
    with tmpfs(tmp_path / "full", "size=256k") as folder:
        fill(folder)
        settings = settings_factory(discord_token=FAKE_TOKEN, database_path=folder / "s.db")
        line = start_up_line(settings, caplog)
    assert "cannot open the database" in line and "the disk is full" in line


def test_read_only_mount_without_a_database_is_one_line_and_no_stray_thread_error(
    settings_factory, tmp_path, caplog, monkeypatch
):
    """No file yet on a read-only mount: one line, and no aiosqlite worker thread left behind to fail
    with "Event loop is closed" after the loop is gone (it did, about every other start)."""
    stray: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: stray.append(args.exc_value))
    with tmpfs(tmp_path / "ro", "ro,size=64k") as folder:
        for _ in range(15):
            with pytest.raises(DatabaseError, match="cannot be created or opened"):
                asyncio.run(open_store(folder / "s.db"))
        settings = settings_factory(discord_token=FAKE_TOKEN, database_path=folder / "s.db")
        line = start_up_line(settings, caplog)
    time.sleep(0.2)  # a leftover worker thread would report by now
    assert "cannot open the database" in line and "read-only file system" in line
    assert stray == []


def test_run_bot_with_a_missing_corpus_exits_2(settings_factory, tmp_path, caplog):
    settings = settings_factory(discord_token=FAKE_TOKEN, corpus_path=tmp_path / "nowhere")
    with fake_in_thread() as fake, caplog.at_level(logging.INFO):
        code = run_bot(settings, http_trace=loopback_only_trace())
    assert code == 2
    [record] = [r for r in caplog.records if r.levelno >= logging.CRITICAL]
    assert "cannot load the corpus" in record.getMessage() and record.exc_info is None
    assert fake.requests == []  # refused before logging in


def test_run_bot_when_discord_is_unreachable_exits_1_in_one_line(settings_factory, caplog, monkeypatch):
    # Port 9 on loopback has no listener: the login's first request is refused, as with no network.
    monkeypatch.setattr(discord.http.Route, "BASE", "http://127.0.0.1:9/api/v10")
    settings = settings_factory(discord_token=FAKE_TOKEN)
    with caplog.at_level(logging.INFO):
        code = run_bot(settings, http_trace=loopback_only_trace())
    assert code == 1
    [record] = [r for r in caplog.records if r.levelno >= logging.CRITICAL]
    assert "cannot reach Discord" in record.getMessage() and record.exc_info is None
    assert FAKE_TOKEN not in caplog.text


def test_run_bot_without_token_exits_2(settings_factory, caplog):
    with caplog.at_level(logging.INFO):
        assert run_bot(settings_factory(discord_token=None)) == 2
    assert "DISCORD_TOKEN" in caplog.text


def test_run_bot_with_a_rejected_token_exits_2(settings_factory, caplog):
    settings = settings_factory(discord_token=FAKE_TOKEN)
    with fake_in_thread() as fake, caplog.at_level(logging.INFO):
        fake.reject_token = True
        code = run_bot(settings, http_trace=loopback_only_trace())
    assert code == 2
    assert "rejected DISCORD_TOKEN" in caplog.text
    assert FAKE_TOKEN not in caplog.text


def test_paperbot_is_a_sharded_commands_bot():
    assert issubclass(PaperBot, discord.ext.commands.AutoShardedBot)


async def test_harness_modal_round_trip(harness):
    """submit_modal feeds the opened modal back through discord.py (no modal in the bot yet)."""

    class NoteModal(discord.ui.Modal, title="Note"):
        note = discord.ui.TextInput(label="Your note", max_length=100, custom_id="note")

        async def on_submit(self, interaction: discord.Interaction) -> None:
            await interaction.response.send_message(f"noted: {self.note.value}", ephemeral=True)

    @app_commands.command(name="modaltest", description="Open a test modal")
    async def modaltest(interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(NoteModal())

    harness.bot.tree.add_command(modaltest)
    opened = await harness.run_command("modaltest")
    assert opened.callback_type == 9
    submitted = await harness.submit_modal(opened, {"note": "hello"})
    assert submitted.callback_type == 4 and submitted.content == "noted: hello"
