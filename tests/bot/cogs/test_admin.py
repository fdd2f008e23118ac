"""/admin reindex|stats|sync through the real discord.py path: the server-side admin check, the
reindex swap while searches are served, failures that keep the old index, and the reports."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import threading
import time

import discord
import pytest

import bot.engine as engine_module
from bot import render
from bot.cogs.admin import TRANSLATIONS_ZH
from bot.ui import admin as admin_module
from retrieval.models import SkippedBlock
from tests.bot.conftest import CORPUS
from tests.support.fake_discord import APPLICATION_ID, GUILD_ID

EPHEMERAL = 64
ADMINISTRATOR = discord.Permissions(administrator=True).value
SEED_FILES = sorted(CORPUS.glob("*.txt"))


def uid(user: dict) -> int:
    return int(user["id"])


def one_file_corpus(tmp_path, which: int = 0):
    """A corpus folder holding only one of the bundled files."""
    folder = tmp_path / f"corpus-{which}"
    folder.mkdir()
    shutil.copy(SEED_FILES[which], folder / SEED_FILES[which].name)
    return folder


async def reindex(h, path=None, *, user=None):
    options = {"path": str(path)} if path is not None else {}
    return await h.run_command("admin", options, subcommand="reindex", user=user or h.owner)


def guild_command_puts(h, start: int = 0):
    return [
        r
        for r in h.requests[start:]
        if r.method == "PUT" and r.path.startswith(f"/applications/{APPLICATION_ID}/")
    ]


# -- the server-side admin check ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subcommand", "options"),
    [("reindex", {}), ("reindex", {"path": "/tmp"}), ("stats", {}), ("sync", {"scope": "global"})],
)
@pytest.mark.parametrize("guild", [True, False])
async def test_non_admin_is_refused_even_with_administrator_permission(harness, subcommand, options, guild):
    h = harness
    engine = h.bot.engine
    index = engine.index
    start = len(h.requests)
    ex = await h.run_command(
        "admin", options, subcommand=subcommand, user=h.alice, guild=guild, permissions=ADMINISTRATOR
    )
    assert ex.callback_type == 4  # refused at once: no defer, no progress message
    assert ex.ephemeral
    assert ex.content == "Only the bot's administrators can use this command."
    assert ex.embeds == []
    # Only the refusal: (is_owner may GET the application info, which changes nothing.)
    assert [r.path for r in ex.requests if r.method != "GET"] == [ex.callback.path]
    assert engine.index is index and not engine.reindexing
    assert guild_command_puts(h, start) == []


async def test_admin_user_ids_are_admins(make_harness):
    h = await make_harness(admin_user_ids=frozenset({1500000000000000002}))
    ex = await h.run_command("admin", subcommand="stats", user=h.bob)
    assert ex.callback_type == 4 and ex.ephemeral and ex.embeds
    refused = await h.run_command("admin", subcommand="stats", user=h.alice, permissions=ADMINISTRATOR)
    assert "Only the bot's administrators" in refused.content


async def test_admin_group_is_hidden_by_default_permissions_and_translated(harness):
    requests = await harness.sync()
    [put] = [r for r in requests if r.method == "PUT"]
    admin = next(c for c in put.json if c["name"] == "admin")
    assert str(admin["default_member_permissions"]) == str(ADMINISTRATOR)
    assert admin["description_localizations"]["zh-CN"] == TRANSLATIONS_ZH[admin["description"]]
    subs = {o["name"]: o for o in admin["options"]}
    assert set(subs) == {"reindex", "stats", "sync"}
    for sub in subs.values():
        assert sub["description_localizations"]["zh-CN"] == TRANSLATIONS_ZH[sub["description"]]
        for option in sub.get("options", []):
            assert option["description_localizations"]["zh-CN"] == TRANSLATIONS_ZH[option["description"]]


# -- /admin stats -------------------------------------------------------------------------------------


async def test_stats_shows_index_store_and_process(harness):
    h = harness
    pid = h.bot.engine.index.papers[0].id
    await h.run_command("save", {"id": pid})
    ex = await h.run_command("admin", subcommand="stats", user=h.owner)
    assert ex.callback_type == 4 and ex.ephemeral
    fields = {f["name"]: f["value"] for f in ex.embeds[0]["fields"]}
    engine = h.bot.engine
    assert f"{len(engine)} papers · {len(engine.areas)} areas" in fields["Corpus"]
    assert ("built in" in fields["Index"]) or ("cache" in fields["Index"])
    assert "ready <t:" in fields["Index"]
    # One of each: no "1 saved items" (counts and nouns agree everywhere, via retrieval.english.plural).
    assert "1 saved item · 1 user · 1 list\n1 paper snapshot, 0 no longer" in fields["Saved lists"]
    assert f"{len(engine)} papers · {len(engine.areas)} areas · 2 files" in fields["Corpus"]
    assert "MB RSS" in fields["Process"] and "up " in fields["Process"]
    assert f"discord.py {discord.__version__}" in fields["Process"]


# -- /admin sync -------------------------------------------------------------------------------------


async def test_sync_guild_global_and_clear(harness):
    h = harness
    start = len(h.requests)
    ex = await h.run_command("admin", {"scope": "guild"}, subcommand="sync", user=h.owner)
    assert ex.callback_type == 5 and ex.ephemeral
    [put] = guild_command_puts(h, start)
    assert put.path == f"/applications/{APPLICATION_ID}/guilds/{GUILD_ID}/commands"
    assert f"Synced {len(put.json)} commands to this server" in ex.content
    assert {"save", "admin", "search"} <= {c["name"] for c in put.json}

    start = len(h.requests)
    default = await h.run_command("admin", subcommand="sync", user=h.owner)
    assert "to this server" in default.content  # guild is the default scope

    start = len(h.requests)
    ex = await h.run_command("admin", {"scope": "global"}, subcommand="sync", user=h.owner)
    [put] = guild_command_puts(h, start)
    assert put.path == f"/applications/{APPLICATION_ID}/commands"
    assert f"Synced {len(put.json)} commands globally" in ex.content

    start = len(h.requests)
    ex = await h.run_command("admin", {"scope": "clear"}, subcommand="sync", user=h.owner)
    [put] = guild_command_puts(h, start)
    assert put.path == f"/applications/{APPLICATION_ID}/guilds/{GUILD_ID}/commands"
    assert put.json == []
    assert "Removed this server's copies of the commands (0 left)" in ex.content


async def test_sync_guild_scope_in_a_dm_explains(harness):
    h = harness
    start = len(h.requests)
    ex = await h.run_command("admin", {"scope": "guild"}, subcommand="sync", user=h.owner, guild=False)
    assert ex.callback_type == 4 and ex.ephemeral
    assert "works on a server" in ex.content
    assert guild_command_puts(h, start) == []


# -- /admin reindex ----------------------------------------------------------------------------------


async def test_reindex_reports_the_diff_and_saved_papers_leaving_and_returning(harness, tmp_path):
    h = harness
    engine = h.bot.engine
    full = {p.id for p in engine.index.papers}
    smaller = one_file_corpus(tmp_path, 0)
    # A paper of the second file: it leaves the corpus with the reindex.
    first_file = SEED_FILES[0].read_text(encoding="utf-8")
    leaving = next(p for p in engine.index.papers if p.abstract[:200] not in first_file)
    await h.run_command("save", {"id": leaving.id, "note": "keep this"})

    ex = await reindex(h, smaller)
    assert ex.callback_type == 5 and ex.ephemeral
    assert ex.content == "✅ Reindex complete."
    kept = {p.id for p in engine.index.papers}
    assert kept < full and leaving.id not in kept
    embed = ex.embeds[0]
    assert f"now serving {len(kept)} papers" in embed["title"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Papers"] == (
        f"+0 added · −{len(full - kept)} removed · {len(kept)} unchanged\n"
        f"{len(kept)} blocks read from 1 file: {len(kept)} papers loaded, 0 duplicates, 0 skipped"
    )
    assert f"`{leaving.id}`" in fields["Removed"] or "more" in fields["Removed"]
    # The first removed papers are named by title, from the index that served them.
    removed = sorted(full - kept, key=lambda pid: list(full).index(pid))
    first = fields["Removed"].splitlines()[0]
    assert first.startswith("• *") and first.endswith("`)")
    assert fields["Removed"].count("• *") == 3
    # The engine's reconcile result names the saved paper that left, with its title.
    title = render.title(leaving.title, 90)
    assert fields["Saved papers"].startswith(
        f"1 left the corpus (kept in users' lists, marked):\n• *{title}* (`{leaving.id}`)"
    )
    assert removed
    assert "1 saved paper in all is not in the corpus now." in fields["Saved papers"]
    # Every progress edit went to the same (deferred) original response.
    edits = [r for r in ex.requests if r.method == "PATCH"]
    assert edits and all(r.path.endswith("/messages/@original") for r in edits)
    assert "Reindexing" in edits[0].json["content"]

    saved = await h.run_command("saved")
    [item] = saved.embeds[0]["fields"]
    assert "⚠ no longer in the corpus" in item["value"] and "keep this" in item["value"]
    assert discord.utils.escape_markdown(leaving.authors[0]) in item["value"]  # from the snapshot
    search = await h.run_command("paper", {"id": leaving.id})
    assert "no paper with id" in search.content  # the live corpus no longer has it

    back = await reindex(h, CORPUS)
    fields = {f["name"]: f["value"] for f in back.embeds[0]["fields"]}
    assert fields["Papers"].startswith(f"+{len(full - kept)} added · −0 removed")
    assert fields["Saved papers"].startswith(f"1 is back in the corpus:\n• *{title}* (`{leaving.id}`)")
    assert fields["Added"].count("• *") == 3
    assert "left the corpus" not in fields["Saved papers"]
    saved = await h.run_command("saved")
    assert "no longer in the corpus" not in saved.embeds[0]["fields"][0]["value"]


async def test_reindex_swaps_while_a_search_is_served(harness, tmp_path, monkeypatch):
    h = harness
    engine = h.bot.engine
    old_index = engine.index
    old_ids = [hit.paper.id for hit in old_index.search("learning", 5).hits]
    smaller = one_file_corpus(tmp_path, 0)
    real_open_index = engine_module.open_index
    entered, release = threading.Event(), threading.Event()

    def held_open_index(*args, **kwargs):
        entered.set()
        if not release.wait(20):
            raise TimeoutError("the test never released the reindex")
        return real_open_index(*args, **kwargs)

    monkeypatch.setattr(engine_module, "open_index", held_open_index)
    pending = asyncio.create_task(reindex(h, smaller))
    try:
        for _ in range(500):
            if entered.is_set():
                break
            await asyncio.sleep(0.01)
        assert entered.is_set() and engine.reindexing

        # The loop keeps serving from the old index while the build runs in its thread.
        during = await h.run_command("search", {"query": "learning", "limit": 5})
        assert during.callback_type == 4
        shown = [f["value"].strip("`") for e in during.embeds for f in e["fields"] if f["name"] == "ID"]
        assert shown == old_ids
        stats = await h.run_command("admin", subcommand="stats", user=h.owner)
        assert "reindexing now" in stats.text
        second = await reindex(h)
        assert second.callback_type == 4 and second.ephemeral
        assert "already running" in second.content
        assert not pending.done()
    finally:
        release.set()
    done = await pending
    assert done.content == "✅ Reindex complete."
    assert engine.index is not old_index and not engine.reindexing
    new_ids = {p.id for p in engine.index.papers}
    after = await h.run_command("search", {"query": "learning", "limit": 10})
    shown = [f["value"].strip("`") for e in after.embeds for f in e["fields"] if f["name"] == "ID"]
    assert shown and set(shown) <= new_ids
    assert shown == [hit.paper.id for hit in engine.index.search("learning", 10).hits]


@pytest.mark.parametrize("kind", ["missing", "empty"])
async def test_failed_reindex_keeps_the_old_index(harness, tmp_path, kind):
    h = harness
    engine = h.bot.engine
    old_index, old_report = engine.index, engine.report
    if kind == "missing":
        path = tmp_path / "does-not-exist"
    else:
        path = tmp_path / "empty"
        path.mkdir()
        (path / "nothing.txt").write_text("", encoding="utf-8")
    ex = await reindex(h, path)
    assert ex.callback_type == 5 and ex.ephemeral
    assert ex.content.startswith("❌ Reindex failed, the previous index is still serving:")
    assert f"Still serving {len(old_index)} papers" in ex.content
    assert ex.embeds == []
    assert engine.index is old_index and engine.report is old_report and not engine.reindexing
    search = await h.run_command("search", {"query": "learning"})
    assert search.callback_type == 4 and search.embeds
    again = await reindex(h)  # a failure does not leave the lock taken
    assert again.content == "✅ Reindex complete."


async def test_reindex_lists_skipped_blocks_and_duplicates(harness, monkeypatch):
    h = harness
    real_open_index = engine_module.open_index
    skipped = tuple(SkippedBlock(f"corpus/part{i}.txt", 10 * i + 1, "no abstract") for i in range(13))
    details = tuple(f"corpus/a.txt:{i}: same as abc{i}" for i in range(3))

    def noisy(*args, **kwargs):
        index, report = real_open_index(*args, **kwargs)
        return index, dataclasses.replace(report, skipped=skipped, duplicates=3, duplicate_details=details)

    monkeypatch.setattr(engine_module, "open_index", noisy)
    ex = await reindex(h)
    fields = {f["name"]: f["value"] for f in ex.embeds[0]["fields"]}
    lines = fields["Skipped blocks: 13"].split("\n")
    assert lines[0] == "• corpus/part0.txt:1: no abstract"
    assert len(lines) == 11 and lines[-1] == "+3 more on the next pages"
    assert fields["Duplicates dropped: 3"].count("same as") == 3


def broken_corpus(tmp_path, blocks: int = 40):
    """The bundled corpus in a folder ~90 characters deep, plus ``broken.txt``: one paper, then
    ``blocks`` stray abstracts, each skipped with a reason of ~150 characters."""
    folder = tmp_path / ("a-corpus-folder-with-a-long-name-" * 2) / "corpus"
    folder.mkdir(parents=True)
    for f in SEED_FILES:
        shutil.copy(f, folder / f.name)
    paper = "Theory\nAda Lovelace, Alan Turing\nAn abstract of a fine paper on networks and their ways.\n\n"
    stray = "We prove a bound on the generalisation error of wide networks trained by SGD in this work.\n\n"
    (folder / "broken.txt").write_text(paper + stray * blocks, encoding="utf-8")
    return folder


async def test_reindex_report_names_files_in_the_corpus_and_keeps_reasons_whole(harness, tmp_path):
    """Issue 30 item 2: each skipped block is shown as ``broken.txt:5: reason``, the path relative to
    the corpus folder (named once, in the description) and the reason whole; the list is paged."""
    from retrieval.corpus import load_corpus

    h = harness
    folder = broken_corpus(tmp_path)
    expected = [f"broken.txt:{s.line}: {s.reason}" for s in load_corpus(folder).skipped]
    assert len(expected) == 40 and all(len(line) > 100 for line in expected)
    ex = await reindex(h, folder)
    (summary,) = ex.embeds
    assert str(folder) in summary["description"]
    fields = {f["name"]: f["value"] for f in summary["fields"]}
    shown = fields["Skipped blocks: 40"].split("\n")
    assert shown[-1].startswith("+") and shown[-1].endswith("more on the next pages")
    seen = [line.removeprefix("• ").replace("\\", "") for line in shown[:-1]]
    assert seen and seen == expected[: len(seen)]  # whole, in order, no folder in front
    pages = [summary]
    message = ex.message
    while True:
        buttons = {c.get("label"): c for c in ex.components_flat(message)}
        if buttons["Next ▶"].get("disabled"):
            break
        ex = await h.click(message, buttons["Next ▶"]["custom_id"], user=h.owner)
        assert ex.callback_type == 7 and ex.ephemeral is not False
        message = ex.message
        pages += ex.embeds
    assert f"{len(pages)}/{len(pages)}" in buttons and len(pages) >= 3
    later = [
        line.removeprefix("• ").replace("\\", "")
        for page in pages[1:]
        for line in page["description"].split("\n")
    ]
    assert seen + later == expected  # every skipped block once, whole, across the pages
    for page in pages:  # (every request is also checked against Discord's limits after the test)
        assert len(page.get("description", "")) <= 4096
        assert all(len(f["value"]) <= 1024 for f in page.get("fields", []))


@pytest.mark.product_intervals
async def test_reindex_progress_edits_are_throttled(harness, monkeypatch):
    h = harness
    real_open_index = engine_module.open_index
    received: dict[int, float] = {}
    original_route = h.fake._route

    def timed_route(record):
        received[id(record)] = time.monotonic()
        return original_route(record)

    monkeypatch.setattr(h.fake, "_route", timed_route)

    def chatty(*args, progress=None, **kwargs):
        for i in range(40):  # 40 updates in ~2 s
            progress("tokenize", i, 40)
            time.sleep(0.05)
        return real_open_index(*args, progress=progress, **kwargs)

    monkeypatch.setattr(engine_module, "open_index", chatty)
    ex = await reindex(h)
    edits = [r for r in ex.requests if r.method == "PATCH"]
    times = [received[id(r)] for r in edits]
    assert 3 <= len(edits) <= 6, len(edits)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= admin_module.PROGRESS_EDIT_INTERVAL * 0.9, gaps
    assert any("Tokenizing" in (r.json.get("content") or "") for r in edits)
    assert edits[-1].json["content"] == "✅ Reindex complete."


async def test_a_plain_reindex_and_a_restart_both_serve_the_configured_corpus(make_harness, tmp_path):
    # The rule (README, "Which corpus is served"): CORPUS_PATH at start and for a plain reindex;
    # path: serves another corpus only until then.
    h = await make_harness()
    full = len(h.bot.engine)
    smaller = one_file_corpus(tmp_path, 0)
    other = await reindex(h, smaller)
    assert len(h.bot.engine) < full
    assert "served until the next plain /admin reindex or a restart" in other.embeds[0]["description"]
    plain = await reindex(h)
    assert len(h.bot.engine) == full and str(h.bot.engine.corpus_path) == str(CORPUS)
    assert "until the next plain" not in plain.embeds[0]["description"]
    await reindex(h, smaller)
    await h.close()
    restarted = await make_harness()
    assert len(restarted.bot.engine) == full and str(restarted.bot.engine.corpus_path) == str(CORPUS)
